"""Reference decisions as JSON, the form they travel in to the model gateway's admin API."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from windtunnel._core.reference import ReferenceDecision, ReferenceToolCall
from windtunnel.errors import UsageError


def decisions_to_json(decisions: Sequence[ReferenceDecision]) -> list[dict[str, Any]]:
    return [
        {
            "content": decision.content,
            "tool_calls": [
                {"name": call.name, "arguments": dict(call.arguments)} for call in decision.tool_calls
            ],
        }
        for decision in decisions
    ]


def decisions_from_json(data: Any) -> tuple[ReferenceDecision, ...]:
    """The inverse of decisions_to_json; raises UsageError naming the bad entry."""
    if not isinstance(data, list):
        raise UsageError(
            "decisions must be a JSON list",
            hint="send [{'content': ..., 'tool_calls': [...]}]",
            field="decisions",
        )
    decisions = []
    for index, item in enumerate(data):
        if not isinstance(item, dict) or not isinstance(item.get("tool_calls", []), list):
            raise UsageError(
                f"decisions[{index}] must be an object with content and a tool_calls list",
                hint="send {'content': str|null, 'tool_calls': [{'name': str, 'arguments': {...}}]}",
                field=f"decisions[{index}]",
            )
        calls = []
        for number, call in enumerate(item.get("tool_calls", [])):
            if (
                not isinstance(call, dict)
                or not isinstance(call.get("name"), str)
                or not isinstance(call.get("arguments", {}), dict)
            ):
                raise UsageError(
                    f"decisions[{index}].tool_calls[{number}] needs a string name and object arguments",
                    hint="send {'name': 'tool', 'arguments': {...}}",
                    field=f"decisions[{index}].tool_calls[{number}]",
                )
            calls.append(ReferenceToolCall(call["name"], call.get("arguments", {})))
        content = item.get("content")
        decisions.append(
            ReferenceDecision(content=content if isinstance(content, str) else None, tool_calls=tuple(calls))
        )
    return tuple(decisions)
