"""One Contract C turn: the agent loop of model calls and MCP tool calls, and what the turn reports."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reference_agent.memory import Memory, Note, render_notes
from reference_agent.model import ModelClient
from reference_agent.settings import Fault, Settings
from reference_agent.tools import OfferedTool, ToolBox


class TurnFailed(Exception):
    """The turn cannot finish (bad tool call, endless loop); answered 502 with this message."""


@dataclass(frozen=True, slots=True)
class TurnResult:
    content: str
    tool_calls: list[dict[str, Any]]
    usage: dict[str, Any] | None

    def envelope(self) -> dict[str, Any]:
        body: dict[str, Any] = {"content": self.content, "tool_calls": self.tool_calls}
        if self.usage is not None:
            body["usage"] = self.usage
        return body


@dataclass(slots=True)
class _Turn:
    """What one turn accumulates before it is committed to memory."""

    session_id: str
    messages: list[dict[str, Any]]
    steps: list[list[dict[str, Any]]]  # the tool calls each model call emitted, decoded, in order
    usages: list[dict[str, Any]]
    notes: list[Note]


class Agent:
    def __init__(self, settings: Settings, model: ModelClient, tools: ToolBox, memory: Memory) -> None:
        self._settings = settings
        self._model = model
        self._tools = tools
        self.memory = memory
        # Fault `cache_answers_across_reset`: answers by user text, shared by sessions, never wiped.
        self._answers: dict[str, TurnResult] = {}

    async def inject(self, session_id: str, text: str) -> TurnResult:
        if self._settings.fault is Fault.CACHE_ANSWERS_ACROSS_RESET and text in self._answers:
            return self._answers[text]  # fault: served without a model call, even after a reset
        result = await self._inject(session_id, text)
        if self._settings.fault is Fault.CACHE_ANSWERS_ACROSS_RESET:
            self._answers[text] = result
        return result

    async def _inject(self, session_id: str, text: str) -> TurnResult:
        session = self.memory.session(session_id)
        async with session.lock:  # turns of one session run one at a time, as a chat would
            generation = self.memory.generation
            turn = _Turn(session_id, messages=[], steps=[], usages=[], notes=[Note(session_id, "user", text)])
            recalled = self.memory.index.search(text, session_id=session_id, generation=generation)
            if recalled:
                turn.messages.append({"role": "system", "content": render_notes(recalled)})
            user = {"role": "user", "content": text}
            late = self._settings.fault is Fault.SEND_USER_TURN_LATE
            if not late:
                turn.messages.append(user)
            content = await self._loop(session_id, session.messages, turn)
            if late:  # fault: the model answered without this turn's message; history gets it afterwards
                turn.messages.insert(1 if recalled else 0, user)
            result = TurnResult(content, self._report(turn.steps), self._usage(turn.usages))
            entry = {
                "session_id": session_id,
                "user": text,
                "tool_calls": result.tool_calls,
                "content": content,
            }
            self.memory.commit(session, generation, turn.messages, turn.notes, entry)
        return result

    async def _loop(self, session_id: str, history: Sequence[dict[str, Any]], turn: _Turn) -> str:
        offered = await self._tools.list_tools()
        schemas = [tool.openai() for tool in offered.values()]
        for _ in range(self._settings.max_steps):
            reply = await self._model.complete([*history, *turn.messages], schemas, session_id)
            turn.usages.append(reply.usage or {})
            message = _assistant_message(reply.message)
            turn.messages.append(message)
            calls = message.get("tool_calls") or []
            turn.steps.append([])
            if not calls:
                return str(message.get("content") or "")
            for index, call in enumerate(calls):
                await self._execute(offered, call, index, turn)
        raise TurnFailed(
            f"the model asked for tools {self._settings.max_steps} times without a final answer "
            "(step cap WT_MAX_STEPS reached)"
        )

    async def _execute(
        self, offered: Mapping[str, OfferedTool], call: Mapping[str, Any], index: int, turn: _Turn
    ) -> None:
        name, arguments = _decode_call(call, len(turn.steps), index)
        turn.steps[-1].append({"name": name, "arguments": arguments})
        tool = offered.get(name)
        if tool is None:
            # The model named a tool nobody offers: it hears so and may correct itself, as with any tool error.
            output = f"error: unknown tool {name!r}; available tools: {', '.join(sorted(offered)) or 'none'}"
        else:
            output = await self._tools.call(tool, arguments)
            turn.notes.append(Note(turn.session_id, "tool", output))
            if self._settings.fault is Fault.SUMMARIZE_TOOL_RESULTS:
                output = f"{name} succeeded"  # fault: the model never sees what the tool answered
        call_id = call.get("id") or f"call_{len(turn.steps)}_{index}"
        answer = {"role": "tool", "tool_call_id": call_id, "content": output}
        if self._settings.fault is Fault.DROP_TOOL_CALL_IDS:
            del answer["tool_call_id"]  # fault: the model cannot tell which call a result answers
        turn.messages.append(answer)

    def _report(self, steps: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
        fault = self._settings.fault
        if fault is Fault.HIDE_INTERMEDIATE_TOOL_CALLS:
            return list(steps[-1])  # fault: only the final model call's tool calls, i.e. none
        calls = [call for step in steps for call in step]
        if fault is Fault.NORMALIZE_TOOL_ARGUMENTS:
            return [{"name": call["name"], "arguments": _normalize(call["arguments"])} for call in calls]
        if fault is Fault.SORT_TOOL_CALLS:
            return sorted(calls, key=lambda call: str(call["name"]))  # fault: the model's order is lost
        return calls

    def _usage(self, calls: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
        if self._settings.fault is Fault.REPORT_LAST_CALL_USAGE and any(calls):
            return dict(calls[-1])  # fault: one aggregate that is really the last call's usage
        return _usage(calls)


def _assistant_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """The model's message as it goes back into history: role, content and tool calls, nothing else."""
    kept: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    if message.get("tool_calls"):
        kept["tool_calls"] = list(message["tool_calls"])
    return kept


def _decode_call(call: Mapping[str, Any], step: int, index: int) -> tuple[str, dict[str, Any]]:
    function = call.get("function")
    where = f"model call {step}, tool call {index}"
    if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
        raise TurnFailed(f"{where} has no function.name: {call!r}")
    text = function.get("arguments") or "{}"
    try:
        arguments = json.loads(text) if isinstance(text, str) else text
    except json.JSONDecodeError as exc:
        raise TurnFailed(
            f"{where} ({function['name']}) has arguments that are not JSON ({exc}): {text[:300]!r}"
        ) from exc
    if not isinstance(arguments, dict):
        # Contract C reports arguments as an object; anything else cannot be reported without reshaping it.
        raise TurnFailed(
            f"{where} ({function['name']}) has arguments that are not a JSON object: {text[:300]!r}"
        )
    return function["name"], arguments


def _normalize(value: Any) -> Any:
    """Fault `normalize_tool_arguments`: keys sorted, numbers turned to strings - the evidence destroyed."""
    if isinstance(value, dict):
        return {key: _normalize(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_normalize(item) for item in value]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return value


def _usage(calls: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The turn's usage: every reported count summed, plus one usage dict per model call (seed 002)."""
    if not any(calls):
        return None  # no model call reported usage: say nothing rather than report zeros
    total: dict[str, Any] = {}
    for call in calls:
        _add(total, call)
    total["calls"] = [dict(call) for call in calls]
    return total


def _add(total: dict[str, Any], usage: Mapping[str, Any]) -> None:
    for key, value in usage.items():
        if isinstance(value, bool):
            continue
        current = total.get(key)
        if isinstance(value, int | float) and (current is None or isinstance(current, int | float)):
            total[key] = (current or 0) + value
        elif isinstance(value, Mapping) and (current is None or isinstance(current, dict)):
            _add(total.setdefault(key, {}), value)
