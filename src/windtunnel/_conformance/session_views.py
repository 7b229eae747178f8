"""Each session's turn as the runtime reported it, against the session the gateway and the mocks served for.

The gateway files every model call under the session its X-WT-Session header names (its log's `session`:
the session it served the call for), and a mock records the header of every tools/call the same way.
Neither can know more than the header says; the runtime's own report can: it answers each turn for the
`session_id` Wind Tunnel sent. So the turn's answer must be one the gateway served for that session, its
tool calls must not outnumber those the gateway's answers for it emitted, and the mocks must have served
as many calls for it as the runtime reported. Compared only where the runtime sent the header on every
call of the phase (it is optional); a runtime that never sends it is judged by the turn attribution alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from windtunnel._trace.shapes import ReadResponse, answer

COMPARED_GATEWAY = (
    "the runtime's report of the session's turn, with the model calls the gateway served for it"
)
COMPARED_MOCKS = "the tool calls the runtime reported for the session, with those the mocks served for it"


@dataclass(frozen=True, slots=True)
class ViewCheck:
    """One comparison of one session's reported turn with one recorder (gateway or mocks)."""

    session: str
    recorder: str
    compared: str
    problem: str | None
    text: str


def compare_views(
    reported: Mapping[str, ReadResponse],
    requests: Sequence[Mapping[str, Any]],
    mock_calls: Sequence[Mapping[str, Any]],
) -> list[ViewCheck]:
    """Each session's reported turn (`reported`: session id -> the runtime's answer) against the phase's
    model calls the gateway logged and the tools/calls the mocks recorded, where each recorded a session."""
    found: list[ViewCheck] = []
    if requests and all(isinstance(r.get("session"), str) for r in requests):
        found += [_gateway(sid, read, requests) for sid, read in reported.items()]
    if mock_calls and all(isinstance(c.get("session"), str) for c in mock_calls):
        found += [_mocks(sid, read, mock_calls) for sid, read in reported.items()]
    return found


def _gateway(sid: str, read: ReadResponse, requests: Sequence[Mapping[str, Any]]) -> ViewCheck:
    served = [r for r in requests if r.get("session") == sid]
    emitted = sum(len(answer(r).calls) for r in served)
    content = read.content or ""
    answered = any(answer(r).text == content for r in served)
    summary = (
        f"session {sid!r}: the runtime reported {len(read.tool_calls)} tool call(s) and answer {content[:60]!r}; "
        f"the gateway served {len(served)} model call(s) for it (X-WT-Session), emitting {emitted} tool call(s)"
    )
    problem = None
    if not served:
        others = sorted({str(r.get("session")) for r in requests})
        problem = (
            f"the runtime answered a turn of session {sid!r}, but the gateway served no model call for it: "
            f"it served the phase's {len(requests)} call(s) for {', '.join(map(repr, others))} "
            "(the X-WT-Session the runtime sent)"
        )
    elif len(read.tool_calls) > emitted:
        problem = (
            f"the runtime reported {len(read.tool_calls)} tool call(s) for session {sid!r}, but the model calls "
            f"the gateway served for it emitted {emitted}: the others were served for another session"
        )
    elif not answered and any(answer(r).text == content for r in requests):
        elsewhere = next(r for r in requests if answer(r).text == content)
        problem = (
            f"the runtime's answer for session {sid!r} ({content[:60]!r}) is what the gateway served for session "
            f"{elsewhere.get('session')!r} (gateway log index {elsewhere.get('index')})"
        )
    return ViewCheck(sid, "gateway", COMPARED_GATEWAY, problem, problem or summary)


def _mocks(sid: str, read: ReadResponse, mock_calls: Sequence[Mapping[str, Any]]) -> ViewCheck:
    served = sum(1 for call in mock_calls if call.get("session") == sid)
    reported = len(read.tool_calls)
    summary = (
        f"session {sid!r}: the runtime reported {reported} tool call(s); the mocks served {served} for it "
        "(X-WT-Session on tools/call)"
    )
    problem = None
    if served != reported:
        problem = (
            f"the runtime reported {reported} tool call(s) for session {sid!r}, but the mocks served {served} "
            "for it by the X-WT-Session the runtime sent them"
        )
    return ViewCheck(sid, "mocks", COMPARED_MOCKS, problem, problem or summary)
