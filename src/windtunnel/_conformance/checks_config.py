"""Checks on configuration: sampling and the other declared config fields reach the model, and config a
runtime cannot honour raises."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from windtunnel._conformance.model import CheckFailed, declared_not_handled
from windtunnel._conformance.subject import Subject, TurnRecord, call, say, tools
from windtunnel._core.agent_runtime import AgentConfig, ModelSpec, SamplingConfig
from windtunnel._runner.lifecycle import provisioned
from windtunnel._runtimes.manifest import CONFIG_FIELDS
from windtunnel._trace.shapes import offered_tool_names, said
from windtunnel._wire.registry import dialect_of
from windtunnel._wire.tools import bare
from windtunnel.errors import UnsupportedConfigError

# Every value differs from what an SDK or model sends when nothing is configured (temperature 1, top_p
# 1, no max_tokens, tool_choice "auto"), so a runtime that hard-codes or drops a knob cannot pass. The
# first set runs twice (temperature 0: the two traces must agree), the second once with other values.
DETERMINISTIC: dict[str, Any] = {
    "temperature": 0.0,
    "top_p": 0.37,
    "max_tokens": 321,
    "tool_choice": "required",
}
VARIED: dict[str, Any] = {"temperature": 0.73, "top_p": 0.61, "max_tokens": 123, "tool_choice": "auto"}
SAMPLING_RUNS: tuple[dict[str, Any], ...] = (DETERMINISTIC, DETERMINISTIC, VARIED)
SAMPLING_FIELDS = tuple(f"sampling.{key}" for key in DETERMINISTIC)
"""The AgentConfig fields the sampling check measures; each must be declared supported or unsupported."""
WANTED = DETERMINISTIC
"""The kit's main sampling config (the stage plan foresees a runtime provisioned with it)."""


def honoured(subject: Subject, values: dict[str, Any]) -> dict[str, Any]:
    """The sampling values whose field the runtime declares it honours (all, when it declares nothing)."""
    if subject.supported is None:
        return dict(values)
    return {key: value for key, value in values.items() if f"sampling.{key}" in subject.supported}


def _sampling(subject: Subject) -> dict[str, Any]:
    """The main sampling config as far as the runtime honours it (what a stage plan foresees today)."""
    return honoured(subject, WANTED)


def kit_configs(supported: frozenset[str]) -> list[AgentConfig]:
    """Every config beside the default one that the kit provisions a runtime declaring `supported` with
    (the refusal probes aside): a stage plan that starts runtimes ahead of time must foresee them."""
    configs = []
    for values in (DETERMINISTIC, VARIED):
        chosen = {key: value for key, value in values.items() if f"sampling.{key}" in supported}
        if chosen:
            configs.append(AgentConfig(sampling=SamplingConfig(**chosen)))
    declared = {field: value for field, value in DECLARED.items() if field in supported}
    if declared:
        configs.append(_declared_config(declared))
    return configs


def _normalised(turn: Any) -> str:
    """A turn's content, calls and prompts with the per-request call ids replaced by their position."""
    text = json.dumps(
        {
            "content": turn.read.content,
            "calls": turn.read.tool_calls,
            "prompts": [r.get("messages") for r in turn.requests or []],
        },
        sort_keys=True,
    )
    # Tool-call ids of every dialect: chat and Responses call_..., Anthropic toolu_..., Responses items fc_...
    ids = list(dict.fromkeys(re.findall(r"(?:call|toolu|fc)_[A-Za-z0-9_]+", text)))
    for position, identifier in enumerate(ids):
        text = text.replace(identifier, f"call#{position}")
    return text


def _missing(wanted: dict[str, Any], seen: list[dict[str, Any]]) -> str | None:
    """The first configured value that did not reach every model call exactly, named."""
    for key, value in wanted.items():
        names = ("max_tokens", "max_completion_tokens") if key == "max_tokens" else (key,)
        wrong = [i for i, s in enumerate(seen) if not any(name in s and s[name] == value for name in names)]
        if wrong or not seen:
            found = [next((s[name] for name in names if name in s), None) for s in seen]
            return (
                f"sampling.{key}={value!r} did not reach the model on every call: model call(s) {wrong} of "
                f"{len(seen)} differ (sent, call by call: {found})"
            )
    return None


def sampling(subject: Subject) -> dict[str, Any]:
    """The gateway sees the configured temperature, top_p, max_tokens and tool_choice exactly, on every
    model call of every turn (a follow-up after a tool result, a later turn), for two different configs;
    and temperature 0 twice gives identical traces. A field the runtime declares in `[config] unsupported`
    is not measured: the check is INFO with its reason once the rest held, never PASSED."""
    declared = {f: subject.unsupported[f] for f in SAMPLING_FIELDS if f in subject.unsupported}
    supported = subject.supported
    undeclared = [] if supported is None else [f for f in SAMPLING_FIELDS if f not in {*supported, *declared}]
    if undeclared:
        where = subject.manifest or "its runtime.toml"
        raise CheckFailed(
            f"{subject.name} declares {', '.join(undeclared)} neither supported nor unsupported: in {where}, "
            f'add each to [config] supported if its model calls carry it (e.g. supported = [..., "{undeclared[0]}"]'
            f" and pass WT_SAMPLING on), else to [config] unsupported with the reason it cannot (e.g. "
            f'unsupported = {{ "{undeclared[0]}" = "why" }})',
            {"declared": sorted(supported or ()), "unsupported": declared},
        )
    plans = [honoured(subject, values) for values in SAMPLING_RUNS]
    if not plans[0]:  # every sampling field declared unsupported (undeclared ones failed above)
        declared_not_handled("[config] unsupported", declared, {"measured": []})
    runs: list[TurnRecord] = []
    evidence: dict[str, Any] = {"runs": []}
    for number, wanted in enumerate(plans):
        config = AgentConfig(sampling=SamplingConfig(**wanted))
        script = [tools(call("lookup", key="alpha")), say("Read it."), say("Still read.")]
        with subject.scripted(script, config) as session:
            subject.needs_model_evidence(session)
            turn = session.turn("Read note alpha.")
            # The last run has a later turn too: knobs set once and lost after the first turn are caught.
            later = session.turn("And once more?") if number == len(plans) - 1 else None
        runs.append(turn)
        requests = [*(turn.requests or []), *((later.requests or []) if later else [])]
        # Each call's sampling read in its dialect (Responses' max_output_tokens is max_tokens, ...).
        seen = [dialect_of(r).neutral_sampling(r.get("sampling") or {}) for r in requests]
        evidence["runs"].append({"configured": wanted, "seen": seen})
        problem = _missing(wanted, seen)
        if problem is not None:
            raise CheckFailed(problem, evidence)
    first, second = (_normalised(turn) for turn in runs[:2])
    if first != second:
        raise CheckFailed(
            "temperature 0 twice gave different traces", {**evidence, "first": first, "second": second}
        )
    # What it honours held; what it declares it cannot is INFO with the reason, never PASSED.
    declared_not_handled("[config] unsupported", declared, {**evidence, "measured": sorted(plans[0])})
    return evidence


KIT_TOOLS = ("lookup", "store", "echo", "read_document", "pause")
# Fixed (a stage plan must foresee the config), yet nothing a runtime would send by default.
DECLARED = {
    "system_prompt": "You are conformance probe KESTREL-7Q. Follow the user's instructions exactly.",
    "model.name": "wt-probe-model-kestrel-7q",
}


def _declared_config(declared: dict[str, str]) -> AgentConfig:
    model = declared.get("model.name")
    return AgentConfig(system_prompt=declared.get("system_prompt"), model=ModelSpec(model) if model else None)


def _declared(subject: Subject) -> dict[str, str]:
    """The config fields this check can see at the gateway that the runtime takes."""
    if subject.supported is not None:
        return {field: value for field, value in DECLARED.items() if field in subject.supported}
    return {field: value for field, value in DECLARED.items() if _accepts(subject, field, value)}


def _accepts(subject: Subject, field: str, value: str) -> bool:
    return _provision_outcome(subject, _declared_config({field: value})) == "accepted silently"


def config_reaches_model(subject: Subject) -> dict[str, Any]:
    """Declared config reaches the model on every call, also on a later turn: the configured system prompt
    is among the messages, the configured model is the request's model, the MCP servers' tools are offered."""
    declared = _declared(subject)
    prompt, model = declared.get("system_prompt"), declared.get("model.name")
    script = [tools(call("lookup", key="alpha")), say("First answer."), say("Second answer.")]
    with subject.scripted(script, _declared_config(declared)) as session:
        subject.needs_model_evidence(session)
        session.turn("Read note alpha.", "wt-kit-config")
        session.turn("Answer once more.", "wt-kit-config")
        requests = [r for turn in session.turns for r in turn.requests or []]
    evidence: dict[str, Any] = {"declared": declared, "model_calls": len(requests)}
    if not requests:
        raise CheckFailed("the gateway saw no model call for the two turns", evidence)
    for position, request in enumerate(requests):
        problem = _config_problem(request, prompt, model)
        if problem is not None:
            raise CheckFailed(f"model call {position}: {problem}", {**evidence, "request": request})
    return {**evidence, "models": sorted({str(r.get("model")) for r in requests})}


def _config_problem(request: dict[str, Any], prompt: str | None, model: str | None) -> str | None:
    instructions = [item.text for item in said(request) if item.role == "system"]
    if prompt is not None and not any(prompt in text for text in instructions):
        return f"the configured system_prompt {prompt!r} is in no system message (sent: {instructions})"
    if model is not None and request.get("model") != model:
        return f"the request's model is {request.get('model')!r}, the configured model.name is {model!r}"
    missing = sorted(set(KIT_TOOLS) - {bare(name) for name in offered_tool_names(request)})
    if missing:
        return f"the configured MCP servers' tools {missing} were not offered to the model"
    return None


PROBES: dict[str, AgentConfig] = {
    "system_prompt": AgentConfig(system_prompt="You are a conformance probe."),
    "persona_doc": AgentConfig(persona_doc=Path("AGENTS.md")),
    "skills": AgentConfig(skills=(Path("skills/probe.md"),)),
    "model.name": AgentConfig(model=ModelSpec("wt-conformance-model")),
    "model.quant": AgentConfig(model=ModelSpec("wt-conformance-model", quant="q4_k_m")),
    "sampling.temperature": AgentConfig(sampling=SamplingConfig(temperature=0.3)),
    "sampling.top_p": AgentConfig(sampling=SamplingConfig(top_p=0.3)),
    "sampling.tool_choice": AgentConfig(sampling=SamplingConfig(tool_choice="required")),
    "sampling.max_tokens": AgentConfig(sampling=SamplingConfig(max_tokens=33)),
}
UNKNOWN_EXTENSION = AgentConfig(extensions={"wt.conformance/unknown-setting": True})


def unsupported_config(subject: Subject) -> dict[str, Any]:
    """Config fields a runtime cannot honour raise UnsupportedConfigError instead of being ignored; an
    unknown extension always raises."""
    supported = subject.supported or frozenset()
    probes = {f: c for f, c in PROBES.items() if f not in supported and f in CONFIG_FIELDS}
    probes["extensions"] = UNKNOWN_EXTENSION
    outcomes: dict[str, str] = {}
    for name, config in probes.items():
        outcomes[name] = _provision_outcome(subject, config)
    ignored = [name for name, outcome in outcomes.items() if outcome != "raised UnsupportedConfigError"]
    if ignored:
        raise CheckFailed(
            f"provision() accepted config it cannot honour: {', '.join(ignored)}", {"outcomes": outcomes}
        )
    return {"supported": sorted(supported), "outcomes": outcomes}


def _provision_outcome(subject: Subject, config: AgentConfig) -> str:
    try:
        with provisioned(subject.runtime, config, runtime_name=subject.name):
            return "accepted silently"
    except UnsupportedConfigError:
        return "raised UnsupportedConfigError"
    except Exception as exc:  # noqa: BLE001 - any other exception is the finding
        return f"raised {type(exc).__name__}: {exc}"
