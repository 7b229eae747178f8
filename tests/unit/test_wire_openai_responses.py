"""The Responses dialect: an answer streams as the documented events and reassembles to itself; the gateway
remembers a bounded number of answers for previous_response_id."""

from __future__ import annotations

import json
from typing import Any

from windtunnel._core.reference import ReferenceDecision, ReferenceToolCall
from windtunnel._wire.dialect import Memory
from windtunnel._wire.openai_responses import REMEMBERED
from windtunnel._wire.registry import RESPONSES
from windtunnel._wire.sse import PIECE

ARGS = {"note": "ü" * (3 * PIECE)}
BODY: dict[str, Any] = {"model": "m", "input": "go", "tools": [{"type": "function", "name": "lookup"}]}


def test_an_answer_streams_and_reassembles_to_itself() -> None:
    decision = ReferenceDecision(content="hallo", tool_calls=(ReferenceToolCall("lookup", ARGS),))
    response = RESPONSES.render(decision, BODY)
    events = RESPONSES.events(response, BODY)
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    deltas = [e["delta"] for e in events if e["type"] == "response.function_call_arguments.delta"]
    assert len(deltas) > 1 and json.loads("".join(deltas)) == ARGS
    assert RESPONSES.assemble(events) == response
    assert (
        RESPONSES.assemble([e for e in events if e["type"] != "response.completed"])["output"]
        == (response["output"])
    ), "without response.completed the finished items still make the answer"


def test_remembered_answers_are_bounded_and_a_forgotten_id_is_named() -> None:
    memory: Memory = {}
    first = RESPONSES.render(ReferenceDecision(content="a"), BODY)
    RESPONSES.remember(BODY, first, None, memory)
    history, problem = RESPONSES.recall({"previous_response_id": first["id"]}, memory)
    assert problem is None and history == [{"role": "user", "content": "go"}, *first["output"]]
    for _ in range(REMEMBERED):
        RESPONSES.remember(BODY, RESPONSES.render(ReferenceDecision(content="b"), BODY), None, memory)
    assert len(memory) == REMEMBERED
    _history, problem = RESPONSES.recall({"previous_response_id": first["id"]}, memory)
    assert problem is not None and first["id"] in problem[0] and problem[1] == "previous_response_id"
