"""The Anthropic Messages dialect: a message streams as the documented events and reassembles to itself;
the request checks name the field the Messages API would refuse."""

from __future__ import annotations

import json
from typing import Any

import pytest

from windtunnel._core.reference import ReferenceDecision, ReferenceToolCall
from windtunnel._wire.registry import MESSAGES
from windtunnel._wire.sse import PIECE

ARGS = {"note": "東京" * PIECE}
BODY: dict[str, Any] = {"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "go"}]}


def test_a_message_streams_and_reassembles_to_itself() -> None:
    decision = ReferenceDecision(content="hallo", tool_calls=(ReferenceToolCall("lookup", ARGS),))
    message = MESSAGES.render(decision, BODY)
    events = MESSAGES.events(message, BODY)
    kinds = [e["type"] for e in events]
    assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]
    assert events[0]["message"]["content"] == [] and events[0]["message"]["stop_reason"] is None
    pieces = [
        e["delta"]["partial_json"] for e in events if e["type"] == "content_block_delta" and e["index"] == 1
    ]
    assert len(pieces) > 1 and json.loads("".join(pieces)) == ARGS
    assert MESSAGES.assemble(events) == message
    assert MESSAGES.frame(events[0]).startswith(b"event: message_start\ndata: ")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"max_tokens": None}, "max_tokens"),
        ({"messages": []}, "messages"),
        ({"messages": [{"role": "tool", "content": "x"}]}, "messages[0].role"),
        (
            {"messages": [{"role": "user", "content": [{"type": "tool_result"}]}]},
            "messages[0].content[0].tool_use_id",
        ),
        ({"temperature": 1.5}, "temperature"),
        ({"system": 3}, "system"),
        ({"tool_choice": {"type": "sometimes"}}, "tool_choice"),
    ],
)
def test_a_bad_request_names_its_field(change: dict[str, Any], field: str) -> None:
    body = {**BODY, **change}
    problem = MESSAGES.required_problem(body) or MESSAGES.field_problem(body)
    assert problem is not None and problem[1] == field and field.split("[", maxsplit=1)[0] in problem[0]


def test_a_system_message_in_the_conversation_is_taken_and_read_as_system() -> None:
    """Claude Code 2.1 sends its environment context as a `system` message after the user's first turn."""
    context = [{"type": "text", "text": "# Environment", "cache_control": {"type": "ephemeral"}}]
    messages = [{"role": "user", "content": "go"}, {"role": "system", "content": context}]
    body = {**BODY, "messages": messages}
    assert MESSAGES.required_problem(body) is None and MESSAGES.field_problem(body) is None
    said = MESSAGES.transcript({"messages": messages, "extra": {"system": "be brief"}})
    assert [(item.role, item.text) for item in said] == [
        ("system", "be brief"),
        ("user", "go"),
        ("system", "# Environment"),
    ]
