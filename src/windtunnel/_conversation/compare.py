"""The one comparison of the three views: which disagreements of a conversation break integrity.

`conversation()` (build.py) aligns each turn's calls and lists every disagreement; this module judges
them, for the runner's integrity check of every run and for the conformance checks alike:
- calls a runtime ran in parallel may reach the mocks in any order: the runtime's order is compared with
  the model's, never with the mocks' arrival order (align.py);
- a call to a tool no mock serves is evidence (the model invented a tool and the runtime told it so), not
  a broken integrity;
- the result the model is sent for a call must carry what the mock answered for that call.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from windtunnel._conversation.align import describe
from windtunnel._conversation.model import CallView, Conversation, DiffKind, Disagreement, ToolCallRow
from windtunnel._wire.tools import bare

INTEGRITY_KINDS = frozenset(
    {
        DiffKind.NOT_REPORTED,
        DiffKind.REPORTED_NOT_RECEIVED,
        DiffKind.NOT_RECEIVED,
        DiffKind.NOT_EMITTED,
        DiffKind.ARGUMENTS,
        DiffKind.ORDER,
        DiffKind.RESULT,
    }
)
"""What breaks a run's integrity; the final answer is the conformance kit's question (final_answer)."""
_TO_A_TOOL = frozenset({DiffKind.REPORTED_NOT_RECEIVED, DiffKind.NOT_RECEIVED, DiffKind.NOT_EMITTED})


@dataclass(frozen=True, slots=True)
class Judged:
    """A conversation's broken-integrity disagreements, and its calls to tools no mock serves (evidence)."""

    broken: list[Disagreement] = field(default_factory=list)
    unknown_tools: list[dict[str, Any]] = field(default_factory=list)


class Served(Protocol):
    def get(self) -> frozenset[str] | None:
        """The tool names the run's mocks serve; None: unknown."""


@dataclass(frozen=True, slots=True)
class KnownTools:
    """Served names read ahead of time (None: unknown)."""

    names: frozenset[str] | None

    def get(self) -> frozenset[str] | None:
        return self.names


def judge(conversation: Conversation, served: Served, kinds: frozenset[DiffKind]) -> Judged:
    """The disagreements of `kinds`; one about a call to a tool the run's mocks do not serve is moved to
    `unknown_tools` (`served` is asked only then)."""
    broken, unknown = [], []
    for found in conversation.disagreements:
        if found.kind not in kinds:
            continue
        row = _row(conversation, found)
        call = _any_view(row) if row is not None else None
        if found.kind in _TO_A_TOOL and call is not None and _unserved(call.name, served):
            if row is not None and row.runtime is not None:
                unknown.append({"turn": found.turn, "name": call.name, "arguments": call.arguments})
            continue
        broken.append(found)
    return Judged(broken, unknown)


def _unserved(name: str | None, served: Served) -> bool:
    names = served.get()
    return names is not None and (name if name is None else bare(name)) not in names


def result_problem(row: ToolCallRow) -> str | None:
    """Why the result the model was sent for this call is not what the mock answered; None when it is, or
    when a side is missing (a missing call or result is another disagreement's concern)."""
    if row.mock is None or row.result_to_model is None:
        return None
    wanted = list(_answer_parts(row.mock))
    sent = row.result_to_model
    missing = [part for part in wanted if not any(form in sent for form in _spellings(part))]
    if not missing:
        return None
    return (
        f"the model was sent {_excerpt(sent)} for {describe(row.mock)}, but the mock answered "
        f"{_excerpt(_mock_answer(row.mock))} (missing {_excerpt(missing[0])})"
    )


def final_problem(final: str | None, served_last: str | None) -> str | None:
    """Why the turn's reported answer is not the model's last message as served; None when it is."""
    if served_last is None or final is None:
        return None
    if final.strip() == served_last.strip():
        return None
    return f"the runtime reported the answer {_excerpt(final)}; the model's last message was {_excerpt(served_last)}"


def _answer_parts(mock: CallView) -> Iterator[str]:
    """The texts a faithful result carries: the error's message, or every string in the answer."""
    if mock.is_error:
        if mock.error:
            yield mock.error
        return
    yield from (text for text in _leaves(mock.result) if text.strip())


def _leaves(value: Any) -> Iterator[str]:
    """Every string, key and number of a JSON value, as text: what any faithful rendering of it keeps
    (whatever its spacing, key quoting or escaping); true, false and null are spelled too differently."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, float) and value.is_integer():
        # 25.0 is the number 25: JavaScript (Claude Code) renders it "25", Python "25.0"; "25" is in both.
        yield json.dumps(int(value))
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield json.dumps(value)
    elif isinstance(value, Mapping):
        for name, item in value.items():
            yield str(name)
            yield from _leaves(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _leaves(item)


def _spellings(text: str) -> set[str]:
    """The text as itself and as a JSON string's inside, either escaping, once or twice (a runtime may pass
    the result on as JSON text of its own, or the MCP content parts as JSON)."""
    once = {text, _inside(text, ascii_only=False), _inside(text, ascii_only=True)}
    return once | {_inside(form, ascii_only=ascii_only) for form in once for ascii_only in (False, True)}


def _inside(text: str, *, ascii_only: bool) -> str:
    return json.dumps(text, ensure_ascii=ascii_only)[1:-1]


def _mock_answer(mock: CallView) -> str:
    return mock.error or "" if mock.is_error else json.dumps(mock.result, ensure_ascii=False, default=str)


def _excerpt(text: str, limit: int = 160) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _row(conversation: Conversation, found: Disagreement) -> ToolCallRow | None:
    if found.row is None or found.turn >= len(conversation.turns):
        return None
    rows = conversation.turns[found.turn].tool_calls
    return rows[found.row] if found.row < len(rows) else None


def _any_view(row: ToolCallRow) -> CallView | None:
    return row.runtime or row.mock or row.model
