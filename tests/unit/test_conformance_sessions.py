"""session_attribution's reading of the gateway log: each model call is attributed to the turn in flight
it served, and its X-WT-Session header (optional) must name that turn's session."""

from __future__ import annotations

from typing import Any

from windtunnel._conformance.checks_sessions import attribute

A, B = "wt-kit-attr-a-1", "wt-kit-attr-b-1"
PARALLEL = {A: f"[{A}] Read note alpha.", B: f"[{B}] Read note alpha."}


def _call(
    user: str | None, header: str | None, *, older: tuple[str, ...] = (), index: int = 7
) -> dict[str, Any]:
    """A chat model call as the gateway logs it: the header it carried and its user messages."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "s"}]
    for text in (*older, *([user] if user is not None else [])):
        messages += [{"role": "user", "content": text}, {"role": "assistant", "content": "ok"}]
    return {"index": index, "session": header, "messages": messages[:-1] if messages[1:] else messages}


def test_a_call_carrying_its_own_session_or_none_holds() -> None:
    for header in (A, None):
        found = attribute(_call(PARALLEL[A], header), PARALLEL)
        assert (found.served_for, found.problem) == (A, None)
        assert "served session" in found.text()


def test_a_header_naming_the_other_parallel_session_fails_naming_both() -> None:
    found = attribute(_call(PARALLEL[B], A, index=12), PARALLEL)
    assert found.served_for == B and found.problem is not None
    assert repr(A) in found.problem and repr(B) in found.problem


def test_the_newest_user_message_decides_when_older_turns_are_in_the_history() -> None:
    # After a reset a runtime that kept history still sends this turn's message last: it is this turn's.
    later = {B: f"[{B}] After the reset: say hello."}
    found = attribute(_call(later[B], A, older=(PARALLEL[A],)), later)
    assert found.served_for == B and found.problem is not None


def test_a_call_while_no_turn_is_in_flight_fails_with_or_without_a_header() -> None:
    for header in (A, None):
        found = attribute(_call(PARALLEL[A], header), {})
        assert found.served_for is None and found.problem is not None
        assert "no turn was in flight" in found.problem


def test_a_call_without_its_turn_message_is_the_only_turn_in_flight_or_unattributed() -> None:
    # Which message a call carries is session_affinity's concern: here the header is only compared when
    # the served session is known.
    alone = {A: PARALLEL[A]}
    assert attribute(_call(None, B), alone).problem is not None  # only A in flight: B's header is wrong
    assert attribute(_call(None, None), PARALLEL).served_for is None
    assert attribute(_call(None, None), PARALLEL).problem is None
    assert attribute(_call(None, A), PARALLEL).served_for == A
