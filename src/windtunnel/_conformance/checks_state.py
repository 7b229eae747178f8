"""Checks on state and lifecycle: session affinity, reset isolation, reference seam, teardown."""

from __future__ import annotations

import json
import secrets
from typing import Any

from windtunnel._canary.canary import run_reset_canary
from windtunnel._conformance.model import CheckFailed
from windtunnel._conformance.subject import Subject, say
from windtunnel._core.abilities import StateProbingRuntime
from windtunnel._core.agent_runtime import AgentConfig, AgentHandle
from windtunnel._runner.lifecycle import provisioned
from windtunnel._trace.shapes import read_response, said
from windtunnel.errors import WindTunnelError


def _conversation(requests: list[dict[str, Any]] | None) -> str:
    """The conversation the model was sent (user, assistant and tool messages; memory notes excluded)."""
    messages = [item.native for r in requests or [] for item in said(r) if item.role != "system"]
    return json.dumps(messages, ensure_ascii=False, default=str)


def _calls_without_turn(requests: list[dict[str, Any]] | None, text: str) -> list[int]:
    """The model calls of a turn whose newest user message does not hold the turn's own text (a turn sent
    late, dropped, or answered from an older message). A turn with no model call at all is one of them."""
    missing = []
    for position, request in enumerate(requests or [{}]):
        users = [item for item in said(request) if item.role == "user"]
        if not users or text not in users[-1].text:
            missing.append(position)
    return missing


def session_affinity(subject: Subject) -> dict[str, Any]:
    """Each turn's message reaches the model in that turn; a multi-turn session remembers its earlier turn;
    a second session sees nothing of the first."""
    word = f"ZEBRA{secrets.token_hex(4).upper()}"
    replies = [say("Noted."), say("You told me earlier."), say("Hello there.")]
    texts = (f"Please memorise the password {word}.", "Repeat it back to me.", "Greetings from somebody new.")
    with subject.scripted(replies, with_tools=False) as session:
        subject.needs_model_evidence(session)
        first = session.turn(texts[0], "wt-kit-affinity-a")
        again = session.turn(texts[1], "wt-kit-affinity-a")
        other = session.turn(texts[2], "wt-kit-affinity-b")
    evidence = {"same_session": _conversation(again.requests), "other_session": _conversation(other.requests)}
    for number, (record, text) in enumerate(zip((first, again, other), texts, strict=True), start=1):
        if unsent := _calls_without_turn(record.requests, text):
            raise CheckFailed(
                f"turn {number}'s own message {text!r} is not the newest user message of its model call(s) "
                f"{unsent}: each turn's message must reach the model in that turn",
                {**evidence, "turn": number, "sent": _conversation(record.requests)},
            )
    if word not in evidence["same_session"]:
        raise CheckFailed(
            "the second turn of a session was sent to the model without the first: no session memory",
            evidence,
        )
    if word in evidence["other_session"]:
        raise CheckFailed(
            "a second session's conversation carried the first session's turn: sessions mix", evidence
        )
    return evidence


def reset_isolation(subject: Subject) -> dict[str, Any]:
    """The reset canary: after reset_state(), a fresh session, the seeded session and (when the runtime
    exposes one) its state dump hold no trace of a nonce seeded before the reset."""
    subject.reference()
    recall = run_reset_canary(subject.runtime, AgentConfig(), probe_recall=True)
    evidence: dict[str, Any] = {
        "recall": {"leaked": recall.leaked, "detail": recall.detail, "nonce": recall.nonce}
    }
    if recall.leaked:
        raise CheckFailed(f"state survived reset_state(): {recall.detail}", evidence)
    probe = subject.runtime.state_probe() if isinstance(subject.runtime, StateProbingRuntime) else None
    if probe is not None:
        hermetic = run_reset_canary(subject.runtime, AgentConfig(), probe_recall=False, state_probe=probe)
        evidence["hermetic"] = {"leaked": hermetic.leaked, "detail": hermetic.detail}
        if hermetic.leaked:
            raise CheckFailed(f"state survived reset_state(): {hermetic.detail}", evidence)
    return evidence


def reference_capability(subject: Subject) -> dict[str, Any]:
    """Golden and poison cases get fresh handles; after teardown the scripted decisions are gone."""
    golden, poison = "The golden case answered.", "The poison case answered."
    handles: list[AgentHandle] = []
    for text in (golden, poison):
        with subject.scripted([say(text)], name=text.split()[1], with_tools=False) as session:
            handles.append(session.handle)
            answer = session.turn("Answer with your scripted line.").read.content
            if answer != text:
                raise CheckFailed(f"a case answered {answer!r} instead of its own script {text!r}")
    if handles[0] is handles[1]:
        raise CheckFailed("two reference cases got the same handle object")
    leftover = plain_answer(subject)
    if leftover in (golden, poison):
        raise CheckFailed(
            f"after teardown a plain handle still got a scripted answer {leftover!r}: the substitution survived"
        )
    return {"after_teardown": leftover}


def plain_answer(subject: Subject) -> str | None:
    """What an ordinary (non-reference) handle answers now; a refusal from the model seam is None."""
    with provisioned(subject.runtime, AgentConfig(), runtime_name=subject.name) as handle:
        try:
            handle.reset_state()
            return read_response(
                handle.send([{"role": "user", "content": "Answer."}], "wt-kit-plain")
            ).content
        except WindTunnelError:
            return None


def teardown(subject: Subject) -> dict[str, Any]:
    """teardown() is idempotent and never raises, before and after a turn."""
    runtime = subject.reference()
    fresh = runtime.provision_reference(AgentConfig(), _case("Torn down."), [])
    used = runtime.provision_reference(AgentConfig(), _case("Torn down."), [])
    try:
        used.reset_state()
        used.send([{"role": "user", "content": "Say it."}], "wt-kit-teardown")
    finally:
        for name, handle in (("unused handle", fresh), ("used handle", used)):
            for attempt in ("first", "second"):
                try:
                    handle.teardown()
                except Exception as exc:
                    raise CheckFailed(
                        f"teardown() of a {name} raised on the {attempt} call: {type(exc).__name__}: {exc}"
                    ) from exc
    return {"calls": 4}


def _case(text: str) -> Any:
    from windtunnel._core.reference import ReferenceCase, ReferenceDecision

    return ReferenceCase(name="teardown", kind="golden", decisions=(ReferenceDecision(content=text),))
