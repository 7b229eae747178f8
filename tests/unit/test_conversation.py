"""The conversation evidence model: three views of every tool call aligned one to one, and their
disagreements; built from a Trace the way the runner writes one."""

from __future__ import annotations

import json
from typing import Any

from windtunnel._conversation.align import align
from windtunnel._conversation.build import TurnEvidence, conversation, from_trace, mock_view, runtime_view
from windtunnel._conversation.compare import result_problem
from windtunnel._conversation.model import CallView, DiffKind, ToolCallRow, View
from windtunnel._trace.models import Trace, Turn


def wire(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    """A tool call as the gateway serves it (OpenAI wire shape, arguments as JSON text)."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def received(name: str, at: float = 0.0, **arguments: Any) -> dict[str, Any]:
    """A call as an MCP mock logs it."""
    return {"server": "notes", "name": name, "arguments": arguments, "result": {"ok": name}, "is_error": False,
            "violation": False, "error": None, "at": at}  # fmt: skip


def flat(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def views(calls: list[dict[str, Any]]) -> list[CallView]:
    return [runtime_view(call) for call in calls]


def test_three_agreeing_views_line_up_with_no_disagreement() -> None:
    model = [
        (0, runtime_view(wire("c1", "lookup", key="a"))),
        (1, runtime_view(wire("c2", "store", key="b"))),
    ]
    mock = [mock_view(received("store", key="b")), mock_view(received("lookup", key="a"))]  # arrival order
    rows, found = align(model, mock, views([flat("lookup", key="a"), flat("store", key="b")]))
    assert found == []
    assert [
        (r.step, r.model and r.model.name, r.mock and r.mock.name, r.runtime and r.runtime.name) for r in rows
    ] == [
        (0, "lookup", "lookup", "lookup"),
        (1, "store", "store", "store"),
    ]


def test_repeated_identical_calls_pair_one_to_one_and_the_unreported_one_is_named() -> None:
    model = [(0, runtime_view(wire(f"c{i}", "lookup", key="a"))) for i in range(3)]
    mock = [mock_view(received("lookup", key="a")) for _ in range(3)]
    rows, found = align(model, mock, views([flat("lookup", key="a")] * 2))
    assert len(rows) == 3
    assert [r.runtime is not None for r in rows] == [True, True, False]
    assert [r.model.call_id for r in rows if r.model] == ["c0", "c1", "c2"]
    assert [(f.row, f.kind) for f in found] == [(2, DiffKind.NOT_REPORTED)]
    assert found[0].text == (
        'the model emitted and the mock received lookup {"key": "a"} but the runtime did not report it'
    )


def test_a_reported_call_no_mock_received_gets_its_own_row_after_its_predecessor() -> None:
    model = [(0, runtime_view(wire("c1", "lookup", key="a")))]
    mock = [mock_view(received("lookup", key="a"))]
    rows, found = align(model, mock, views([flat("lookup", key="a"), flat("invented", x=1)]))
    assert [r.runtime.name if r.runtime else None for r in rows] == ["lookup", "invented"]
    assert rows[1].step == 0 and rows[1].model is None and rows[1].mock is None
    kinds = {f.kind for f in found}
    assert kinds == {DiffKind.REPORTED_NOT_RECEIVED}
    assert "the runtime reported invented" in found[0].text and "the model did not emit it" in found[0].text


def test_altered_arguments_stay_in_one_row_and_are_a_disagreement() -> None:
    model = [(0, runtime_view(wire("c1", "echo", amount=37.5, note="x")))]
    mock = [mock_view(received("echo", amount=37.5, note="x"))]
    rows, found = align(model, mock, views([flat("echo", amount="37.5", note="x")]))
    assert len(rows) == 1 and rows[0].runtime is not None
    assert [f.kind for f in found] == [DiffKind.ARGUMENTS]
    assert 'runtime: echo {"amount": "37.5", "note": "x"}' in found[0].text


def test_a_reordered_report_is_an_order_disagreement_not_a_missing_call() -> None:
    model = [(0, runtime_view(wire("c1", "store", key="z"))), (0, runtime_view(wire("c2", "echo", n=1)))]
    mock = [mock_view(received("echo", n=1)), mock_view(received("store", key="z"))]
    _, found = align(model, mock, views([flat("echo", n=1), flat("store", key="z")]))
    assert [(f.row, f.kind) for f in found] == [(None, DiffKind.ORDER)]
    assert "emitted store, echo; reported echo, store" in found[0].text


def test_a_view_that_was_not_available_is_never_a_disagreement() -> None:
    rows, found = align(None, None, views([flat("lookup", key="a")]))
    assert found == [] and rows[0].runtime is not None and rows[0].model is None
    rows, found = align(None, [mock_view(received("lookup", key="a"))], [])
    assert [f.kind for f in found] == [DiffKind.NOT_REPORTED]
    assert found[0].text.endswith("but the runtime did not report it")


def _request(index: int, turn: int, at: float, messages: list[Any], calls: list[Any]) -> dict[str, Any]:
    return {
        "index": index, "at": at, "turn": turn, "model": "wt-scripted", "messages": messages,
        "tools": [{"type": "function", "function": {"name": "lookup"}}], "sampling": {"temperature": 0},
        "status": 200, "response": {"role": "assistant", "content": None if calls else "done", "tool_calls": calls},
    }  # fmt: skip


def _trace() -> Trace:
    first = wire("call_1", "lookup", key="a")
    history = [{"role": "user", "content": "look a up"}]
    answered = [*history, {"role": "assistant", "tool_calls": [first]},
                {"role": "tool", "tool_call_id": "call_1", "content": '{"ok": "lookup"}'}]  # fmt: skip
    second = [{"role": "user", "content": "and b?"}]
    return Trace(
        run_id="r", scenario="two_turns", pack="kit", runtime="reference", agent_id="a", variant_id="v",
        session_id="s", reference_case="golden", started_at="2024-01-01T00:00:00Z",
        turns=[
            Turn(index=0, user="look a up", response={}, shape="flat", content="done", tool_calls=[]),
            Turn(index=1, user="and b?", response={}, shape="flat", content="done",
                 tool_calls=[flat("lookup", key="b")]),
        ],
        model_requests=[
            _request(0, 0, 10.0, history, [first]),
            _request(1, 0, 11.0, answered, []),
            _request(2, 1, 20.0, second, [wire("call_2", "lookup", key="b")]),
            _request(3, 1, 21.0, second, []),
        ],
        mcp_calls=[received("lookup", 10.5, key="a"), received("lookup", 20.5, key="b")],
    )  # fmt: skip


def test_a_trace_becomes_turns_with_model_calls_results_and_the_hidden_call() -> None:
    built = from_trace(_trace())
    assert built.title == "kit/two_turns [golden]" and built.source == "trace"
    assert built.views == [View.MODEL, View.MOCK, View.RUNTIME]
    first, second = built.turns
    assert (first.user, len(first.model_calls), first.final) == ("look a up", 2, "done")
    assert first.model_calls[0].sampling == {"temperature": 0} and first.model_calls[0].tools == ["lookup"]
    (row,) = first.tool_calls
    assert (
        row.mock is not None
        and row.mock.result == {"ok": "lookup"}
        and row.result_to_model == '{"ok": "lookup"}'
    )
    assert row.runtime is None  # the runtime reported nothing in turn 1
    assert [(d.turn, d.row, d.kind) for d in built.disagreements] == [(0, 0, DiffKind.NOT_REPORTED)]
    assert second.tool_calls[0].mock is not None and second.tool_calls[0].mock.arguments == {"key": "b"}
    assert json.loads(built.model_dump_json())["schema_version"] == 1


def test_without_the_gateway_log_mock_calls_go_to_the_turn_that_reported_them() -> None:
    turns = [
        TurnEvidence(user="one", requests=None, reported=[flat("lookup", key="b")], final=None),
        TurnEvidence(user="two", requests=None, reported=[flat("lookup", key="a")], final=None),
    ]
    built = conversation(
        title="t", runtime="r", source="session", turns=turns,
        mock_calls=[received("lookup", key="a"), received("lookup", key="b"), received("store", key="c")],
    )  # fmt: skip
    assert built.views == [View.MOCK, View.RUNTIME]
    one, two = built.turns
    assert [r.mock.arguments for r in one.tool_calls if r.mock] == [{"key": "b"}]
    assert [r.mock.name for r in two.tool_calls if r.mock] == [
        "lookup",
        "store",
    ]  # the unmatched one: last turn
    assert [(d.turn, d.kind) for d in built.disagreements] == [(1, DiffKind.NOT_REPORTED)]


def test_a_run_that_broke_off_before_its_first_turn_ended_still_shows_what_was_seen() -> None:
    # send() raised: the runner salvaged the gateway's log (no turn numbers) and the mocks' calls
    salvaged = [{k: v for k, v in r.items() if k != "turn"} for r in (_trace().model_requests or [])[:2]]
    trace = _trace().model_copy(
        update={"turns": [], "model_requests": salvaged, "mcp_calls": [received("lookup", key="a")]}
    )
    built = from_trace(trace)
    assert len(built.turns) == 1 and built.turns[0].user is None
    assert len(built.turns[0].model_calls) == 2
    assert [d.kind for d in built.disagreements] == [DiffKind.NOT_REPORTED]


def test_a_result_the_mock_did_not_answer_and_a_rewritten_final_answer_are_disagreements() -> None:
    trace = _trace()
    requests = trace.model_requests or []
    summarised = [*requests[1]["messages"][:2], {"role": "tool", "tool_call_id": "call_1", "content": "ok"}]
    requests[1] = {**requests[1], "messages": summarised}
    trace.turns[1] = trace.turns[1].model_copy(update={"content": "something else"})
    found = [(d.turn, d.row, d.kind) for d in from_trace(trace).disagreements]
    assert (0, 0, DiffKind.RESULT) in found and (1, None, DiffKind.FINAL_ANSWER) in found
    text = next(d.text for d in from_trace(trace).disagreements if d.kind is DiffKind.RESULT)
    assert "'ok'" in text and "lookup" in text  # both sides shown


def test_a_result_passed_on_as_json_text_of_its_own_still_carries_the_mocks_answer() -> None:
    trace = _trace()
    requests = trace.model_requests or []
    compact = [
        *requests[1]["messages"][:2],
        {"role": "tool", "tool_call_id": "call_1", "content": '{"ok":"lookup"}'},
    ]
    requests[1] = {**requests[1], "messages": compact}
    assert DiffKind.RESULT not in {d.kind for d in from_trace(trace).disagreements}


def test_an_integral_float_and_its_int_are_one_argument_but_a_string_is_not() -> None:
    """The model's 48.0 reaches the mock and the report as 48 through a harness in JavaScript (Claude Code)."""
    model = [(0, runtime_view(wire("c1", "refund", amount=48.0)))]
    mock = [mock_view(received("refund", amount=48))]
    rows, found = align(model, mock, views([flat("mcp__billing__refund", amount=48)]))
    assert len(rows) == 1 and found == []
    _, altered = align(model, mock, views([flat("refund", amount="48")]))
    assert [f.kind for f in altered] == [DiffKind.ARGUMENTS]


def test_a_result_with_an_integral_float_rendered_by_javascript_carries_the_mocks_answer() -> None:
    """The mock answered 25.0; Claude Code sends the model its JSON as JavaScript renders it, 25."""
    mock = mock_view({**received("lookup"), "result": {"price": 25.0, "note": "x"}})
    row = ToolCallRow(step=0, mock=mock, result_to_model='{"price":25,"note":"x"}')
    assert result_problem(row) is None
    assert (
        result_problem(ToolCallRow(step=0, mock=mock, result_to_model='{"price":26,"note":"x"}')) is not None
    )
