"""The sampling and declared-config checks' judgement of what the gateway logged."""

from __future__ import annotations

from typing import Any

from windtunnel._conformance.checks_config import (
    DECLARED,
    DETERMINISTIC,
    KIT_TOOLS,
    VARIED,
    _config_problem,
    _missing,
    kit_configs,
)

DEFAULTS = {"temperature": 1.0, "top_p": 1.0, "max_tokens": None, "tool_choice": "auto"}


def test_every_configured_value_differs_from_the_defaults_and_between_runs() -> None:
    for key, default in DEFAULTS.items():
        assert DETERMINISTIC[key] != default or VARIED[key] != default
        assert DETERMINISTIC[key] != VARIED[key]


def test_a_value_must_reach_every_call_exactly() -> None:
    exact = {**VARIED, "max_completion_tokens": VARIED["max_tokens"]}
    del exact["max_tokens"]
    assert _missing(VARIED, [exact, exact]) is None
    hardcoded = {**VARIED, "temperature": 0.0}
    assert "sampling.temperature=0.73 did not reach the model on every call: model call(s) [1] of 2" in (
        _missing(VARIED, [exact, hardcoded]) or ""
    )
    assert "sampling.tool_choice='required'" in (
        _missing(DETERMINISTIC, [{**DETERMINISTIC, "tool_choice": "auto"}]) or ""
    )
    assert _missing(VARIED, []) is not None


def _request(**changes: Any) -> dict[str, Any]:
    request: dict[str, Any] = {
        "model": DECLARED["model.name"],
        "messages": [
            {"role": "system", "content": DECLARED["system_prompt"] + " More."},
            {"role": "user", "content": "hi"},
        ],
        "tools": [{"type": "function", "function": {"name": name}} for name in KIT_TOOLS],
    }
    return {**request, **changes}


def test_declared_config_must_be_in_every_request() -> None:
    prompt, model = DECLARED["system_prompt"], DECLARED["model.name"]
    assert _config_problem(_request(), prompt, model) is None
    default_prompt = _request(messages=[{"role": "system", "content": "You are helpful."}])
    assert "system_prompt" in (_config_problem(default_prompt, prompt, model) or "")
    prompt_as_user = _request(messages=[{"role": "user", "content": prompt}])
    assert "system_prompt" in (_config_problem(prompt_as_user, prompt, model) or "")
    assert "model is 'gpt-4o'" in (_config_problem(_request(model="gpt-4o"), prompt, model) or "")
    assert "['pause']" in (_config_problem(_request(tools=_request()["tools"][:-1]), prompt, model) or "")
    assert _config_problem(_request(model="anything"), prompt, None) is None


def test_kit_configs_follow_what_the_runtime_declares() -> None:
    everything = frozenset({"sampling.temperature", "sampling.tool_choice", "system_prompt", "model.name"})
    configs = kit_configs(everything)
    assert [c.sampling.as_dict() for c in configs[:2]] == [
        {"temperature": 0.0, "tool_choice": "required"},
        {"temperature": 0.73, "tool_choice": "auto"},
    ]
    assert configs[2].system_prompt == DECLARED["system_prompt"] and configs[2].model is not None
    assert kit_configs(frozenset()) == []
