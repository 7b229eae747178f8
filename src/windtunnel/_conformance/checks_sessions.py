"""The session attribution check: each model call carries the session of the turn it serves, or none.

Wind Tunnel knows which turns it drives and their messages; the gateway logs the X-WT-Session header each
model call carried. A call is attributed to the turn in flight whose message is its newest user message
(the one turn in flight when only one is); a header naming another session, or a call that arrives while
no turn is in flight, fails. The header is optional: a call without one is attributed all the same.
Beside that attribution, each session's turn as the runtime reported it is compared with the model calls the
gateway and the tool calls the mocks recorded serving for that session (windtunnel._conformance.session_views).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any

from windtunnel._conformance.model import CheckFailed
from windtunnel._conformance.session_views import ViewCheck, compare_views
from windtunnel._conformance.subject import Session, Subject, TurnRecord, call, say, tools
from windtunnel._conversation.model import Finding
from windtunnel._runner.evidence import drain_model_requests, mcp_calls
from windtunnel._trace.shapes import read_response, said
from windtunnel.errors import RuntimeFault

COMPARED = "the X-WT-Session header the call carried, with the session of the turn it served"


@dataclass(frozen=True, slots=True)
class Attribution:
    """One model call: the gateway log's index, the header it carried and the session it served."""

    index: int | None
    header: str | None
    served_for: str | None
    problem: str | None

    def text(self) -> str:
        carried = repr(self.header) if self.header is not None else "no header"
        served = repr(self.served_for) if self.served_for is not None else "no turn Wind Tunnel drove"
        return self.problem or f"carried {carried}, served session {served}"


def attribute(request: Mapping[str, Any], in_flight: Mapping[str, str]) -> Attribution:
    """Attribute one model call to the turn in flight it served (`in_flight`: session id -> that turn's
    message); a problem when its header names another session or no turn was in flight at all."""
    header = request.get("session") if isinstance(request.get("session"), str) else None
    index = request.get("index") if isinstance(request.get("index"), int) else None
    if not in_flight:
        carried = f"X-WT-Session {header!r}" if header is not None else "no X-WT-Session"
        return Attribution(
            index,
            header,
            None,
            f"arrived while no turn was in flight (it carried {carried}): a model call "
            "outside the turn Wind Tunnel drives is counted for no session, or for the wrong one",
        )
    served = _served(request, in_flight, header)
    if header is not None and served is not None and header != served:
        return Attribution(
            index,
            header,
            served,
            f"carried X-WT-Session {header!r} while serving the turn of session "
            f"{served!r}: the gateway attributes it to the wrong session",
        )
    return Attribution(index, header, served, None)


def _served(request: Mapping[str, Any], in_flight: Mapping[str, str], header: str | None) -> str | None:
    """The session whose turn message is the call's newest user message; failing that, one whose message
    is among its user messages; the only turn in flight; the header when it names a turn in flight. None
    when the call cannot be told apart (which message it was sent is session_affinity's concern)."""
    users = [item.text for item in said(request) if item.role == "user"]
    newest = users[-1] if users else ""
    for found in (
        [s for s, text in in_flight.items() if text in newest],
        [s for s, text in in_flight.items() if any(text in user for user in users)],
        list(in_flight) if len(in_flight) == 1 else [],
        [header] if header in in_flight else [],
    ):
        if len(found) == 1:
            return found[0]
    return None


def session_attribution(subject: Subject) -> dict[str, Any]:
    """Two sessions' turns in parallel, a reset, then each session again one after the other: every model
    call's X-WT-Session (when sent) names the session of the turn it served, and none arrives between turns."""
    nonce = uuid.uuid4().hex[:8]
    first, second = f"wt-kit-attr-a-{nonce}", f"wt-kit-attr-b-{nonce}"
    lookup = tools(call("lookup", key="alpha"))
    # Any interleaving of the parallel turns takes these four: each turn ends at the first answer it gets.
    script = [lookup, lookup, say("Read."), say("Read."), say("Second after the reset."), say("First again.")]
    phases = (
        {first: f"[{first}] Read note alpha.", second: f"[{second}] Read note alpha."},
        {second: f"[{second}] After the reset: say hello."},
        {first: f"[{first}] After the reset: say hello again."},
    )
    attributions: list[Attribution] = []
    views: list[ViewCheck] = []
    with subject.scripted(script) as session:
        subject.needs_model_evidence(session)
        for number, phase in enumerate(phases):
            if number == 1:
                session.handle.reset_state()
            found, compared = _drive(session, phase)
            attributions += found
            views += compared
        attributions += [attribute(r, {}) for r in drain_model_requests(session.handle) or []]
        session.findings.extend(
            Finding(turn=None, compared=COMPARED, held=a.problem is None, text=_where(a) + a.text())
            for a in attributions
        )
        session.findings.extend(
            Finding(turn=None, compared=v.compared, held=v.problem is None, text=v.text) for v in views
        )
    evidence = {
        "sessions": [first, second],
        "calls": [
            {"index": a.index, "header": a.header, "served_for": a.served_for, "problem": a.problem}
            for a in attributions
        ],
        "reported_against_recorded": [asdict(view) for view in views],
    }
    if not attributions:
        raise CheckFailed("the gateway saw no model call for the four turns", evidence)
    # The first wrong call by the turn attribution, and the first session whose reported turn differs from
    # what a recorder served for it: both when both differ (each names what it compared and where).
    wrong = [f"{_where(a)}{a.problem}" for a in attributions if a.problem is not None][:1]
    wrong += [f"compared {v.compared}: {v.problem}" for v in views if v.problem is not None][:1]
    if wrong:
        raise CheckFailed("; and ".join(wrong), evidence)
    return evidence


def _where(attribution: Attribution) -> str:
    return f"model call (gateway log index {attribution.index}): " if attribution.index is not None else ""


def _drive(session: Session, phase: Mapping[str, str]) -> tuple[list[Attribution], list[ViewCheck]]:
    """Send the phase's turns at once (one per session), attribute every model call logged meanwhile, keep
    each turn with the calls it served for the conversation view, and compare each session's reported turn
    with what the gateway and the mocks recorded serving for it."""
    stray = [attribute(r, {}) for r in drain_model_requests(session.handle) or []]
    handle = session.handle
    started = time.time()  # the mocks' calls of this phase: those recorded since (each call has its `at`)
    with ThreadPoolExecutor(max_workers=len(phase)) as pool:
        sent = {
            sid: pool.submit(handle.send, [{"role": "user", "content": text}], sid)
            for sid, text in phase.items()
        }
        responses: dict[str, Any] = {}
        for sid, future in sent.items():
            try:
                responses[sid] = future.result()
            except RuntimeFault as fault:
                raise session.broke_off(fault, phase[sid], sid) from fault
    requests = drain_model_requests(handle) or []
    found = [attribute(r, phase) for r in requests]
    reported = {sid: read_response(responses[sid]) for sid in phase}
    for sid, text in phase.items():
        served = [r for r, a in zip(requests, found, strict=True) if a.served_for == sid]
        session.turns.append(TurnRecord(reported[sid], served, sid, text))
    mocked = [c for c in mcp_calls(session.mcps) or [] if float(c.get("at") or 0.0) >= started]
    views = compare_views(reported, requests, mocked)
    return stray + found, views
