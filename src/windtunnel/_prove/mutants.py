"""Mutants of a golden's decisions: the small wrong turns a gate must catch.

Operators: drop a tool call (or its whole decision, when it was the decision's only call), change
an argument value (numbers +1 and x2, strings altered, booleans flipped; nested values too), swap a
tool (another tool of the same pack, same arguments), change the final content (a generic
sentence). Every mutant is re-validated as a reference case; one that would be invalid is skipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from windtunnel._core.reference import ReferenceCase, ReferenceDecision, ReferenceToolCall
from windtunnel._scenario.model import Scenario, validate_reference_case
from windtunnel.errors import ScenarioError

Operator = Literal["drop_call", "change_argument", "swap_tool", "change_content"]
GENERIC_CONTENT = "Thank you for your message. I have looked into your request."

Path = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class Mutant:
    """One mutant: which operator, where in the golden, what changed, and the mutated case itself."""

    golden: str
    operator: Operator
    where: str
    detail: str
    case: ReferenceCase


@dataclass(frozen=True, slots=True)
class Derived:
    mutants: tuple[Mutant, ...]
    skipped_invalid: int


def derive_mutants(scenario: Scenario, golden: ReferenceCase, tools: Sequence[str]) -> Derived:
    """Every valid mutant of `golden`; `tools` are the pack's tool names, for swapping."""
    decisions = tuple(golden.decisions)
    raw = [
        *_drops(decisions),
        *_argument_changes(decisions),
        *_swaps(decisions, sorted(set(tools))),
        *_content_changes(decisions),
    ]
    kept: list[Mutant] = []
    for number, (operator, where, detail, mutated) in enumerate(raw):
        case = ReferenceCase(
            name=f"{golden.name}~mutant-{number}",
            kind="poison",
            reason=f"mutant of {golden.name}: {detail}",
            decisions=mutated,
        )
        try:
            validate_reference_case(scenario, case)
        except ScenarioError:
            continue
        kept.append(Mutant(golden.name, operator, where, detail, case))
    return Derived(tuple(kept), len(raw) - len(kept))


_Raw = tuple[Operator, str, str, tuple[ReferenceDecision, ...]]


def _with(
    decisions: tuple[ReferenceDecision, ...], index: int, decision: ReferenceDecision
) -> tuple[ReferenceDecision, ...]:
    return (*decisions[:index], decision, *decisions[index + 1 :])


def _with_call(
    decisions: tuple[ReferenceDecision, ...], index: int, number: int, call: ReferenceToolCall
) -> tuple[ReferenceDecision, ...]:
    """`decisions` with tool call `number` of decision `index` replaced by `call`."""
    calls = list(decisions[index].tool_calls)
    calls[number] = call
    return _with(decisions, index, replace(decisions[index], tool_calls=tuple(calls)))


def _show(call: ReferenceToolCall) -> str:
    return f"{call.name}({json.dumps(dict(call.arguments), sort_keys=True)})"


def _drops(decisions: tuple[ReferenceDecision, ...]) -> Iterator[_Raw]:
    for index, decision in enumerate(decisions):
        for number, call in enumerate(decision.tool_calls):
            where = f"decisions[{index}].tool_calls[{number}]"
            rest = tuple(c for position, c in enumerate(decision.tool_calls) if position != number)
            if rest:
                yield (
                    "drop_call",
                    where,
                    f"drops {_show(call)}",
                    _with(decisions, index, replace(decision, tool_calls=rest)),
                )
            else:
                dropped = (*decisions[:index], *decisions[index + 1 :])
                yield "drop_call", where, f"drops {_show(call)} with its decision", dropped


def _argument_changes(decisions: tuple[ReferenceDecision, ...]) -> Iterator[_Raw]:
    for index, decision in enumerate(decisions):
        for number, call in enumerate(decision.tool_calls):
            for path, value in _leaves(dict(call.arguments), ()):
                for changed, how in _alterations(value):
                    altered = ReferenceToolCall(call.name, _set(dict(call.arguments), path, changed))
                    where = f"decisions[{index}].tool_calls[{number}].arguments{_dotted(path)}"
                    detail = f"{call.name} argument {_dotted(path)[1:]}: {value!r} -> {changed!r} ({how})"
                    yield "change_argument", where, detail, _with_call(decisions, index, number, altered)


def _swaps(decisions: tuple[ReferenceDecision, ...], tools: Sequence[str]) -> Iterator[_Raw]:
    for index, decision in enumerate(decisions):
        for number, call in enumerate(decision.tool_calls):
            for other in tools:
                if other == call.name:
                    continue
                swapped = ReferenceToolCall(other, dict(call.arguments))
                where = f"decisions[{index}].tool_calls[{number}].name"
                detail = f"calls {other} instead of {call.name}, with the same arguments"
                yield "swap_tool", where, detail, _with_call(decisions, index, number, swapped)


def _content_changes(decisions: tuple[ReferenceDecision, ...]) -> Iterator[_Raw]:
    last = len(decisions) - 1
    if last < 0 or decisions[last].tool_calls or decisions[last].content == GENERIC_CONTENT:
        return
    detail = f"final content {decisions[last].content!r} -> {GENERIC_CONTENT!r}"
    changed = replace(decisions[last], content=GENERIC_CONTENT)
    yield "change_content", f"decisions[{last}].content", detail, _with(decisions, last, changed)


def _leaves(value: Any, path: Path) -> Iterator[tuple[Path, Any]]:
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from _leaves(item, (*path, str(key)))
    elif isinstance(value, list | tuple):
        for position, item in enumerate(value):
            yield from _leaves(item, (*path, position))
    else:
        yield path, value


def _dotted(path: Path) -> str:
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path)


def _set(arguments: dict[str, Any], path: Path, value: Any) -> dict[str, Any]:
    copied: dict[str, Any] = json.loads(json.dumps(arguments))  # lists, not tuples: settable
    target: Any = copied
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    return copied


def _alterations(value: Any) -> list[tuple[Any, str]]:
    if isinstance(value, bool):
        return [(not value, "flipped")]
    if isinstance(value, int | float):
        changes = [(value + 1, "+1")]
        if value * 2 != value:
            changes.append((value * 2, "x2"))
        return changes
    if isinstance(value, str):
        return [(f"{value} (mutated)" if value else "mutated", "altered")]
    return []  # null has no neighbour worth trying
