"""Line up the model's, the mocks' and the runtime's views of a turn's tool calls, one to one.

Calls match on (name, decoded arguments) first, in order, so repeated identical calls pair up first with
first; what is left pairs by name alone (the arguments then differ); what is still left gets a row of its
own after the row of its view's previous call. Only views that were available at all can disagree.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from windtunnel._conversation.model import CallView, DiffKind, ToolCallRow, View
from windtunnel._wire.tools import bare

_SEEN = {
    View.MODEL: "the model emitted",
    View.MOCK: "the mock received",
    View.RUNTIME: "the runtime reported",
}
_UNSEEN = {
    View.MODEL: "the model did not emit it",
    View.MOCK: "no mock received it",
    View.RUNTIME: "the runtime did not report it",
}


@dataclass(frozen=True, slots=True)
class Found:
    """A disagreement within one turn; `row` indexes the aligned rows (None: the turn as a whole)."""

    row: int | None
    kind: DiffKind
    text: str


@dataclass(slots=True)
class _Row:
    step: int | None
    views: dict[View, CallView] = field(default_factory=dict)
    positions: dict[View, int] = field(default_factory=dict)


def key(view: CallView) -> str:
    """What pairs calls across views: the mock's own (bare) tool name and the decoded arguments. A harness
    may offer a tool qualified (Claude Code's mcp__notes__lookup) where the mock knows it as lookup."""
    return json.dumps([_bare(view), _number_values(view.arguments)], sort_keys=True, default=str)


def _number_values(value: Any) -> Any:
    """`value` with every integral float as its int: 48.0 and 48 are one JSON number, and a harness in
    JavaScript (Claude Code) parses the model's 48.0 into 48 before the mock or the report sees it."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {name: _number_values(item) for name, item in value.items()}
    if isinstance(value, list):
        return [_number_values(item) for item in value]
    return value


def _bare(view: CallView) -> str | None:
    return bare(view.name) if view.name is not None else None


def describe(view: CallView) -> str:
    """`name {"arg": ...}`: a call as one line of text."""
    arguments = json.dumps(view.arguments, ensure_ascii=False, default=str)
    return f"{view.name or '(no name)'} {arguments}"


def align(
    model: Sequence[tuple[int, CallView]] | None,
    mock: Sequence[CallView] | None,
    runtime: Sequence[CallView] | None,
) -> tuple[list[ToolCallRow], list[Found]]:
    """The aligned rows and their disagreements; a view passed as None was not available."""
    views: dict[View, list[tuple[int | None, CallView]]] = {}
    if model is not None:
        views[View.MODEL] = list(model)
    if mock is not None:
        views[View.MOCK] = [(None, call) for call in mock]
    if runtime is not None:
        views[View.RUNTIME] = [(None, call) for call in runtime]
    rows: list[_Row] = []
    for view, calls in views.items():
        _place(rows, view, calls)
    aligned = [
        ToolCallRow(
            step=row.step,
            model=row.views.get(View.MODEL),
            mock=row.views.get(View.MOCK),
            runtime=row.views.get(View.RUNTIME),
        )
        for row in rows
    ]
    return aligned, _disagreements(rows, set(views))


def _place(rows: list[_Row], view: View, calls: list[tuple[int | None, CallView]]) -> None:
    placed: dict[int, _Row] = {}
    keys: dict[int, str] = {}  # by id(): each call's key computed once, not once per comparison

    def key_of(call: CallView) -> str:
        if id(call) not in keys:
            keys[id(call)] = key(call)
        return keys[id(call)]

    for position, (_, call) in enumerate(calls):
        wanted = key_of(call)
        row = _first(rows, view, lambda other, wanted=wanted: key_of(other) == wanted)
        if row is not None:
            placed[position] = _take(row, view, call, position)
    for position, (_, call) in enumerate(calls):
        if position not in placed and (
            row := _first(rows, view, lambda other, call=call: _bare(other) == _bare(call))
        ):
            placed[position] = _take(row, view, call, position)
    for position, (step, call) in enumerate(calls):
        if position in placed:
            continue
        before = [placed[p] for p in range(position) if p in placed]
        at = rows.index(before[-1]) + 1 if before else 0
        previous = rows[at - 1].step if at else None
        row = _Row(step=step if step is not None else previous)
        rows.insert(at, row)
        placed[position] = _take(row, view, call, position)


def _first(rows: list[_Row], view: View, matches: Any) -> _Row | None:
    for row in rows:
        if view not in row.views and any(matches(other) for other in row.views.values()):
            return row
    return None


def _take(row: _Row, view: View, call: CallView, position: int) -> _Row:
    row.views[view] = call
    row.positions[view] = position
    return row


def _disagreements(rows: list[_Row], available: set[View]) -> list[Found]:
    found: list[Found] = []
    for index, row in enumerate(rows):
        found += _row_disagreements(index, row, available)
    order = _order(rows)
    if order is not None:
        found.append(order)
    return found


def _row_disagreements(index: int, row: _Row, available: set[View]) -> list[Found]:
    present = [view for view in View if view in row.views]
    missing = [view for view in View if view in available and view not in row.views]
    found = []
    call = row.views[present[0]]
    if missing:
        seen = " and ".join(_SEEN[view] for view in present)
        unseen = " and ".join(_UNSEEN[view] for view in missing)
        found.append(Found(index, _kind(present, missing), f"{seen} {describe(call)} but {unseen}"))
    if len({key(row.views[view]) for view in present}) > 1:
        spelled = "; ".join(f"{view.value}: {describe(row.views[view])}" for view in present)
        found.append(Found(index, DiffKind.ARGUMENTS, f"the views disagree on this call: {spelled}"))
    return found


def _kind(present: list[View], missing: list[View]) -> DiffKind:
    if View.MOCK in present and View.RUNTIME in missing:
        return DiffKind.NOT_REPORTED
    if View.RUNTIME in present and View.MOCK in missing:
        return DiffKind.REPORTED_NOT_RECEIVED
    if View.MODEL in present and View.MOCK in missing:
        return DiffKind.NOT_RECEIVED
    if View.MODEL in missing:
        return DiffKind.NOT_EMITTED
    return DiffKind.NOT_REPORTED


def _order(rows: list[_Row]) -> Found | None:
    """The runtime's report order against the model's emission order (the mocks' order is not evidence:
    a runtime may run a turn's calls in parallel)."""
    both = [row for row in rows if View.MODEL in row.views and View.RUNTIME in row.views]
    reported = [row.positions[View.RUNTIME] for row in both]
    if reported == sorted(reported):
        return None
    emitted = ", ".join(str(row.views[View.MODEL].name) for row in both)
    said = ", ".join(
        str(row.views[View.MODEL].name) for row in sorted(both, key=lambda r: r.positions[View.RUNTIME])
    )
    return Found(
        None,
        DiffKind.ORDER,
        f"the runtime reported the calls in another order: emitted {emitted}; reported {said}",
    )
