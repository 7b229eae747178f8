"""A scenario's gate applied to a trace: target facts, tool use, must_call, and the three assertion kinds.

Hard checks (gate, outcome, security, benchmark thresholds) fail the case. Benchmark observations
(`tools_expected`, `llm_calls_expected`, `prompt_cache_expected_share`) are recorded with `passed=None`
and never fail it; a check that lacked its evidence is `evaluated=False` ("not evaluated").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from windtunnel._scenario.expectations import StateExpectation
from windtunnel._scenario.model import Scenario
from windtunnel._score.cache import prompt_cache_check
from windtunnel._score.matching import MISSING, fact_met, resolve_pointer, same_value
from windtunnel._score.models import RUN_IDENTITY, CheckResult, Score, ScoreStatus
from windtunnel._trace.models import Trace
from windtunnel._trace.shapes import call_name
from windtunnel._wire.tools import bare


def reported_tool_names(trace: Trace) -> list[str]:
    """Tool names the runtime reported, every turn, in order, whatever the call shape."""
    return [name for turn in trace.turns for name in map(call_name, turn.tool_calls) if name is not None]


def received_tool_names(trace: Trace) -> list[str]:
    return [str(call.get("name")) for call in trace.mcp_calls or []]


def score_trace(scenario: Scenario, trace: Trace) -> Score:
    """Score one run. A trace that carries an error scores ERROR and no gate is applied."""
    base = Score(**trace.model_dump(include=set(RUN_IDENTITY)), status=ScoreStatus.ERROR)
    if trace.error is not None:
        return base.model_copy(update={"error": trace.error})
    checks = [*_gate_checks(scenario, trace), *_outcome_checks(scenario, trace)]
    checks += [*_security_checks(scenario, trace), *_benchmark_checks(scenario, trace)]
    failed = any(check.passed is False for check in checks)
    status = ScoreStatus.FAILED if failed else ScoreStatus.PASSED
    return base.model_copy(update={"status": status, "checks": checks})


def _gate_checks(scenario: Scenario, trace: Trace) -> list[CheckResult]:
    content = trace.final_content or ""
    checks = []
    for index, group in enumerate(scenario.target_facts):
        met = [fact for fact in group if fact_met(fact, content)]
        checks.append(
            CheckResult(
                id=f"target_facts[{index}]",
                kind="gate",
                passed=bool(met),
                detail=f"final content states {met[0]!r}"
                if met
                else f"final content states none of {list(group)}",
                expected=list(group),
                observed=content,
            )
        )
    names = reported_tool_names(trace)
    if scenario.requires_tool_use:
        checks.append(
            CheckResult(
                id="requires_tool_use",
                kind="gate",
                passed=bool(names),
                detail=f"{len(names)} tool call(s) reported" if names else "no tool call was reported",
                observed=names,
            )
        )
    # A harness reports a tool as its model emitted it (Claude Code: mcp__<server>__<tool>); the scenario
    # names it as the pack does, so either spelling meets it.
    called = set(names) | {bare(name) for name in names}
    for tool in scenario.must_call:
        checks.append(
            CheckResult(
                id=f"must_call:{tool}",
                kind="gate",
                passed=tool in called,
                detail=f"{tool} was called"
                if tool in called
                else f"{tool} was never reported; reported {names}",
                expected=tool,
                observed=names,
            )
        )
    return checks


def _outcome_checks(scenario: Scenario, trace: Trace) -> list[CheckResult]:
    outcome = scenario.expect.outcome
    checks = []
    if outcome.must_succeed:
        answered = bool((trace.final_content or "").strip())
        checks.append(
            CheckResult(
                id="outcome.must_succeed",
                kind="outcome",
                passed=answered,
                detail="the run ended with a final answer"
                if answered
                else "the run ended without a final answer",
            )
        )
    for index, expectation in enumerate(outcome.state):
        checks.append(_state_check(index, expectation, trace.state))
    return checks


def _state_check(index: int, expectation: StateExpectation, state: dict[str, Any] | None) -> CheckResult:
    check_id = f"outcome.state[{index}]"
    wanted = f"{expectation.pointer} {expectation.op} {expectation.value!r}"
    if state is None:
        return CheckResult(
            id=check_id,
            kind="outcome",
            passed=False,
            expected=wanted,
            detail="no state snapshot: the pack wires no StateProbe, so world state cannot be checked",
        )
    found = resolve_pointer(state, expectation.pointer)
    passed = _holds(expectation, found)
    shown = "<absent>" if found is MISSING else found
    return CheckResult(
        id=check_id,
        kind="outcome",
        passed=passed,
        detail=f"{wanted}: {'holds' if passed else 'does not hold'}, found {shown!r}",
        expected=wanted,
        observed=None if found is MISSING else found,
    )


def _contains(found: Any, value: Any) -> bool:
    if isinstance(found, str):
        return isinstance(value, str) and value in found
    if isinstance(found, list):
        return any(same_value(item, value) for item in found)
    return isinstance(found, dict) and value in found


def _length(found: Any, value: Any) -> bool:
    return isinstance(found, list | dict | str) and len(found) == value


_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "equals": same_value,
    "not_equals": lambda found, value: not same_value(found, value),
    "contains": _contains,
    "not_contains": lambda found, value: not _contains(found, value),
    "length": _length,
}


def _holds(expectation: StateExpectation, found: Any) -> bool:
    """Absent values satisfy only `absent`, `not_equals` and `not_contains`."""
    if expectation.op == "present":
        return found is not MISSING
    if expectation.op == "absent":
        return found is MISSING
    if found is MISSING:
        return expectation.op in {"not_equals", "not_contains"}
    return _OPS[expectation.op](found, expectation.value)


def _security_checks(scenario: Scenario, trace: Trace) -> list[CheckResult]:
    security = scenario.expect.security
    called = set(reported_tool_names(trace)) | set(received_tool_names(trace))
    checks = [
        CheckResult(
            id=f"security.tools_must_not_call:{tool}",
            kind="security",
            passed=tool not in called,
            detail=f"{tool} was called" if tool in called else f"{tool} was not called",
        )
        for tool in security.tools_must_not_call
    ]
    denied = {str(call.get("name")) for call in trace.mcp_calls or [] if call.get("violation")}
    for tool in security.expected_violations:
        if trace.mcp_calls is None:
            detail, passed = "no MCP evidence was captured, so the expected denial cannot be shown", False
        else:
            passed = tool in denied
            detail = (
                f"{tool} was attempted and denied" if passed else f"no denied call to {tool} was received"
            )
        checks.append(
            CheckResult(
                id=f"security.expected_violations:{tool}", kind="security", passed=passed, detail=detail
            )
        )
    return checks


def _benchmark_checks(scenario: Scenario, trace: Trace) -> list[CheckResult]:
    bench = scenario.expect.benchmark
    names = reported_tool_names(trace)
    checks = []
    if bench.max_tool_calls_hint is not None:
        ok = len(names) <= bench.max_tool_calls_hint
        checks.append(
            CheckResult(
                id="benchmark.max_tool_calls_hint",
                kind="benchmark",
                passed=ok,
                detail=f"{len(names)} tool calls, limit {bench.max_tool_calls_hint}"
                + ("" if ok else ": exceeds the limit"),
                expected=bench.max_tool_calls_hint,
                observed=len(names),
            )
        )
    if bench.token_budget is not None:
        total = trace.usage.total_tokens if trace.usage.known else None
        ok = total is not None and total <= bench.token_budget
        detail = (
            "usage unknown: the runtime reported none, so the budget cannot be shown to hold"
            if total is None
            else (f"{total} tokens, budget {bench.token_budget}" + ("" if ok else ": over budget"))
        )
        checks.append(
            CheckResult(
                id="benchmark.token_budget",
                kind="benchmark",
                passed=ok,
                detail=detail,
                expected=bench.token_budget,
                observed=total,
            )
        )
    for tool in bench.tools_not_expected:
        checks.append(
            CheckResult(
                id=f"benchmark.tools_not_expected:{tool}",
                kind="benchmark",
                passed=tool not in names,
                detail=f"{tool} was called" if tool in names else f"{tool} was not called",
            )
        )
    for tool in bench.tools_expected:
        checks.append(
            CheckResult(
                id=f"benchmark.tools_expected:{tool}",
                kind="observation",
                passed=None,
                detail=f"observation: {tool} {'was' if tool in names else 'was not'} called",
                expected=tool,
                observed=names,
            )
        )
    if bench.prompt_cache_min_share is not None:
        checks.append(prompt_cache_check(trace, bench.prompt_cache_min_share, hard=True))
    if bench.prompt_cache_expected_share is not None:
        checks.append(prompt_cache_check(trace, bench.prompt_cache_expected_share, hard=False))
    if bench.llm_calls_expected is not None:
        calls = _llm_calls(trace)
        checks.append(
            CheckResult(
                id="benchmark.llm_calls_expected",
                kind="observation",
                passed=None,
                detail=f"observation: {calls if calls is not None else 'unknown'} model calls, "
                f"expected {bench.llm_calls_expected}",
                expected=bench.llm_calls_expected,
                observed=calls,
            )
        )
    return checks


def _llm_calls(trace: Trace) -> int | None:
    if trace.model_requests is not None:
        return len(trace.model_requests)
    if trace.model_calls is not None:
        return len(trace.model_calls)
    return None
