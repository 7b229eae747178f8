"""Script mode: decisions in order, session scoping, refusals instead of default answers, install validation."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from windtunnel._chat.mode import ChatRequest, GatewayMode, ModeReply
from windtunnel._core.reference import ReferenceDecision, ReferenceToolCall
from windtunnel._gateway.script import REFUSED, ScriptMode, ScriptStore, parse_install
from windtunnel._scenario.serialize import decisions_to_json
from windtunnel.errors import UsageError

LOOKUP = ReferenceDecision(tool_calls=(ReferenceToolCall("lookup_order", {"order_id": "A-1"}),))
DONE = ReferenceDecision(content="done")


def ask(mode: ScriptMode, session: str | None = None, **body: Any) -> ModeReply:
    request_body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], **body}
    request = ChatRequest(method="POST", path="/v1/chat/completions", body=request_body, session=session)
    return asyncio.run(mode.complete(request))


def message(reply: ModeReply) -> dict[str, Any]:
    assert reply.completion is not None, reply.error
    result: dict[str, Any] = reply.completion["choices"][0]["message"]
    return result


def test_script_mode_is_a_gateway_mode() -> None:
    assert isinstance(ScriptMode(), GatewayMode)


def test_decisions_are_served_in_order_then_the_script_is_exhausted() -> None:
    mode = ScriptMode()
    mode.store.install("refund-golden", [LOOKUP, DONE])
    first = ask(mode)
    assert message(first)["tool_calls"][0]["function"]["name"] == "lookup_order"
    assert json.loads(message(first)["tool_calls"][0]["function"]["arguments"]) == {"order_id": "A-1"}
    assert first.completion is not None and first.completion["choices"][0]["finish_reason"] == "tool_calls"
    assert first.context == {"case": "refund-golden", "decision": 0}
    assert message(ask(mode)) == {"role": "assistant", "content": "done", "refusal": None}
    third = ask(mode)
    assert third.completion is None
    assert third.status == REFUSED
    assert third.error_code == "script_exhausted"
    assert third.error is not None
    assert "refund-golden" in third.error and "scripted 2" in third.error and "call 3" in third.error
    assert third.context == {"case": "refund-golden"}


def test_no_script_is_refused_never_answered() -> None:
    reply = ask(ScriptMode(), session="s1")
    assert reply.completion is None
    assert reply.status == REFUSED
    assert reply.error_code == "no_script"
    assert reply.error is not None and "'s1'" in reply.error


def test_usage_is_always_served_and_model_echoed() -> None:
    mode = ScriptMode()
    mode.store.install("c", [DONE])
    reply = ask(mode, model="tiny")
    assert reply.completion is not None
    assert reply.completion["model"] == "tiny"
    assert set(reply.completion["usage"]) == {"prompt_tokens", "completion_tokens", "total_tokens"}


def test_a_session_script_wins_over_the_global_one() -> None:
    mode = ScriptMode()
    mode.store.install("global-case", [ReferenceDecision(content="global")])
    mode.store.install("alice-case", [ReferenceDecision(content="alice")], session="alice")
    assert message(ask(mode, session="alice"))["content"] == "alice"
    assert message(ask(mode, session="bob"))["content"] == "global"
    # alice's own script is used up: she is refused, not handed the global script's decisions
    refused = ask(mode, session="alice")
    assert refused.error_code == "script_exhausted"
    assert refused.context == {"case": "alice-case"}


def test_without_a_session_header_only_the_global_script_answers() -> None:
    mode = ScriptMode()
    mode.store.install("alice-case", [DONE], session="alice")
    assert ask(mode).error_code == "no_script"


def test_reinstalling_replaces_and_clearing_removes() -> None:
    store = ScriptStore()
    store.install("a", [DONE, DONE])
    store.install("b", [DONE])
    store.install("s", [DONE], session="s")
    assert store.snapshot() == {
        "global": {"case": "b", "session": None, "total": 1, "served": 0, "remaining": 1},
        "sessions": {"s": {"case": "s", "session": "s", "total": 1, "served": 0, "remaining": 1}},
    }
    assert store.take("s").decision == DONE
    assert store.snapshot()["sessions"]["s"]["remaining"] == 0
    assert store.clear("nobody") == 0
    assert store.clear("s") == 1
    assert store.snapshot()["sessions"] == {}
    assert store.clear() == 1
    assert store.snapshot() == {"global": None, "sessions": {}}


def test_a_valid_install_round_trips_decisions() -> None:
    body = {"case": "c", "session": "s", "decisions": decisions_to_json([LOOKUP, DONE])}
    install = parse_install(body)
    assert (install.case, install.session, install.decisions) == ("c", "s", (LOOKUP, DONE))
    assert parse_install({"case": "c", "decisions": decisions_to_json([DONE])}).session is None


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ([], "body"),
        ({"case": "c", "decisions": [{"content": "x"}], "sesion": "s"}, "sesion"),
        ({"decisions": [{"content": "x"}]}, "case"),
        ({"case": "", "decisions": [{"content": "x"}]}, "case"),
        ({"case": "c", "session": 3, "decisions": [{"content": "x"}]}, "session"),
        ({"case": "c", "session": "", "decisions": [{"content": "x"}]}, "session"),
        ({"case": "c"}, "decisions"),
        ({"case": "c", "decisions": []}, "decisions"),
        ({"case": "c", "decisions": {"content": "x"}}, "decisions"),
        ({"case": "c", "decisions": [{"content": "x"}, "oops"]}, "decisions[1]"),
        ({"case": "c", "decisions": [{"content": 5}]}, "decisions[0].content"),
        ({"case": "c", "decisions": [{"content": None, "tool_calls": []}]}, "decisions[0]"),
        ({"case": "c", "decisions": [{"tool_calls": [{"name": 1}]}]}, "decisions[0].tool_calls[0]"),
        (
            {"case": "c", "decisions": [{"tool_calls": [{"name": "t", "arguments": [1]}]}]},
            "decisions[0].tool_calls[0]",
        ),
    ],
)
def test_a_bad_install_names_the_bad_field(body: Any, field: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_install(body)
    assert caught.value.field == field  # type: ignore[attr-defined]
    assert field.split(".", maxsplit=1)[0].split("[", maxsplit=1)[0] in str(caught.value)
