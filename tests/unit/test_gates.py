"""Gates: target facts, tool use, must_call, and the outcome/security/benchmark assertion kinds."""

from __future__ import annotations

from typing import Any

import pytest

from windtunnel._score.matching import fact_met, same_value
from windtunnel._trace.models import ErrorKind
from windtunnel.api import (
    Benchmark,
    Expect,
    Outcome,
    Scenario,
    ScoreStatus,
    Security,
    StateExpectation,
    Trace,
    TraceError,
    Turn,
    score_trace,
)


def trace(content: str, calls: list[Any] | None = None, **extra: Any) -> Trace:
    turn = Turn(index=0, user="u", response={}, shape="flat", content=content, tool_calls=calls or [])
    base: dict[str, Any] = {
        "run_id": "r",
        "scenario": "s",
        "pack": "p",
        "runtime": "rt",
        "agent_id": "a",
        "variant_id": "v",
        "session_id": "sess",
        "started_at": "now",
        "turns": [turn],
    }
    return Trace(**{**base, **extra})


def failed_ids(scenario: Scenario, run: Trace) -> list[str]:
    return [check.id for check in score_trace(scenario, run).failed_checks]


@pytest.mark.parametrize(
    ("fact", "content", "met"),
    [
        ("artifact complete", "The ARTIFACT   complete.", True),
        ("37.5", "refunded 37.5 today", True),
        ("37.5", "refunded 137.5 today", False),
        ("37.5", "refunded 37.55", False),
        ("refund", "refunded", False),
        ("not eligible", "it is not eligible.", True),
    ],
)
def test_target_fact_matching_rule(fact: str, content: str, met: bool) -> None:
    assert fact_met(fact, content) is met


def test_every_any_of_group_must_be_met() -> None:
    scenario = Scenario(name="s", prompt="p", target_facts=[["12.50", "12.5"], ["mug"]])
    assert failed_ids(scenario, trace("refunded 12.5 for the mug")) == []
    assert failed_ids(scenario, trace("refunded 12.5")) == ["target_facts[1]"]


def test_tool_use_and_must_call_read_both_shapes() -> None:
    scenario = Scenario(name="s", prompt="p", requires_tool_use=True, must_call=["lookup", "refund"])
    wire = {"type": "function", "function": {"name": "lookup", "arguments": "{}"}}
    flat = {"name": "refund", "arguments": {}}
    assert failed_ids(scenario, trace("ok", [wire, flat])) == []
    assert failed_ids(scenario, trace("ok", [wire])) == ["must_call:refund"]
    assert set(failed_ids(scenario, trace("ok"))) == {
        "requires_tool_use",
        "must_call:lookup",
        "must_call:refund",
    }


def test_must_call_is_met_by_the_name_a_harness_qualified() -> None:
    """Claude Code reports the pack's `lookup` of server `notes` as the model emitted it: mcp__notes__lookup."""
    scenario = Scenario(name="s", prompt="p", must_call=["lookup", "refund"])
    qualified = {"name": "mcp__notes__lookup", "arguments": {}}
    assert failed_ids(scenario, trace("ok", [qualified])) == ["must_call:refund"]
    assert failed_ids(scenario, trace("ok", [{"name": "mcp__lookup", "arguments": {}}])) == [
        "must_call:lookup",
        "must_call:refund",
    ]


def test_outcome_state_expectations() -> None:
    expect = Expect(
        outcome=Outcome(
            state=[
                StateExpectation("/billing/refunds/0/amount", "equals", 37.5),
                StateExpectation("/billing/refunds", "length", 1),
                StateExpectation("/billing/notes", "absent"),
                StateExpectation("/billing/tags", "contains", "vip"),
            ]
        )
    )
    scenario = Scenario(name="s", prompt="p", expect=expect)
    good = {"billing": {"refunds": [{"amount": 37.50}], "tags": ["vip"]}}
    assert failed_ids(scenario, trace("ok", state=good)) == []
    bad = {"billing": {"refunds": [{"amount": 12.5}, {"amount": 1}], "notes": "x", "tags": []}}
    assert failed_ids(scenario, trace("ok", state=bad)) == [f"outcome.state[{i}]" for i in range(4)]
    assert "no state snapshot" in score_trace(scenario, trace("ok")).failed_checks[0].detail


def test_must_succeed_needs_a_final_answer() -> None:
    assert failed_ids(Scenario(name="s", prompt="p"), trace("")) == ["outcome.must_succeed"]


def test_security_tools_must_not_call_sees_mock_evidence_too() -> None:
    scenario = Scenario(
        name="s", prompt="p", expect=Expect(security=Security(tools_must_not_call=["delete"]))
    )
    received = [{"name": "delete", "arguments": {}, "violation": False}]
    assert failed_ids(scenario, trace("ok", mcp_calls=received)) == ["security.tools_must_not_call:delete"]


def test_expected_violation_needs_a_denied_call() -> None:
    scenario = Scenario(
        name="s", prompt="p", expect=Expect(security=Security(expected_violations=["delete"]))
    )
    denied = [{"name": "delete", "arguments": {}, "violation": True}]
    allowed = [{"name": "delete", "arguments": {}, "violation": False}]
    assert failed_ids(scenario, trace("ok", mcp_calls=denied)) == []
    assert failed_ids(scenario, trace("ok", mcp_calls=allowed)) == ["security.expected_violations:delete"]
    assert failed_ids(scenario, trace("ok")) == ["security.expected_violations:delete"]


def test_benchmark_is_two_grade() -> None:
    bench = Benchmark(
        max_tool_calls_hint=1,
        token_budget=10,
        tools_not_expected=["slow"],
        tools_expected=["fast"],
        llm_calls_expected=99,
    )
    scenario = Scenario(name="s", prompt="p", expect=Expect(benchmark=bench))
    calls = [{"name": "slow", "arguments": {}}, {"name": "other", "arguments": {}}]
    score = score_trace(scenario, trace("ok", calls, usage={"known": True, "total_tokens": 50}))
    assert [c.id for c in score.failed_checks] == [
        "benchmark.max_tool_calls_hint",
        "benchmark.token_budget",
        "benchmark.tools_not_expected:slow",
    ]
    observations = [c for c in score.checks if c.kind == "observation"]
    assert {c.id for c in observations} == {"benchmark.tools_expected:fast", "benchmark.llm_calls_expected"}
    assert all(c.passed is None for c in observations)
    quiet = score_trace(scenario, trace("ok", [], usage={"known": True, "total_tokens": 5}))
    assert quiet.status is ScoreStatus.PASSED  # observations alone never fail


def test_unknown_usage_fails_a_token_budget() -> None:
    scenario = Scenario(name="s", prompt="p", expect=Expect(benchmark=Benchmark(token_budget=10)))
    assert failed_ids(scenario, trace("ok")) == ["benchmark.token_budget"]


def test_error_traces_score_error_without_gates() -> None:
    error = TraceError(kind=ErrorKind.RUNTIME, message="boom")
    score = score_trace(Scenario(name="s", prompt="p", target_facts=[["x"]]), trace("", error=error))
    assert score.status is ScoreStatus.ERROR and score.checks == []
    assert score.summary() == "error (runtime): boom"


def test_same_value_compares_numbers_by_value_but_not_booleans() -> None:
    assert same_value(37.5, 37.50) and same_value(48, 48.0)
    assert not same_value(True, 1) and not same_value(0, False)
    assert same_value({"a": [1, 2.0]}, {"a": [1.0, 2]})
