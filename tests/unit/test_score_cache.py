"""The prompt-cache-miss check (windtunnel._score.cache): per conversation, two grades, "not evaluated"
when usage is unknown. The acceptance runs go through the real http_inject runtime over real HTTP."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.contract_c_endpoint import MISSED_SECOND_CALL, serving
from windtunnel._drivers.http_inject import HttpInjectRuntime
from windtunnel._score.cache import prompt_cache_check, read_calls
from windtunnel._trace.models import ModelCall, Trace
from windtunnel.api import Benchmark, Expect, Scenario, run_scenario
from windtunnel.errors import ScenarioError


def call(conversation: str, prompt: int | None, cached: int | None) -> ModelCall:
    return ModelCall(
        conversation=conversation, prompt_tokens=prompt, cached_tokens=cached, completion_tokens=5
    )


def trace(calls: list[ModelCall] | None) -> Trace:
    return Trace(
        run_id="r",
        scenario="s",
        pack=None,
        runtime="t",
        agent_id="a",
        variant_id="v",
        session_id="s1",
        started_at="2026-01-01T00:00:00+00:00",
        model_calls=calls,
    )


def scenario(**bench: Any) -> Scenario:
    return Scenario(
        name="cached_answer",
        prompt="go",
        target_facts=[["done"]],
        expect=Expect(benchmark=Benchmark(**bench)),
    )


def test_the_first_call_of_each_conversation_is_never_judged() -> None:
    reading = read_calls([call("a", 1000, 0), call("b", 800, 0), call("a", 1200, 990), call("b", 900, 10)])
    assert [(s.index, s.conversation, s.prefix_tokens) for s in reading.judged] == [
        (2, "a", 1000),
        (3, "b", 800),
    ]
    assert reading.judged[0].ratio == pytest.approx(0.99) and reading.judged[1].ratio == pytest.approx(
        10 / 800
    )


def test_the_ratio_is_over_the_already_sent_prefix_so_a_grown_prompt_is_no_miss() -> None:
    """A tool result that quadruples the prompt leaves a perfect cache at ratio 1, not 0.25."""
    check = prompt_cache_check(trace([call("s1", 1000, 0), call("s1", 4000, 1000)]), 0.8, hard=True)
    assert check.passed is True and check.observed[0]["ratio"] == 1.0


def test_a_miss_fails_the_hard_threshold_naming_the_call_and_the_ratio() -> None:
    check = prompt_cache_check(trace([call("s1", 1000, 0), call("s1", 1500, 100)]), 0.8, hard=True)
    assert check.passed is False and check.evaluated and check.kind == "benchmark"
    assert "model_calls[1] (conversation s1)" in check.detail and "ratio 0.10" in check.detail
    assert "below 0.80" in check.detail


def test_the_advisory_grade_records_the_same_miss_and_never_fails() -> None:
    check = prompt_cache_check(trace([call("s1", 1000, 0), call("s1", 1500, 100)]), 0.8, hard=False)
    assert check.passed is None and check.kind == "observation"
    assert check.detail.startswith("advisory: prompt cache missed") and "ratio 0.10" in check.detail


@pytest.mark.parametrize(
    ("calls", "why"),
    [
        (None, "the runtime reported no usage"),
        ([call("s1", 1000, None), call("s1", 1100, None)], "model_calls[1] reported no cached_tokens"),
        ([call("s1", None, 0), call("s1", 1100, 1000)], "follows a call whose prompt size is unknown"),
        ([call("s1", 1000, 0), call("s2", 1100, 0)], "each was the first of its conversation"),
    ],
)
def test_unknown_usage_is_not_evaluated_never_passed_or_failed(
    calls: list[ModelCall] | None, why: str
) -> None:
    for hard in (True, False):
        check = prompt_cache_check(trace(calls), 0.8, hard=hard)
        assert check.passed is None and check.evaluated is False
        assert "not evaluated" in check.detail and why in check.detail


def test_a_known_miss_fails_even_when_other_calls_are_unknown() -> None:
    calls = [call("s1", 1000, 0), call("s1", 1100, 10), call("s1", 1200, None)]
    assert prompt_cache_check(trace(calls), 0.8, hard=True).passed is False


@pytest.mark.parametrize("share", [0, 1.5, -0.1, True, "0.8"])
def test_a_share_outside_0_to_1_is_refused_naming_the_field(share: object) -> None:
    with pytest.raises(ScenarioError, match="expected a share above 0 and at most 1") as caught:
        scenario(prompt_cache_min_share=share)
    assert caught.value.context["field"] == "expect.benchmark.prompt_cache_min_share"


def test_a_runtime_whose_second_call_misses_the_cache_is_flagged_with_the_ratio() -> None:
    with serving([MISSED_SECOND_CALL]) as (_, url):
        (result,) = run_scenario(
            HttpInjectRuntime(url, 5.0), scenario(prompt_cache_min_share=0.8), runtime_name="http_inject"
        )
    assert len(result.trace.model_calls or []) == 3
    check = next(c for c in result.score.checks if c.id == "benchmark.prompt_cache_min_share")
    assert check.passed is False
    assert "model_calls[1]" in check.detail and "100 of 1200 already-sent prompt tokens" in check.detail
    assert "ratio 0.08" in check.detail and "model_calls[2]" not in check.detail
    assert not result.score.passed and "prompt_cache_min_share" in result.score.summary()


def test_the_same_run_with_a_warm_cache_passes() -> None:
    """The control: the check passes a runtime whose cache works, so it fails only on a real miss."""
    calls = [
        {"prompt_tokens": 1200, "cached_tokens": 0, "completion_tokens": 40},
        {"prompt_tokens": 1500, "cached_tokens": 1150, "completion_tokens": 30},
        {"prompt_tokens": 1800, "cached_tokens": 1500, "completion_tokens": 20},
    ]
    warm = {**MISSED_SECOND_CALL, "usage": {**MISSED_SECOND_CALL["usage"], "calls": calls}}
    with serving([warm]) as (_, url):
        (result,) = run_scenario(HttpInjectRuntime(url, 5.0), scenario(prompt_cache_min_share=0.8))
    assert result.score.passed, result.score.summary()


def test_a_runtime_without_usage_is_reported_not_evaluated() -> None:
    with serving([{"content": "done", "tool_calls": []}]) as (_, url):
        (result,) = run_scenario(
            HttpInjectRuntime(url, 5.0), scenario(prompt_cache_min_share=0.8, prompt_cache_expected_share=0.9)
        )
    checks = {c.id: c for c in result.score.checks}
    for name in ("benchmark.prompt_cache_min_share", "benchmark.prompt_cache_expected_share"):
        assert checks[name].evaluated is False and checks[name].passed is None
        assert "not evaluated: the runtime reported no usage" in checks[name].detail
    assert result.score.passed  # not evaluated is no failure, and the gate itself was met
