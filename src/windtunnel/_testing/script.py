"""A scripted model for tests: the decisions the gateway answers with, written as "call this tool, then say
that" (ReferenceDecision, the gateway's script format)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from windtunnel._core.reference import ReferenceDecision, ReferenceToolCall


class ScriptedModel:
    """Model turns in order: `ScriptedModel().calls_tool("lookup_order", order_id="A-1").answers("Shipped.")`.

    Each calls_tool() is one model response asking for a tool; answers() is a final text response. The gateway
    (script mode) serves them one per model call and refuses any call past the end (`script_exhausted`).
    """

    def __init__(self) -> None:
        self._decisions: list[ReferenceDecision] = []

    def calls_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, /, **kwargs: Any
    ) -> ScriptedModel:
        """One model response calling tool `name` with `arguments` (or keyword arguments)."""
        return self.calls_tools((name, {**(arguments or {}), **kwargs}))

    def calls_tools(self, *calls: tuple[str, Mapping[str, Any]]) -> ScriptedModel:
        """One model response calling several tools at once, each `(name, arguments)`."""
        tool_calls = tuple(ReferenceToolCall(name, dict(arguments)) for name, arguments in calls)
        self._decisions.append(ReferenceDecision(tool_calls=tool_calls))
        return self

    def answers(self, text: str) -> ScriptedModel:
        """A final response with `text` and no tool call: the agent's answer."""
        self._decisions.append(ReferenceDecision(content=text))
        return self

    @property
    def decisions(self) -> tuple[ReferenceDecision, ...]:
        return tuple(self._decisions)

    def __len__(self) -> int:
        return len(self._decisions)
