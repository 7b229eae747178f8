"""session_attribution's reading of the gateway log: each model call is attributed to the turn in flight
it served, and its X-WT-Session header (optional) must name that turn's session; each session's reported turn
is compared with the calls the gateway and the mocks recorded serving for it."""

from __future__ import annotations

from typing import Any

from windtunnel._conformance.checks_sessions import attribute
from windtunnel._conformance.session_views import compare_views
from windtunnel._trace.shapes import ReadResponse, read_response

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


# -- each session's reported turn against what the gateway and the mocks recorded serving for it ---------
def _served(header: str | None, content: str = "", calls: int = 0, index: int = 0) -> dict[str, Any]:
    """A chat model call as the gateway logs it: the session it served it for and the answer it served."""
    tool_calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
        for i in range(calls)
    ]
    message = {"role": "assistant", "content": content or None, "tool_calls": tool_calls or None}
    return {"index": index, "session": header, "wire": "openai-chat", "messages": [], "response": message}


def _reported(content: str, calls: int = 0) -> ReadResponse:
    tool_calls = [{"name": "lookup", "arguments": {"key": "alpha"}}] * calls
    return read_response({"content": content, "tool_calls": tool_calls})


def test_each_session_answered_from_calls_served_for_it_holds() -> None:
    requests = [_served(A, calls=1), _served(B, calls=1), _served(A, "Read A."), _served(B, "Read B.")]
    mocks = [{"name": "lookup", "session": A}, {"name": "lookup", "session": B}]
    views = compare_views({A: _reported("Read A.", 1), B: _reported("Read B.", 1)}, requests, mocks)
    assert [(v.recorder, v.problem) for v in views] == [
        ("gateway", None),
        ("gateway", None),
        ("mocks", None),
        ("mocks", None),
    ]
    assert "served 2 model call(s) for it" in views[0].text


def test_a_session_the_gateway_served_nothing_for_fails_naming_where_its_calls_went() -> None:
    # A shared client's stale header: every call of both turns filed under A, B's turn answered all the same.
    requests = [_served(A, calls=1), _served(A, calls=1), _served(A, "Read."), _served(A, "Read.")]
    views = compare_views({A: _reported("Read.", 1), B: _reported("Read.", 1)}, requests, [])
    assert views[0].problem is None
    assert views[1].problem is not None and "served no model call for it" in views[1].problem
    assert repr(A) in views[1].problem


def test_an_answer_served_for_the_other_session_fails_naming_the_gateway_log_index() -> None:
    requests = [_served(A, "Second.", index=4), _served(A, "First again.", index=5)]
    views = compare_views({B: _reported("Second.")}, [*requests[:1], _served(B, "other", index=6)], [])
    assert views[0].problem is not None and "gateway log index 4" in views[0].problem
    views = compare_views({A: _reported("Second.", 1)}, requests, [])
    assert views[0].problem is not None and "emitted 0" in views[0].problem


def test_the_mocks_serving_another_session_than_reported_fails_and_no_header_is_not_compared() -> None:
    reported = {A: _reported("Read.", 1), B: _reported("Read.", 1)}
    stale = [{"name": "lookup", "session": A}, {"name": "lookup", "session": A}]
    mocks = [v for v in compare_views(reported, [], stale) if v.recorder == "mocks"]
    assert [v.problem is None for v in mocks] == [False, False]
    assert "the mocks served 2" in (mocks[0].problem or "")
    assert compare_views(reported, [_served(None, "Read.")], [{"name": "lookup"}]) == []
