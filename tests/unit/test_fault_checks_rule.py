"""The model fault checks' rule over logged attempts: attempt count against the declared retries, the wait
before each retry against backoff and retry-after, and a failed turn reported as failed."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from windtunnel._conformance import checks_faults
from windtunnel._conformance.checks_faults import judge_failing, waits
from windtunnel._conformance.model import CheckFailed
from windtunnel._runtimes.fault_policy import FaultPolicy

POLICY = FaultPolicy(
    retries=2, retry_on=frozenset({"model_429"}), backoff_s=0.5, backoff_factor=2, retry_after=True
)


def attempts(*starts: float, latency_ms: float = 100) -> list[dict[str, Any]]:
    return [{"at": at, "latency_ms": latency_ms, "status": 429} for at in starts]


def judged(policy: FaultPolicy, fault: str, outcome: dict[str, Any]) -> dict[str, Any]:
    evidence: dict[str, Any] = {}
    judge_failing(policy, fault, outcome, policy.retries_on(fault) + 1, evidence)
    return evidence


def test_waits_run_from_the_end_of_one_answer_to_the_next_request() -> None:
    assert waits(attempts(10.0, 11.1, 13.2)) == [1.0, 2.0]


def test_retries_as_declared_after_retry_after_hold() -> None:
    # retry-after (1 s) is longer than the first backoff (0.5 s); the second backoff (1 s) equals it
    evidence = judged(POLICY, "model_429", {"failed": "502", "attempts": attempts(0.0, 1.1, 2.2)})
    assert evidence["waits_s"] == [1.0, 1.0]


@pytest.mark.parametrize(
    ("policy", "fault", "outcome", "says"),
    [
        (POLICY, "model_429", {"failed": "x", "attempts": attempts(0, 1.1, 2.2, 3.3)}, "retry storm"),
        (FaultPolicy(), "model_5xx", {"failed": "x", "attempts": attempts(0, 0.2)}, "retry storm"),
        (POLICY, "model_429", {"answered": "ok", "attempts": attempts(0, 1.1, 2.2)}, "reported the answer"),
        (POLICY, "model_429", {"failed": "x", "attempts": attempts(0)}, "declares 2 retries"),
        (POLICY, "model_429", {"failed": "x", "attempts": attempts(0, 0.7, 1.8)}, "retry 1 came 0.600s"),
        (
            FaultPolicy(retries=1, retry_on=frozenset({"model_503"}), backoff_s=0.1),
            "model_503",
            {"failed": "x", "attempts": attempts(0, 0.4)},
            None,  # retry-after not honoured by declaration: the backoff alone is the floor
        ),
    ],
)
def test_the_rule_fails_what_breaks_the_declared_policy(
    policy: FaultPolicy, fault: str, outcome: dict[str, Any], says: str | None
) -> None:
    if says is None:
        judged(policy, fault, outcome)
        return
    with pytest.raises(CheckFailed, match=says):
        judged(policy, fault, outcome)


CHAT_SHAPED = {
    "id": "call_0",
    "type": "function",
    "function": {"name": "mcp__notes__lookup", "arguments": "{}"},
}
"""A reported call as Claude Code's runtime reports it: the chat shape, under the harness's qualified name."""


@pytest.mark.parametrize("reported", [{"name": "lookup", "arguments": {}}, CHAT_SHAPED])
def test_a_recovered_turn_is_judged_by_the_mocks_name_of_each_call_in_either_shape(
    monkeypatch: pytest.MonkeyPatch, reported: dict[str, Any]
) -> None:
    monkeypatch.setattr(checks_faults, "mcp_calls", lambda mcps: [{"name": "lookup"}])
    session: Any = SimpleNamespace(mcps=[])
    recovered = {"answered": checks_faults.RECOVERED, "reported_calls": [reported]}
    checks_faults._judge_recovery(session, recovered, {})
    repeated = {**recovered, "reported_calls": [reported, reported]}
    with pytest.raises(CheckFailed, match="a retry must not repeat, hide or invent a call"):
        checks_faults._judge_recovery(session, repeated, {})
