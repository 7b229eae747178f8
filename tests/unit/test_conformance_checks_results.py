"""tool_results_reach_model's reading of a turn: each tool result pairs with its call, and must hold the token
that only the mock's answer to that call holds."""

from __future__ import annotations

import json
from typing import Any

from windtunnel._conformance.checks_results import (
    answered_results,
    result_probe,
    result_problems,
)
from windtunnel._trace.shapes import said
from windtunnel._wire.openai_chat import decision_message
from windtunnel._wire.reading import text_of

PROBE = result_probe("n0nce")
MOCK_ANSWERS = {
    "store": {"stored": "wt-key-n0nce"},
    "lookup": {"key": "wt-key-n0nce", "value": "wt-value-n0nce"},
    "echo": {"echo": {"token": "wt-echo-n0nce"}},
}


def chat_items(messages: list[Any]) -> list[Any]:
    """A chat conversation as the checks read it from the gateway log."""
    return said({"messages": messages})


def _turn(answer: Any = None, with_ids: bool = True) -> list[dict[str, Any]]:
    """The messages of the probe's last model call, each tool answered by `answer(name)` (the mock's by
    default), as a runtime that passes results on would send them."""
    answer = answer or (lambda name: json.dumps(MOCK_ANSWERS[name]))
    messages: list[dict[str, Any]] = [{"role": "system", "content": "s"}, {"role": "user", "content": "go"}]
    for decision in PROBE.script[:-1]:
        message = decision_message(decision)
        messages.append({"role": "assistant", "content": None, "tool_calls": message["tool_calls"]})
        for call in message["tool_calls"]:
            result = {"role": "tool", "content": answer(call["function"]["name"])}
            if with_ids:
                result["tool_call_id"] = call["id"]
            messages.append(result)
    return messages


def test_each_tool_result_holds_a_token_of_its_own() -> None:
    tokens = PROBE.tokens
    assert set(tokens) == set(MOCK_ANSWERS)
    for name, token in tokens.items():
        others = [json.dumps(answer) for other, answer in MOCK_ANSWERS.items() if other != name]
        assert token in json.dumps(MOCK_ANSWERS[name])
        assert name == "store" or not any(token in text for text in others)


def test_results_passed_on_as_text_or_content_parts_hold() -> None:
    assert result_problems(answered_results(chat_items(_turn())), PROBE.tokens) == []
    as_parts = _turn(lambda name: [{"type": "text", "text": json.dumps(MOCK_ANSWERS[name])}])
    assert result_problems(answered_results(chat_items(as_parts)), PROBE.tokens) == []


def test_results_without_ids_pair_by_position() -> None:
    answered = answered_results(chat_items(_turn(with_ids=False)))
    assert [name for name, _ in answered] == ["store", "lookup", "echo"]
    assert result_problems(answered, PROBE.tokens) == []


def test_summarised_emptied_and_swapped_results_fail() -> None:
    summarised = result_problems(
        answered_results(chat_items(_turn(lambda name: f"{name} succeeded"))), PROBE.tokens
    )
    assert len(summarised) == 3 and "'lookup succeeded'" in summarised[1]
    emptied = result_problems(answered_results(chat_items(_turn(lambda name: ""))), PROBE.tokens)
    assert len(emptied) == 3
    swap = {"lookup": "echo", "echo": "lookup", "store": "store"}
    swapped = _turn(lambda name: json.dumps(MOCK_ANSWERS[swap[name]]))
    problems = result_problems(answered_results(chat_items(swapped)), PROBE.tokens)
    assert [p.split(" result")[0] for p in problems] == ["the model got the lookup", "the model got the echo"]


def test_a_result_never_sent_is_named() -> None:
    turn = [m for m in _turn() if not (m["role"] == "tool" and "wt-echo" in m["content"])]
    assert result_problems(answered_results(chat_items(turn)), PROBE.tokens) == [
        "the model was never sent a result for echo"
    ]


def test_results_of_earlier_turns_do_not_count() -> None:
    earlier = [*_turn(), {"role": "assistant", "content": "done"}]
    answered = answered_results(chat_items([*earlier, {"role": "user", "content": "again"}]))
    assert answered == []
    assert result_problems(answered, PROBE.tokens)[0].startswith("the model was never sent a result for")


def test_result_text_reads_any_content() -> None:
    assert text_of("plain") == "plain"
    assert text_of([{"type": "text", "text": "a"}, {"type": "image", "data": "x"}]) == (
        'a\n{"type": "image", "data": "x"}'
    )
    assert text_of(None) == ""
    assert text_of({"value": "naïve"}) == '{"value": "naïve"}'
