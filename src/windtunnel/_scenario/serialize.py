"""Reference decisions as JSON, the form they travel in to the model gateway's admin API."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from windtunnel._core.faults import fault_from_json
from windtunnel._core.reference import ReferenceDecision, ReferenceToolCall
from windtunnel.errors import UsageError


def decisions_to_json(decisions: Sequence[ReferenceDecision]) -> list[dict[str, Any]]:
    return [_decision_to_json(decision) for decision in decisions]


def _decision_to_json(decision: ReferenceDecision) -> dict[str, Any]:
    data: dict[str, Any] = {
        "content": decision.content,
        "tool_calls": [
            {"name": call.name, "arguments": dict(call.arguments)} for call in decision.tool_calls
        ],
    }
    if decision.fault is not None:  # only then: a decision without one travels exactly as before
        data["fault"] = decision.fault.to_json()
    return data


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
        fault = item.get("fault")
        decisions.append(
            ReferenceDecision(
                content=content if isinstance(content, str) else None,
                tool_calls=tuple(calls),
                fault=None if fault is None else fault_from_json(fault, f"decisions[{index}].fault"),
            )
        )
    return tuple(decisions)
