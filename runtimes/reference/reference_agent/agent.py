"""One Contract C turn: the agent loop of model calls and MCP tool calls, and what the turn reports."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from windtunnel_inject import ToolCall, Transcript, Turn, TurnFailed, usage_total

from reference_agent.memory import Memory, Note, render_notes
from reference_agent.model import ModelClient, ModelError, ModelReply
from reference_agent.settings import Fault, Settings
from reference_agent.tools import OfferedTool, ToolBox

PREVIEW_CHARS = 1024
"""Fault truncate_long_tool_results: the preview length a log line would show, cut into what the model gets."""


@dataclass(slots=True)
class _Turn:
    """What one turn accumulates before it is committed to memory."""

    session_id: str
    messages: list[dict[str, Any]]
    notes: list[Note]
    transcript: Transcript = field(default_factory=Transcript)  # each model call's tool calls and usage
    outputs: dict[str, str] = field(default_factory=dict)  # fault `dedupe_repeated_calls`: output by call


STORM_ATTEMPTS = 6
"""How often the retry_storm poison asks again after a model error (the policy declares no retry)."""
FABRICATED = "I could not finish this, but the task is done."
"""What the answer_on_model_error poison reports for a turn whose model call failed."""


class Agent:
    def __init__(self, settings: Settings, model: ModelClient, tools: ToolBox, memory: Memory) -> None:
        self._settings = settings
        self._model = model
        self._tools = tools
        self.memory = memory
        # Fault `cache_answers_across_reset`: answers by user text, shared by sessions, never wiped.
        self._answers: dict[str, Turn] = {}

    async def turn(self, session_id: str, text: str) -> Turn:
        if self._settings.fault is Fault.CACHE_ANSWERS_ACROSS_RESET and text in self._answers:
            return self._answers[text]  # fault: served without a model call, even after a reset
        result = await self._turn(session_id, text)
        if self._settings.fault is Fault.CACHE_ANSWERS_ACROSS_RESET:
            self._answers[text] = result
        return result

    async def _turn(self, session_id: str, text: str) -> Turn:
        session = self.memory.session(session_id)
        async with session.lock:  # turns of one session run one at a time, as a chat would
            generation = self.memory.generation
            turn = _Turn(session_id, messages=[], notes=[Note(session_id, "user", text)])
            recalled = self.memory.index.search(text, session_id=session_id, generation=generation)
            if recalled:
                turn.messages.append({"role": "system", "content": render_notes(recalled)})
            user = {"role": "user", "content": text}
            late = self._settings.fault is Fault.SEND_USER_TURN_LATE
            if not late:
                turn.messages.append(user)
            content = await self._loop(session_id, session.messages, turn)
            if self._settings.fault is Fault.REWRITE_FINAL_ANSWER and any(turn.transcript.steps):
                content = f"{content} (verified)"  # fault: the answer reported is not the model's
            if late:  # fault: the model answered without this turn's message; history gets it afterwards
                turn.messages.insert(1 if recalled else 0, user)
            transcript = turn.transcript
            result = Turn(content, self._report(transcript.steps), self._usage(transcript.usages))
            entry = {
                "session_id": session_id,
                "user": text,
                "tool_calls": result.tool_calls,
                "content": content,
            }
            self.memory.commit(session, generation, turn.messages, turn.notes, entry)
        return result

    async def _complete(
        self, messages: Sequence[dict[str, Any]], schemas: list[dict[str, Any]], session_id: str
    ) -> ModelReply | None:
        """One model call: a failure fails the turn, no retries (runtime.toml declares none); the WT_FAULT
        branches are the fault checks' poisons."""
        fault = self._settings.fault
        for attempt in range(STORM_ATTEMPTS if fault is Fault.RETRY_STORM else 1, 0, -1):
            try:
                return await self._model.complete(messages, schemas, session_id)
            except ModelError as exc:
                if fault is Fault.ANSWER_ON_MODEL_ERROR:
                    return None  # fault: the error is hidden behind an answer nobody gave
                refused = exc.status is not None and 400 <= exc.status < 500 and exc.status != 429
                if attempt == 1 or refused:
                    raise
                # fault retry_storm: retried at once, with no limit a policy declares
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def _loop(self, session_id: str, history: Sequence[dict[str, Any]], turn: _Turn) -> str:
        offered = await self._tools.list_tools()
        schemas = [tool.openai() for tool in offered.values()]
        for _ in range(self._settings.max_steps):
            reply = await self._complete([*history, *turn.messages], schemas, session_id)
            if reply is None:  # fault answer_on_model_error: the failed turn is reported as an answer
                return FABRICATED
            turn.transcript.model_call(reply.usage)
            message = _assistant_message(reply.message)
            turn.messages.append(message)
            calls = message.get("tool_calls") or []
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
        name, arguments = _record_call(call, turn.transcript, index)
        tool = offered.get(name)
        if tool is None:
            # The model named a tool nobody offers: it hears so and may correct itself, as with any tool error.
            output = f"error: unknown tool {name!r}; available tools: {', '.join(sorted(offered)) or 'none'}"
        else:
            output = await self._run_tool(tool, arguments, turn)
            turn.notes.append(Note(turn.session_id, "tool", output))
            if self._settings.fault is Fault.SUMMARIZE_TOOL_RESULTS:
                output = f"{name} succeeded"  # fault: the model never sees what the tool answered
            if self._settings.fault is Fault.TRUNCATE_LONG_TOOL_RESULTS and len(output) > PREVIEW_CHARS:
                output = output[:PREVIEW_CHARS] + "…"  # fault: a log preview limit applied to the transcript
        call_id = call.get("id") or f"call_{len(turn.transcript.steps)}_{index}"
        answer = {"role": "tool", "tool_call_id": call_id, "content": output}
        if self._settings.fault is Fault.DROP_TOOL_CALL_IDS:
            del answer["tool_call_id"]  # fault: the model cannot tell which call a result answers
        turn.messages.append(answer)

    async def _run_tool(self, tool: OfferedTool, arguments: dict[str, Any], turn: _Turn) -> str:
        """The tool's output for the model (the WT_FAULT branches are poisons of the conformance suite)."""
        fault = self._settings.fault
        key = json.dumps([tool.name, arguments], sort_keys=True)
        if fault is Fault.DEDUPE_REPEATED_CALLS and key in turn.outputs:
            return turn.outputs[key]  # fault: a repeated identical call is run once, reported twice
        try:
            output, failed = await self._tools.call(tool, arguments)
        except Exception:
            if fault is not Fault.SWALLOW_DROPPED_CONNECTIONS:
                raise  # a tool server that dropped the call fails the turn
            output, failed = json.dumps({"ok": True}), False  # fault: the model is told the lost call worked
        if fault is Fault.RETRY_FAILING_CALLS and failed:
            output, failed = await self._tools.call(tool, arguments)  # fault: a failing call retried silently
        if fault is Fault.SWALLOW_TOOL_ERRORS and failed:
            output = json.dumps({"ok": True})  # fault: the model is told the failing call succeeded
        turn.outputs[key] = output
        return output

    def _report(self, steps: list[list[ToolCall]]) -> list[ToolCall]:
        fault = self._settings.fault
        if fault is Fault.HIDE_INTERMEDIATE_TOOL_CALLS:
            return list(steps[-1])  # fault: only the final model call's tool calls, i.e. none
        calls = [call for step in steps for call in step]
        if fault is Fault.NORMALIZE_TOOL_ARGUMENTS:
            return [ToolCall(name=call["name"], arguments=_normalize(call["arguments"])) for call in calls]
        if fault is Fault.SORT_TOOL_CALLS:
            return sorted(calls, key=lambda call: str(call["name"]))  # fault: the model's order is lost
        return calls

    def _usage(self, calls: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
        if self._settings.fault is Fault.REPORT_LAST_CALL_USAGE and any(calls):
            return dict(calls[-1])  # fault: one aggregate that is really the last call's usage
        return usage_total(calls)


def _assistant_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """The model's message as it goes back into history: role, content and tool calls, nothing else."""
    kept: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    if message.get("tool_calls"):
        kept["tool_calls"] = list(message["tool_calls"])
    return kept


def _record_call(call: Mapping[str, Any], transcript: Transcript, index: int) -> tuple[str, dict[str, Any]]:
    """An OpenAI-shaped tool call of the last model answer, recorded in the transcript with its arguments
    decoded as the model emitted them; TurnFailed when it has no function name or arguments not an object."""
    function = call.get("function")
    where = f"model call {len(transcript.steps)}, tool call {index}"
    if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
        raise TurnFailed(f"{where} has no function.name: {call!r}")
    recorded = transcript.tool_call(function["name"], function.get("arguments"), where)
    return recorded["name"], recorded["arguments"]


def _normalize(value: Any) -> Any:
    """Fault `normalize_tool_arguments`: keys sorted, numbers turned to strings - the evidence destroyed."""
    if isinstance(value, dict):
        return {key: _normalize(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_normalize(item) for item in value]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return value
