"""Script mode: answer each model call with the next reference decision of the installed script, never a default.

A decision may carry a scripted fault (windtunnel._core.faults): the gateway then answers 429/500/503, or
breaks, corrupts or delays the decision's answer (windtunnel._gateway.faults). A script belongs to a reference case and is installed globally or for one session (the X-WT-Session
header); a session's own script wins over the global one. Each request pops the next decision, rendered in
the request's dialect. A request with no script, or past the script's end, is refused with the dialect's
error (`no_script`, `script_exhausted`), so the run fails with the cause named instead of scoring a made-up
answer; so is a scripted tool name that no offered tool (or several) answers to (`tool_not_offered`).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from windtunnel._chat.mode import ChatRequest, ModeReply
from windtunnel._core.reference import ReferenceDecision
from windtunnel._scenario.serialize import decisions_from_json
from windtunnel._wire.registry import DIALECTS
from windtunnel._wire.tools import ToolNameError
from windtunnel.errors import UsageError

REFUSED = 422
"""HTTP status of a scripted refusal: a client error that OpenAI clients do not retry (409 they would)."""

INSTALL_FIELDS = frozenset({"case", "session", "decisions"})
INSTALL_SHAPE = (
    '{"case": str, "session": str|null, "decisions": '
    '[{"content": str|null, "tool_calls": [{"name": str, "arguments": {...}}]}, ...]}'
)
"""The PUT /wt/script body, as error hints show it."""


@dataclass(slots=True)
class Script:
    """One case's decisions and how many of them have been served."""

    case: str
    session: str | None
    decisions: tuple[ReferenceDecision, ...]
    served: int = 0

    @property
    def remaining(self) -> int:
        return len(self.decisions) - self.served

    def summary(self) -> dict[str, Any]:
        return {
            "case": self.case,
            "session": self.session,
            "total": len(self.decisions),
            "served": self.served,
            "remaining": self.remaining,
        }


@dataclass(frozen=True, slots=True)
class Taken:
    """The outcome of asking the store for a decision: a decision, or a refusal with its code."""

    case: str | None
    index: int | None = None
    decision: ReferenceDecision | None = None
    error: str | None = None
    error_code: str | None = None


@dataclass(slots=True)
class ScriptStore:
    """The installed scripts; every operation takes one lock, so the store is safe across threads."""

    global_script: Script | None = None
    sessions: dict[str, Script] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def install(
        self, case: str, decisions: Sequence[ReferenceDecision], session: str | None = None
    ) -> Script:
        """Install (or replace) the global script, or the script of `session`."""
        script = Script(case=case, session=session, decisions=tuple(decisions))
        with self._lock:
            if session is None:
                self.global_script = script
            else:
                self.sessions[session] = script
        return script

    def clear(self, session: str | None = None) -> int:
        """Remove every script, or only `session`'s; returns how many were removed."""
        with self._lock:
            if session is not None:
                return 1 if self.sessions.pop(session, None) else 0
            removed = len(self.sessions) + (self.global_script is not None)
            self.global_script, self.sessions = None, {}
            return removed

    def take(self, session: str | None) -> Taken:
        """The next decision for `session` (its own script, else the global one), or why there is none."""
        with self._lock:
            script = self.sessions.get(session) if session is not None else None
            script = script or self.global_script
            if script is None:
                return Taken(case=None, error=_no_script(session), error_code="no_script")
            if script.remaining <= 0:
                return Taken(case=script.case, error=_exhausted(script), error_code="script_exhausted")
            index = script.served
            script.served += 1
            return Taken(case=script.case, index=index, decision=script.decisions[index])

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {
                "global": self.global_script.summary() if self.global_script else None,
                "sessions": {name: script.summary() for name, script in self.sessions.items()},
            }


def _no_script(session: str | None) -> str:
    whose = f"session {session!r} and no global script" if session else "this request (no X-WT-Session)"
    return (
        f"no script installed for {whose}: the gateway in script mode answers only from reference "
        "decisions installed with PUT /wt/script"
    )


def _exhausted(script: Script) -> str:
    scope = f"session {script.session!r}" if script.session else "the global script"
    return (
        f"script exhausted: case {script.case!r} ({scope}) scripted {len(script.decisions)} model call(s) "
        f"and this is call {script.served + 1}; the agent made more model calls than the case scripts"
    )


class ScriptMode:
    """A GatewayMode serving reference decisions from a ScriptStore."""

    name = "script"

    def __init__(self, store: ScriptStore | None = None) -> None:
        self.store = store or ScriptStore()

    async def complete(self, request: ChatRequest) -> ModeReply:
        taken = self.store.take(request.session)
        if taken.decision is None:
            return ModeReply(
                status=REFUSED, error=taken.error, error_code=taken.error_code, context={"case": taken.case}
            )
        context: dict[str, Any] = {"case": taken.case, "decision": taken.index}
        fault = taken.decision.fault
        if fault is not None:
            context["fault"] = fault.to_json()
            if fault.status is not None:  # answered with the error status alone: nothing to render
                return ModeReply(status=fault.status, context=context, fault=fault)
        try:
            completion = DIALECTS[request.wire].render(taken.decision, request.body)
        except ToolNameError as exc:
            return ModeReply(status=REFUSED, error=str(exc), error_code="tool_not_offered", context=context)
        return ModeReply(completion=completion, context=context, fault=fault)

    async def aclose(self) -> None:
        """Nothing to release: scripts live in memory."""


@dataclass(frozen=True, slots=True)
class Install:
    """A validated PUT /wt/script body."""

    case: str
    session: str | None
    decisions: tuple[ReferenceDecision, ...]


def parse_install(body: Any) -> Install:
    """Validate a PUT /wt/script body; a UsageError whose `field` names the first bad field otherwise."""
    if not isinstance(body, Mapping):
        raise _bad("body", "the body must be a JSON object {case, session, decisions}")
    unknown = sorted(set(body) - INSTALL_FIELDS)
    if unknown:
        raise _bad(unknown[0], f"unknown field {unknown[0]!r}; expected only case, session, decisions")
    case, session = body.get("case"), body.get("session")
    if not isinstance(case, str) or not case:
        raise _bad("case", f"case must be a non-empty string naming the reference case, got {case!r}")
    if session is not None and (not isinstance(session, str) or not session):
        raise _bad("session", f"session must be a non-empty string or null, got {session!r}")
    return Install(case=case, session=session, decisions=_decisions(body.get("decisions")))


def _decisions(data: Any) -> tuple[ReferenceDecision, ...]:
    if not isinstance(data, list) or not data:
        raise _bad("decisions", f"decisions must be a non-empty JSON list, got {_kind(data)}")
    for index, item in enumerate(data):
        content = item.get("content") if isinstance(item, Mapping) else None
        if content is not None and not isinstance(content, str):
            raise _bad(
                f"decisions[{index}].content", f"content must be a string or null, got {_kind(content)}"
            )
    try:
        decisions = decisions_from_json(data)
    except UsageError as exc:  # its message already names the entry; keep the gateway's framing and hint
        field_name = str(getattr(exc, "field", "decisions"))
        raise UsageError(
            f"invalid script: {exc.message}", hint=f"send {INSTALL_SHAPE}", field=field_name
        ) from exc
    for index, decision in enumerate(decisions):
        if decision.content is None and not decision.tool_calls and decision.fault is None:
            raise _bad(f"decisions[{index}]", "a decision needs content, at least one tool call or a fault")
    return decisions


def _kind(value: Any) -> str:
    return "null" if value is None else f"a JSON {type(value).__name__}: {str(value)[:60]!r}"


def _bad(name: str, message: str) -> UsageError:
    return UsageError(f"invalid script: {name}: {message}", hint=f"send {INSTALL_SHAPE}", field=name)
