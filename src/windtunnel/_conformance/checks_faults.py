"""The fault checks (`faults/<fault>`): a model API or an MCP server fails as scripted, and the runtime must
do what its `[faults]` policy declares and report what really happened (docs/conformance.md, "Faults").

A model fault: the turn's model calls fail (429, 5xx, a stream cut, stalled or malformed) as many times
as the policy allows attempts. The runtime must make exactly that many, each retry after its declared
backoff (and a 429/503's retry-after where it says it honours it), then report the turn as failed (a
Contract C error, never an answer it made up). When it retries at all, a second turn whose first model
call fails once must recover and report the calls it really made. A fault the policy names in
`unhandled` is INFO with its reason, never PASSED.
"""

from __future__ import annotations

import itertools
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from windtunnel._conformance.model import CheckFailed, OptionalAbsent, declared_not_handled
from windtunnel._conformance.subject import Session, Subject, call, say, tools
from windtunnel._core.faults import ModelFault
from windtunnel._core.reference import ReferenceDecision
from windtunnel._runner.evidence import drain_model_requests, mcp_calls
from windtunnel._runtimes.fault_policy import FaultPolicy
from windtunnel._trace.shapes import call_name
from windtunnel._wire.tools import bare
from windtunnel.errors import RuntimeFault, RuntimeTimeoutError

RETRY_AFTER_S = 1.0
"""The retry-after a scripted 429 or 503 sends: short, so a runtime that honours it costs a second."""
STALL_S = 2.0
SLOW_MARGIN_S = 5.0
"""How much later than the declared turn deadline a slow answer comes."""
TOLERANCE_S = 0.05
"""Clock slack when a retry's wait is measured against its declared backoff (the gateway's own clock)."""
LEFTOVER = "wt-fault-leftover"
"""The answer scripted after the last attempt the policy allows: a runtime that reports it retried once
too often."""
RECOVERED = "wt-fault-recovered"
TITLES = {
    "model_429": "a 429 with retry-after is retried as declared, then the turn reported failed",
    "model_5xx": "a 500 is retried as declared, then the turn reported failed",
    "model_503": "a 503 with retry-after is retried as declared, then the turn reported failed",
    "stream_cut": "an answer cut short is never taken for a whole one",
    "stream_stall": "an answer that stalls, then breaks off, is never taken for a whole one",
    "model_malformed": "malformed JSON from the model API is never taken for an answer",
    "model_slow": "a model answer slower than the declared turn deadline fails the turn by that deadline",
}
MODEL_FAULTS: dict[str, ModelFault] = {
    "model_429": ModelFault(kind="rate_limited", retry_after=RETRY_AFTER_S),
    "model_5xx": ModelFault(kind="server_error"),
    "model_503": ModelFault(kind="unavailable", retry_after=RETRY_AFTER_S),
    "stream_cut": ModelFault(kind="cut", after_events=1),
    "stream_stall": ModelFault(kind="stall", after_events=1, seconds=STALL_S),
    "model_malformed": ModelFault(kind="malformed", after_events=1),
}


def declared_unhandled(policy: FaultPolicy, fault: str) -> None:
    """INFO, never PASSED: the runtime declares it does not handle `fault`, and why."""
    declared_not_handled("[faults] unhandled", {f: r for f, r in policy.unhandled.items() if f == fault})


def session_id(fault: str) -> str:
    return f"wt-kit-fault-{fault}-{uuid.uuid4().hex[:8]}"


def attempt(session: Session, text: str, sid: str) -> dict[str, Any]:
    """One turn: how it ended (answered, or the error it was reported failed with), its model calls as the
    gateway logged them, and how long it took."""
    drain_model_requests(session.handle)
    started = time.monotonic()
    outcome: dict[str, Any] = {}
    try:
        record = session.turn_or_fault(text, sid)
    except RuntimeTimeoutError:
        raise
    except RuntimeFault as exc:
        outcome["failed"] = str(exc).splitlines()[0]
        requests = session.turns[-1].requests or []
    else:
        outcome["answered"] = record.read.content
        outcome["reported_calls"] = [dict(c) for c in record.read.tool_calls]
        requests = record.requests or []
    outcome["seconds"] = round(time.monotonic() - started, 3)
    outcome["attempts"] = [_attempt(entry) for entry in requests]
    return outcome


def _attempt(entry: dict[str, Any]) -> dict[str, Any]:
    fault = entry.get("fault")
    return {
        "index": entry.get("index"),
        "at": entry.get("at"),
        "status": entry.get("status"),
        "error_code": entry.get("error_code"),
        "fault": fault.get("kind") if isinstance(fault, dict) else None,
        "latency_ms": entry.get("latency_ms"),
    }


def waits(attempts: Sequence[dict[str, Any]]) -> list[float]:
    """How long the runtime waited before each retry: from the end of one answer to the next request."""
    return [
        round(float(later["at"]) - (float(earlier["at"]) + float(earlier["latency_ms"] or 0) / 1000), 3)
        for earlier, later in itertools.pairwise(attempts)
    ]


def model_fault_check(fault: str) -> Callable[[Subject], dict[str, Any]]:
    """The check of one model fault (see the module docstring)."""

    def run(subject: Subject) -> dict[str, Any]:
        policy = subject.faults
        declared_unhandled(policy, fault)
        scripted = ReferenceDecision(content="never delivered", fault=MODEL_FAULTS[fault])
        allowed = policy.retries_on(fault) + 1
        # Recovery first: a runtime that does not retry as declared fails there, before the script of the
        # failing turn could be read out of step.
        recovering = [tools(call("lookup", key="alpha")), scripted, say(RECOVERED)] if allowed > 1 else []
        script = [*recovering, *[scripted] * allowed, say(LEFTOVER)]
        evidence: dict[str, Any] = {"policy": _shown(policy, fault), "allowed_attempts": allowed}
        with subject.scripted(script, name=f"fault-{fault}") as session:
            subject.needs_model_evidence(session)
            sid = session_id(fault)
            if recovering:
                evidence["recovered"] = recovered = attempt(session, "Read note alpha, then answer.", sid)
                _judge_recovery(session, recovered, evidence)
            evidence["failing"] = failing = attempt(session, "Answer.", session_id(fault))
        judge_failing(policy, fault, failing, allowed, evidence)
        return evidence

    return run


def _shown(policy: FaultPolicy, fault: str) -> dict[str, Any]:
    return {
        "retries": policy.retries_on(fault),
        "backoff_s": policy.backoff_s,
        "backoff_factor": policy.backoff_factor,
        "retry_after": policy.retry_after,
    }


def judge_failing(
    policy: FaultPolicy, fault: str, outcome: dict[str, Any], allowed: int, evidence: dict[str, Any]
) -> None:
    made = outcome["attempts"]
    if len(made) > allowed:
        raise CheckFailed(
            f"retry storm: the model call failed with {fault} and the runtime made {len(made)} attempts; its "
            f"[faults] policy allows {allowed}",
            evidence,
        )
    if "answered" in outcome:
        raise CheckFailed(
            f"every model call of the turn failed ({fault}), yet the runtime reported the answer "
            f"{outcome['answered']!r}: a failed turn must be reported as failed (a Contract C error), never "
            "with an answer nobody gave",
            evidence,
        )
    if len(made) < allowed:
        raise CheckFailed(
            f"the runtime declares {allowed - 1} retries on {fault} but made {len(made)} attempt(s)", evidence
        )
    scripted = MODEL_FAULTS[fault]
    evidence["waits_s"] = found = waits(made)
    for retry, waited in enumerate(found, start=1):
        least = policy.backoff(retry)
        if policy.retry_after and scripted.retry_after is not None:
            least = max(least, scripted.retry_after)
        if waited < least - TOLERANCE_S:
            raise CheckFailed(
                f"retry {retry} came {waited:.3f}s after the failed answer; the declared policy waits at least "
                f"{least:g}s",
                evidence,
            )


def _judge_recovery(session: Session, outcome: dict[str, Any], evidence: dict[str, Any]) -> None:
    """A turn whose model call failed once and was retried: the model's answer, and the one tool call the
    runtime really made, reported once."""
    received = [c.get("name") for c in mcp_calls(session.mcps) or []]
    evidence["recovered_received"] = received
    if outcome.get("answered") != RECOVERED:
        raise CheckFailed(
            f"a model call that failed once should have been retried by the declared policy and the turn "
            f"answered {RECOVERED!r}; it ended with {outcome.get('answered') or outcome.get('failed')!r}",
            evidence,
        )
    # Contract C's report may give a call in either shape, under the name the harness offered it by
    # (mcp__notes__lookup): compared by the mock's own name, as the other checks compare.
    reported = [bare(call_name(c) or "") or None for c in outcome.get("reported_calls", [])]
    if reported != received or received != ["lookup"]:
        raise CheckFailed(
            f"the recovered turn reported tool calls {reported}; the mocks received {received} (the one "
            "lookup the script made): a retry must not repeat, hide or invent a call",
            evidence,
        )


def model_slow(subject: Subject) -> dict[str, Any]:
    """An answer that comes only after the declared turn deadline: the runtime fails the turn by then
    (allowing 10%, at least 1 s), never waiting for and reporting the late answer. No deadline declared:
    INFO, the fault was not measured."""
    policy = subject.faults
    declared_unhandled(policy, "model_slow")
    deadline = policy.turn_deadline_s
    if deadline is None:
        raise OptionalAbsent(
            "declares no turn deadline ([faults] turn_deadline_s): an answer slower than a deadline was not "
            "measured"
        )
    late = ReferenceDecision(
        content=LEFTOVER, fault=ModelFault(kind="slow", seconds=deadline + SLOW_MARGIN_S)
    )
    allowed = policy.retries_on("model_slow") + 1
    with subject.scripted([late] * allowed, name="fault-model_slow") as session:
        subject.needs_model_evidence(session)
        outcome = attempt(session, "Answer.", session_id("model_slow"))
    evidence = {"deadline_s": deadline, "turn": outcome}
    if "answered" in outcome:
        raise CheckFailed(
            f"the runtime declares a {deadline:g}s turn deadline, yet waited {outcome['seconds']:g}s and reported "
            "the late answer",
            evidence,
        )
    if outcome["seconds"] > deadline + max(1.0, deadline / 10):
        raise CheckFailed(
            f"the turn failed after {outcome['seconds']:g}s; the runtime declares a {deadline:g}s deadline",
            evidence,
        )
    return evidence


def model_fault_checks() -> list[tuple[str, str, Callable[[Subject], dict[str, Any]]]]:
    """(fault, title, check) of every model fault."""
    checks = [(fault, TITLES[fault], model_fault_check(fault)) for fault in MODEL_FAULTS]
    return [*checks, ("model_slow", TITLES["model_slow"], model_slow)]
