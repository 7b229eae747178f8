"""Checks on the three views of a conversation (windtunnel._conversation: the one comparison the runner's
integrity check uses too): repeated calls across turns and a reset, tool errors, the final answer."""

from __future__ import annotations

import uuid
from collections import Counter
from typing import Any

from windtunnel._conformance.model import CheckFailed
from windtunnel._conformance.subject import Session, Subject, call, say, tools
from windtunnel._conversation.compare import INTEGRITY_KINDS, KnownTools, judge
from windtunnel._conversation.model import Conversation, DiffKind
from windtunnel._runner.evidence import served_tools


def _session_id(check: str) -> str:
    """A session id of this check's own: a bound runtime or gateway outlives one check's handle."""
    return f"wt-kit-{check}-{uuid.uuid4().hex[:8]}"


def views_of(session: Session) -> tuple[Conversation, KnownTools]:
    """This session's turns in the three views and the tools its mocks serve (a call to any other tool is
    the model's invention), read while the mocks still hold their call logs."""
    return session.conversations()[-1], KnownTools(served_tools(session.mcps))


def _raise_disagreements(views: tuple[Conversation, KnownTools], kinds: frozenset[DiffKind]) -> None:
    conversation, served = views
    broken = judge(conversation, served, kinds).broken
    if broken:
        shown = "; ".join(f"turn {found.turn}: {found.text}" for found in broken[:4])
        raise CheckFailed(
            f"the model's, the mocks' and the runtime's views disagree: {shown}",
            {"disagreements": [found.model_dump(mode="json") for found in broken]},
        )


def three_views_agree(subject: Subject) -> dict[str, Any]:
    """Every tool call, as the model emitted it, as a mock received it and as the runtime reported it,
    one to one and in order, with each result the model is sent being the mock's answer: two identical
    calls in one model call, the same call in a later model call and a later turn, and again after
    reset_state()."""
    repeated = call("lookup", key="alpha")
    script = [
        tools(repeated, repeated),
        tools(repeated, call("echo", n=1)),
        say("read twice and once more"),
        tools(repeated),
        say("read again"),
        tools(repeated),
        say("read after the reset"),
    ]
    session_id = _session_id("views")
    with subject.scripted(script) as session:
        subject.needs_model_evidence(session)
        session.turn("Read note alpha twice, then once more and echo.", session_id)
        session.turn("Read it again.", session_id)
        session.handle.reset_state()
        session.turn("Read note alpha.", session_id)
        views = views_of(session)
    _raise_disagreements(views, INTEGRITY_KINDS)
    conversation = views[0]
    rows = [len(turn.tool_calls) for turn in conversation.turns]
    if rows != [4, 1, 1]:
        raise CheckFailed(f"the turns' tool calls are {rows}, the script made [4, 1, 1]", {"rows": rows})
    return {"calls_per_turn": rows}


def tool_errors(subject: Subject) -> dict[str, Any]:
    """A tool's error result (isError) and a JSON-RPC error (-32602) each reach the model as that call's
    result and the trace as a reported call, and the mock received each call exactly once (no silent retry,
    no silent drop, no error swallowed)."""
    missing = f"wt-missing-{uuid.uuid4().hex[:10]}"
    script = [tools(call("lookup", key=missing)), tools(call("strict", probe=1)), say("both failed")]
    with subject.scripted(script) as session:
        subject.needs_model_evidence(session)
        session.turn("Read a note that does not exist, then ask strict.", _session_id("errors"))
        views = views_of(session)
    _raise_disagreements(views, INTEGRITY_KINDS)
    conversation = views[0]
    rows = [row for turn in conversation.turns for row in turn.tool_calls]
    received = Counter(row.mock.name for row in rows if row.mock is not None)
    evidence: dict[str, Any] = {"received": dict(received), "results": [row.result_to_model for row in rows]}
    if received != Counter({"lookup": 1, "strict": 1}):
        raise CheckFailed(
            f"the mocks received {dict(received)} for one failing lookup and one refused strict call: each "
            "failing call must be made once, never retried silently",
            evidence,
        )
    for row in rows:
        if row.mock is not None and (row.result_to_model is None or not row.mock.is_error):
            raise CheckFailed(
                f"the error of {row.mock.name} ({row.mock.error!r}) never reached the model as that call's "
                "result",
                evidence,
            )
    return evidence


def final_answer(subject: Subject) -> dict[str, Any]:
    """Each turn's reported answer is the model's last message of that turn as the gateway served it."""
    nonce = uuid.uuid4().hex[:10]
    # Non-ASCII on purpose (accents, CJK, an emoji): an answer re-encoded on its way to the report is caught.
    answers = (
        f"Note alpha holds the first note ({nonce}) — naïve ✓.",
        f"Nothing else to add ({nonce}) 以上 🧪.",
    )
    script = [tools(call("lookup", key="alpha")), say(answers[0]), say(answers[1])]
    with subject.scripted(script) as session:
        subject.needs_model_evidence(session)
        session_id = _session_id("final")
        session.turn("What does note alpha say? — réponds", session_id)
        session.turn("Anything else? 他には?", session_id)
        views = views_of(session)
    _raise_disagreements(views, frozenset({DiffKind.FINAL_ANSWER}))
    conversation = views[0]
    return {"answers": [turn.final for turn in conversation.turns]}
