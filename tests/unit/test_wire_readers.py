"""The gateway log read back in every dialect: calls and their results pair by each format's own ids, names
map back to the mock's bare name, and the three views agree on a turn logged in Anthropic or Responses form."""

from __future__ import annotations

from typing import Any

import pytest

from windtunnel._conformance.checks_results import answered_results
from windtunnel._conformance.evidence import tool_id_problems
from windtunnel._conversation.build import TurnEvidence, conversation
from windtunnel._report.conversation_html import render_conversation
from windtunnel._trace.shapes import (
    answer,
    call_argument_text,
    call_arguments,
    call_name,
    offered_tool_names,
    said,
)
from windtunnel._wire.registry import CHAT, MESSAGES, RESPONSES

ARGS = {"key": "café ☕"}


def anthropic_entries(result_for: str = "toolu_1") -> list[dict[str, Any]]:
    use = {"type": "tool_use", "id": "toolu_1", "name": "mcp__notes__lookup", "input": ARGS}
    result = {"type": "tool_result", "tool_use_id": result_for, "content": "value: ☕", "is_error": True}
    user = {"role": "user", "content": "Read café."}
    tools = [{"name": "mcp__notes__lookup", "input_schema": {}}]
    first = {
        "wire": "anthropic-messages",
        "extra": {"system": "Be brief."},
        "messages": [user],
        "tools": tools,
    }
    first["response"] = {"type": "message", "role": "assistant", "content": [use], "stop_reason": "tool_use"}
    second = {"wire": "anthropic-messages", "extra": {"system": "Be brief."}, "tools": tools}
    second["messages"] = [
        user,
        {"role": "assistant", "content": [use]},
        {"role": "user", "content": [result]},
    ]
    second["response"] = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": "done"}],
    }
    return [first, second]


def responses_entries(result_for: str = "call_1") -> list[dict[str, Any]]:
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "lookup"}
    call |= {"namespace": "mcp__notes", "arguments": '{"key": "café ☕"}'}
    tools: list[Any] = [
        {"type": "namespace", "name": "mcp__notes", "tools": [{"type": "function", "name": "lookup"}]}
    ]
    first: dict[str, Any] = {
        "wire": "openai-responses",
        "extra": {"instructions": "Be brief."},
        "messages": "Read café.",
    }
    first |= {"tools": tools, "response": {"object": "response", "output": [call]}}
    output = {"type": "function_call_output", "call_id": result_for, "output": "value: ☕"}
    second: dict[str, Any] = {
        "wire": "openai-responses",
        "extra": {"instructions": "Be brief."},
        "tools": tools,
    }
    second["messages"] = [{"role": "user", "content": "Read café."}, call, output]
    done = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}
    second["response"] = {"object": "response", "output": [done]}
    return [first, second]


@pytest.mark.parametrize("entries", [anthropic_entries, responses_entries], ids=["anthropic", "responses"])
def test_calls_and_results_pair_by_the_dialects_own_ids(entries: Any) -> None:
    first, second = entries()
    emitted = answer(first).calls
    assert [(c.name, c.arguments) for c in emitted] == [("mcp__notes__lookup", ARGS)]
    assert [item.role for item in said(second)] == ["system", "user", "assistant", "tool"]
    assert said(second)[0].text == "Be brief."
    assert tool_id_problems(said(second)) == []
    assert answered_results(said(second)) == [("lookup", "value: ☕")], "qualified names map to the mock's"
    assert answer(second).text == "done" and not answer(second).calls
    assert offered_tool_names(second) == ["mcp__notes__lookup"]
    broken = entries(result_for="elsewhere")[1]
    assert any("did not call" in problem for problem in tool_id_problems(said(broken)))


def test_raw_calls_keep_their_native_shape() -> None:
    use = answer(anthropic_entries()[0]).calls[0].native
    assert use["type"] == "tool_use" and call_name(use) == "mcp__notes__lookup"
    assert call_arguments(use) == ARGS and call_argument_text(use) == '{"key": "café ☕"}'
    item = answer(responses_entries()[0]).calls[0].native
    assert item["type"] == "function_call" and item["namespace"] == "mcp__notes"
    assert call_argument_text(item) == '{"key": "café ☕"}'


def test_anthropic_is_error_reaches_the_reading() -> None:
    assert [item.is_error for item in said(anthropic_entries()[1]) if item.role == "tool"] == [True]


@pytest.mark.parametrize("entries", [anthropic_entries, responses_entries], ids=["anthropic", "responses"])
def test_the_three_views_agree_on_a_qualified_call(entries: Any) -> None:
    requests = [{**entry, "index": n, "status": 200, "at": 1.0 + n} for n, entry in enumerate(entries())]
    mock = [{"name": "lookup", "arguments": ARGS, "result": {"value": "☕"}}]
    reported = [{"name": "mcp__notes__lookup", "arguments": ARGS}]
    turn = TurnEvidence(user="Read café.", requests=requests, reported=reported, final="done")
    built = conversation(
        title="t", runtime="r", source="session", turns=[turn], mock_calls=[{**mock[0], "at": 1.5}]
    )
    assert built.disagreements == []
    row = built.turns[0].tool_calls[0]
    assert row.model is not None and row.model.call_id in ("toolu_1", "call_1")
    assert row.result_to_model == "value: ☕"


def test_sampling_reads_in_wind_tunnels_vocabulary_whatever_the_dialect() -> None:
    wanted = {"temperature": 0.2, "max_tokens": 64, "tool_choice": "required"}
    assert CHAT.neutral_sampling(wanted) == wanted
    native = {"temperature": 0.2, "max_tokens": 64, "tool_choice": {"type": "any"}}
    assert MESSAGES.neutral_sampling(native) == wanted
    native = {"temperature": 0.2, "max_output_tokens": 64, "tool_choice": "required"}
    assert RESPONSES.neutral_sampling(native) == wanted
    named = {"type": "function", "function": {"name": "lookup"}}
    assert (
        MESSAGES.neutral_sampling({"tool_choice": {"type": "tool", "name": "lookup"}})["tool_choice"] == named
    )
    assert (
        RESPONSES.neutral_sampling({"tool_choice": {"type": "function", "name": "lookup"}})["tool_choice"]
        == named
    )


@pytest.mark.parametrize("entries", [anthropic_entries, responses_entries], ids=["anthropic", "responses"])
def test_the_conversation_viewer_shows_each_dialects_calls_and_results(entries: Any) -> None:
    requests = [{**entry, "index": n, "status": 200, "at": 1.0 + n} for n, entry in enumerate(entries())]
    turn = TurnEvidence(user="Read café.", requests=requests, reported=[], final="done")
    page = render_conversation(
        conversation(title="t", runtime="r", source="session", turns=[turn], mock_calls=None), "c"
    )
    assert "Be brief." in page and "value: ☕" in page and "mcp__notes" in page
    assert "(toolu_1)" in page or "(call_1)" in page, "a tool result is labelled with the call id it answers"
