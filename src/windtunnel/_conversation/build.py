"""Turning evidence into a Conversation: a Trace (selftest and runner runs) or a check session's turns."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from windtunnel._conversation.align import align, key
from windtunnel._conversation.compare import final_problem, result_problem
from windtunnel._conversation.model import (
    CallView,
    Conversation,
    ConversationTurn,
    DiffKind,
    Disagreement,
    ModelCallView,
    ToolCallRow,
    View,
)
from windtunnel._trace.models import Trace
from windtunnel._trace.shapes import (
    answer,
    call_argument_text,
    call_arguments,
    call_name,
    offered_tool_names,
    said,
)
from windtunnel._wire.dialect import Said, ToolCall
from windtunnel._wire.registry import CHAT, dialect_of


@dataclass(frozen=True, slots=True)
class TurnEvidence:
    """One turn as the runner or a check saw it; `requests` is None when the gateway's log was not handed over."""

    user: str | None
    requests: list[dict[str, Any]] | None
    reported: list[Any]
    final: str | None


def conversation(
    *,
    title: str,
    runtime: str,
    source: Literal["trace", "session"],
    turns: Sequence[TurnEvidence],
    mock_calls: Sequence[Mapping[str, Any]] | None,
    error: str | None = None,
) -> Conversation:
    """The turns with their model calls and aligned tool calls, and every disagreement found."""
    with_model = any(turn.requests is not None for turn in turns)
    views = [View.MODEL] if with_model else []
    views += [View.MOCK] if mock_calls is not None else []
    views.append(View.RUNTIME)
    per_turn = _split_mock_calls(turns, mock_calls) if mock_calls is not None else [None] * len(turns)
    built, found = [], []
    for index, (turn, received) in enumerate(zip(turns, per_turn, strict=True)):
        requests = turn.requests or []
        model = _model_calls(requests) if with_model else None
        mock = [mock_view(call) for call in received] if received is not None else None
        rows, diffs = align(model, mock, [runtime_view(call) for call in turn.reported])
        answered = [_with_result(row, requests) for row in rows]
        built.append(
            ConversationTurn(
                index=index,
                user=turn.user,
                model_calls=[model_call_view(request) for request in requests],
                tool_calls=answered,
                final=turn.final,
            )
        )
        found += [Disagreement(turn=index, row=d.row, kind=d.kind, text=d.text) for d in diffs]
        found += _answer_disagreements(index, answered, turn.final, requests if with_model else [])
    return Conversation(
        title=title,
        runtime=runtime,
        source=source,
        views=views,
        turns=built,
        disagreements=found,
        error=error,
    )


def _answer_disagreements(
    turn: int, rows: Sequence[ToolCallRow], final: str | None, requests: Sequence[Mapping[str, Any]]
) -> list[Disagreement]:
    """Each result the model was sent against the mock's answer, and the reported answer against the
    model's last message (compare.py)."""
    found = [
        Disagreement(turn=turn, row=position, kind=DiffKind.RESULT, text=problem)
        for position, row in enumerate(rows)
        if (problem := result_problem(row)) is not None
    ]
    last = answer(requests[-1]) if requests else None
    if last is not None and not last.calls:  # the turn ended with the model's answer
        problem = final_problem(final, last.text)
        if problem is not None:
            found.append(Disagreement(turn=turn, row=None, kind=DiffKind.FINAL_ANSWER, text=problem))
    return found


def from_trace(trace: Trace, title: str | None = None) -> Conversation:
    """A run's conversation: its turns, the gateway's log by turn, and the calls the mocks received."""
    grouped: dict[int, list[dict[str, Any]]] = {}
    last = max(len(trace.turns) - 1, 0)
    for request in trace.model_requests or []:
        turn = request.get("turn")
        grouped.setdefault(turn if isinstance(turn, int) else last, []).append(request)
    turns = [
        TurnEvidence(
            user=turn.user,
            requests=grouped.get(turn.index, []) if trace.model_requests is not None else None,
            reported=list(turn.tool_calls),
            final=turn.content,
        )
        for turn in trace.turns
    ]
    if not turns and (trace.model_requests or trace.mcp_calls):  # the run broke off in its first turn
        turns = [TurnEvidence(user=None, requests=grouped.get(0, []), reported=[], final=None)]
    case = f" [{trace.reference_case}]" if trace.reference_case else ""
    return conversation(
        title=title or f"{trace.pack + '/' if trace.pack else ''}{trace.scenario}{case}",
        runtime=trace.runtime,
        source="trace",
        turns=turns,
        mock_calls=trace.mcp_calls,
        error=f"{trace.error.kind.value}: {trace.error.message}" if trace.error else None,
    )


def model_call_view(request: Mapping[str, Any]) -> ModelCallView:
    answered = answer(request)
    status = request.get("status")
    return ModelCallView(
        index=request.get("index") if isinstance(request.get("index"), int) else None,
        model=str(request["model"]) if request.get("model") is not None else None,
        messages=_shown(request),
        tools=offered_tool_names(request),
        sampling=dict(request.get("sampling") or {}),
        content=answered.text or None,
        tool_calls=[dict(call.native) for call in answered.calls],
        status=status if isinstance(status, int) else None,
        error=_text(request.get("error")),
        session=request.get("session") if isinstance(request.get("session"), str) else None,
    )


def mock_view(call: Mapping[str, Any]) -> CallView:
    arguments = call.get("arguments")
    return CallView(
        name=_text(call.get("name")),
        arguments=arguments,
        argument_text=json.dumps(arguments, ensure_ascii=False, default=str),
        server=_text(call.get("server")),
        result=call.get("result"),
        is_error=bool(call.get("is_error")),
        error=_text(call.get("error")),
    )


def runtime_view(call: Any) -> CallView:
    return CallView(
        name=call_name(call),
        arguments=call_arguments(call),
        argument_text=call_argument_text(call),
        call_id=_text(call.get("id")) if isinstance(call, Mapping) else None,
    )


def model_view(call: ToolCall) -> CallView:
    """A call the model emitted, read in its dialect: the id is the one its result answers (a Responses
    call_id, an Anthropic tool_use id); the name as emitted (align keys on the mock's bare name)."""
    return CallView(
        name=call.name,
        arguments=call.arguments,
        argument_text=call_argument_text(call.native),
        call_id=call.id,
    )


def _model_calls(requests: Sequence[Mapping[str, Any]]) -> list[tuple[int, CallView]]:
    return [
        (step, model_view(call)) for step, request in enumerate(requests) for call in answer(request).calls
    ]


def _with_result(row: ToolCallRow, requests: Sequence[Mapping[str, Any]]) -> ToolCallRow:
    """The row, with the tool result a later model call carried for the model view's call id."""
    call_id = row.model.call_id if row.model else None
    if call_id is None or row.step is None:
        return row
    for request in requests[row.step + 1 :]:
        for item in said(request):
            if item.role == "tool" and item.answers == call_id:
                return row.model_copy(update={"result_to_model": item.text})
    return row


def _shown(request: Mapping[str, Any]) -> list[Any]:
    """The prompt as the conversation viewer shows it: chat messages as logged; another dialect's items as
    chat-like messages (role, content text, tool_call_id, its native tool calls) built from its reading."""
    if dialect_of(request) is CHAT:
        messages = request.get("messages")
        return list(messages) if isinstance(messages, list) else []
    return [_as_message(item) for item in said(request)]


def _as_message(item: Said) -> dict[str, Any]:
    message: dict[str, Any] = {"role": item.role, "content": item.text}
    if item.answers is not None:
        message["tool_call_id"] = item.answers
    if item.calls:
        message["tool_calls"] = [dict(call.native) for call in item.calls]
    return message


def _split_mock_calls(
    turns: Sequence[TurnEvidence], calls: Sequence[Mapping[str, Any]]
) -> list[list[Mapping[str, Any]]]:
    """Each turn's share of the calls the mocks received: by time, from the turn's first model call to the
    next turn's; without the gateway's times, by matching each turn's reported calls, the rest to the last."""
    split: list[list[Mapping[str, Any]]] = [[] for _ in turns]
    if not turns:
        return split
    starts = [_started(turn) for turn in turns]
    if all(start is not None for start in starts):
        for call in calls:
            at = float(call.get("at") or 0.0)
            split[
                max([0, *(k for k, start in enumerate(starts) if start is not None and start <= at)])
            ].append(call)
        return split
    wanted = [[key(runtime_view(call)) for call in turn.reported] for turn in turns]
    for call in calls:
        mine = key(mock_view(call))
        owner = next((k for k, keys in enumerate(wanted) if mine in keys), len(turns) - 1)
        if mine in wanted[owner]:
            wanted[owner].remove(mine)
        split[owner].append(call)
    return split


def _started(turn: TurnEvidence) -> float | None:
    times = [float(r["at"]) for r in turn.requests or [] if isinstance(r.get("at"), int | float)]
    return min(times) if times else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None if value is None else str(value)
