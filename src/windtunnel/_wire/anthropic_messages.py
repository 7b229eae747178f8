"""The Anthropic Messages dialect: POST /v1/messages requests, messages with text and tool_use blocks, errors.

A request needs `model`, `max_tokens` and a non-empty `messages` (roles user and assistant; the system
prompt is the top-level `system`). Tool results come back as `tool_result` blocks in a user message,
paired to their call by `tool_use_id`, with `is_error`. Usage counts cached input apart from
`input_tokens` (`cache_creation_input_tokens`, `cache_read_input_tokens`): windtunnel._trace.usage adds them.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from typing import Any

from windtunnel._core.reference import ReferenceDecision
from windtunnel._wire import fields
from windtunnel._wire.anthropic_stream import assemble_message, message_events
from windtunnel._wire.body import messages_problem, model_problem
from windtunnel._wire.dialect import Said, Stateless, ToolCall
from windtunnel._wire.fields import Problem
from windtunnel._wire.openai_chat import estimate_tokens
from windtunnel._wire.reading import text_of
from windtunnel._wire.sse import NamedEvents
from windtunnel._wire.tools import resolve

SAMPLING_KEYS = frozenset(
    {"temperature", "top_p", "top_k", "max_tokens", "tool_choice", "stop_sequences", "thinking"}
)
ROLES = frozenset({"user", "assistant", "system"})
"""Message roles the Messages API takes: Claude Code 2.1 sends its environment context as a `system` message
in `messages` (beside the top-level `system` prompt), so a mid-conversation system message is accepted."""
ERROR_TYPES = {"not_found": "not_found_error", "bad_method": "invalid_request_error"}

_message_numbers: Iterator[int] = itertools.count(1)
_tool_numbers: Iterator[int] = itertools.count(1)


def required_problem(body: dict[str, Any]) -> Problem | None:
    if (problem := model_problem(body)) is not None:
        return problem
    if not fields.integer(1)(body.get("max_tokens")):
        return (
            f"max_tokens must be a whole number of at least 1, got {fields.kind(body.get('max_tokens'))}",
            "max_tokens",
        )
    return messages_problem(body)


def field_problem(body: dict[str, Any]) -> Problem | None:
    """The first field the Messages API would refuse (types, ranges, roles, block shapes)."""
    for index, message in enumerate(body["messages"]):
        if (problem := _message_problem(index, message)) is not None:
            return problem
    system = body.get("system")
    if system is not None and not (isinstance(system, str) or fields.objects(system)):
        return f"system must be a string or an array of text blocks, got {fields.kind(system)}", "system"
    return fields.first_problem(body, _FIELDS)


def _message_problem(index: int, message: Any) -> Problem | None:
    where = f"messages[{index}]"
    if not isinstance(message, dict):
        return f"{where} must be a message object, got {fields.kind(message)}", where
    if message.get("role") not in ROLES:
        return (
            f"{where}.role must be user, assistant or system, got {fields.kind(message.get('role'))}",
            f"{where}.role",
        )
    content = message.get("content")
    if isinstance(content, str):
        return None
    if not fields.objects(content):
        return (
            f"{where}.content must be a string or an array of blocks, got {fields.kind(content)}",
            f"{where}.content",
        )
    for number_, block in enumerate(content or ()):
        if (problem := _block_problem(f"{where}.content[{number_}]", block)) is not None:
            return problem
    return None


def _block_problem(where: str, block: Mapping[str, Any]) -> Problem | None:
    kind_ = block.get("type")
    if not isinstance(kind_, str):
        return f"{where}.type must be a block type string, got {fields.kind(kind_)}", f"{where}.type"
    if kind_ == "tool_use" and not (
        isinstance(block.get("id"), str) and isinstance(block.get("input"), dict)
    ):
        return f"{where}: a tool_use block needs a string id and an object input", where
    if kind_ == "tool_result" and not isinstance(block.get("tool_use_id"), str):
        return f"{where}.tool_use_id must be the id of the tool_use it answers", f"{where}.tool_use_id"
    return None


def _tools(value: Any) -> bool:
    return fields.objects(value) and all(isinstance(tool.get("name"), str) for tool in value)


def _tool_choice(value: Any) -> bool:
    return isinstance(value, dict) and value.get("type") in ("auto", "any", "tool", "none")


_FIELDS: dict[str, fields.Field] = {
    "temperature": fields.between(0, 1),
    "top_p": fields.between(0, 1),
    "top_k": fields.at_least(0),
    "stream": fields.BOOLEAN,
    "metadata": fields.OBJECT,
    "thinking": fields.OBJECT,
    "stop_sequences": (
        lambda v: isinstance(v, list) and all(isinstance(s, str) for s in v),
        "an array of strings",
    ),
    "tools": (_tools, "an array of tool objects with a name"),
    "tool_choice": (_tool_choice, 'an object whose type is "auto", "any", "tool" or "none"'),
}


def prompt_tokens(body: Mapping[str, Any]) -> int:
    """The estimate of a request's input (count_tokens answers it too): system, messages and tools."""
    return sum(estimate_tokens(body.get(key)) for key in ("system", "messages", "tools"))


class AnthropicMessages(NamedEvents, Stateless):
    """The Dialect of POST /v1/messages."""

    name = "anthropic-messages"
    messages_key = "messages"
    sampling_keys = SAMPLING_KEYS
    fingerprint_fields = frozenset({"model", "system", "messages", "tools", "stream", "output_format"})

    # What needs no dialect state is module functions: the request checks and reassembly.
    required_problem = staticmethod(required_problem)
    field_problem = staticmethod(field_problem)
    assemble = staticmethod(assemble_message)

    def render(self, decision: ReferenceDecision, body: Mapping[str, Any]) -> dict[str, Any]:
        offered = self.offered_tools(body.get("tools"))
        blocks: list[dict[str, Any]] = (
            [{"type": "text", "text": decision.content}] if decision.content else []
        )
        blocks += [
            {
                "type": "tool_use",
                "id": f"toolu_wt{next(_tool_numbers):08d}",
                "name": resolve(call.name, offered),
                "input": dict(call.arguments),
            }
            for call in decision.tool_calls
        ]
        output = max(1, estimate_tokens(blocks))
        usage = {
            "input_tokens": prompt_tokens(body),
            "output_tokens": output,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }
        return {
            "id": f"msg_wt{next(_message_numbers):08d}",
            "type": "message",
            "role": "assistant",
            "model": str(body.get("model")),
            "content": blocks,
            "stop_reason": "tool_use" if decision.tool_calls else "end_turn",
            "stop_sequence": None,
            "usage": usage,
        }

    def events(self, response: Mapping[str, Any], body: Mapping[str, Any]) -> list[dict[str, Any]]:
        return message_events(response)

    def error_body(self, message: str, code: str, *, param: str | None = None) -> dict[str, Any]:
        """Anthropic's envelope; the type follows the HTTP meaning (clients read `error.message`)."""
        error_type = ERROR_TYPES.get(code, "invalid_request_error")
        return {"type": "error", "error": {"type": error_type, "message": message}}

    def stream_error(self, message: str, code: str) -> dict[str, Any]:
        return {"type": "error", "error": {"type": "api_error", "message": message}}

    def neutral_sampling(self, sampling: Mapping[str, Any]) -> dict[str, Any]:
        neutral = dict(sampling)
        choice = sampling.get("tool_choice")
        if isinstance(choice, Mapping):
            named = {"type": "function", "function": {"name": choice.get("name")}}
            kinds = {"auto": "auto", "any": "required", "none": "none", "tool": named}
            neutral["tool_choice"] = kinds.get(str(choice.get("type")), dict(choice))
        return neutral

    def logged_response(self, response: Mapping[str, Any]) -> Any:
        return dict(response)

    def usage(self, response: Mapping[str, Any]) -> Any:
        return response.get("usage")

    def offered_tools(self, tools: Any) -> list[str]:
        return [
            str(tool["name"])
            for tool in tools or ()
            if isinstance(tool, Mapping) and isinstance(tool.get("name"), str)
        ]

    def transcript(self, entry: Mapping[str, Any]) -> list[Said]:
        system = (entry.get("extra") or {}).get("system")
        said = [Said(role="system", text=text_of(system), native=system)] if system else []
        for message in entry.get("messages") or ():
            if isinstance(message, Mapping):
                said += _message_said(message)
        return said

    def answer(self, entry: Mapping[str, Any]) -> Said | None:
        response = entry.get("response")
        return _assistant(response) if isinstance(response, Mapping) else None


def _message_said(message: Mapping[str, Any]) -> list[Said]:
    """A user message reads as its tool results then its text; an assistant message as one item."""
    if message.get("role") == "assistant":
        return [_assistant(message)]
    content = message.get("content")
    if message.get("role") == "system":
        return [Said(role="system", text=text_of(content), native=message)]
    if isinstance(content, str):
        return [Said(role="user", text=content, native=message)]
    blocks = [block for block in content or () if isinstance(block, Mapping)]
    said = [
        Said(
            role="tool",
            text=text_of(block.get("content")),
            answers=block.get("tool_use_id"),
            is_error=bool(block.get("is_error")),
            native=block,
        )
        for block in blocks
        if block.get("type") == "tool_result"
    ]
    texts = [block for block in blocks if block.get("type") == "text"]
    if texts:
        said.append(Said(role="user", text=text_of(texts), native=message))
    return said


def _assistant(message: Mapping[str, Any]) -> Said:
    blocks = [block for block in message.get("content") or () if isinstance(block, Mapping)]
    if isinstance(message.get("content"), str):
        return Said(role="assistant", text=message["content"], native=message)
    calls = tuple(
        ToolCall(
            id=block.get("id"), name=str(block.get("name") or ""), arguments=block.get("input"), native=block
        )
        for block in blocks
        if block.get("type") == "tool_use"
    )
    text = "".join(str(block.get("text") or "") for block in blocks if block.get("type") == "text")
    return Said(role="assistant", text=text, calls=calls, native=message)
