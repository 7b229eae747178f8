"""Reading a send() result in any accepted shape, without changing what was recorded.

Shapes: flat `{"content", "tool_calls"}`; the `{"message": {...}}` wrapper; an OpenAI chat completion
(`choices[0].message`). Tool calls may be OpenAI wire shape (`{"function": {"name", "arguments": "<json>"}}`),
flat (`{"name", "arguments": {...}}`), an Anthropic `tool_use` block (`{"name", "input": {...}}`) or a
Responses `function_call` item (`{"name", "arguments": "<json>"}`); evaluators read every one through
`call_name`/`call_arguments`. The gateway log's calls read in their dialect: `said`, `answer`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from windtunnel._wire.dialect import Said
from windtunnel._wire.reading import decoded
from windtunnel._wire.registry import dialect_of
from windtunnel.errors import EnvelopeError

Shape = Literal["flat", "wrapper", "openai"]


@dataclass(frozen=True, slots=True)
class ReadResponse:
    shape: Shape
    content: str | None
    tool_calls: list[Any]
    usage: dict[str, Any] | None
    rendered_prompt: str | None


def read_response(response: object) -> ReadResponse:
    """Find content, tool calls, usage and a rendered prompt in any accepted shape."""
    if not isinstance(response, Mapping):
        raise EnvelopeError(
            f"send() returned a {type(response).__name__}; expected a dict",
            hint="return {'content': ..., 'tool_calls': [...]} or an OpenAI chat completion",
            field="<response>",
        )
    shape: Shape
    if isinstance(response.get("choices"), list):
        shape, message = "openai", _openai_message(response)
    elif isinstance(response.get("message"), Mapping):
        shape, message = "wrapper", response["message"]
    else:
        shape, message = "flat", response
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise EnvelopeError(
            f"response content is a {type(content).__name__}; expected a string or null",
            hint="return the final answer text as content",
            field="content",
        )
    calls = message.get("tool_calls")
    calls = [] if calls is None else calls
    if not isinstance(calls, list):
        raise EnvelopeError(
            f"response tool_calls is a {type(calls).__name__}; expected a list",
            hint="return tool_calls as a list, empty when there were none",
            field="tool_calls",
        )
    usage = response.get("usage")
    prompt = response.get("rendered_prompt")
    return ReadResponse(
        shape=shape,
        content=content,
        tool_calls=list(calls),
        usage=dict(usage) if isinstance(usage, Mapping) else None,
        rendered_prompt=prompt if isinstance(prompt, str) else None,
    )


def _openai_message(response: Mapping[str, Any]) -> Mapping[str, Any]:
    choices = response["choices"]
    if (
        not choices
        or not isinstance(choices[0], Mapping)
        or not isinstance(choices[0].get("message"), Mapping)
    ):
        raise EnvelopeError(
            "chat completion has no choices[0].message",
            hint="return the upstream completion untouched, or the flat shape",
            field="choices[0].message",
        )
    message: Mapping[str, Any] = choices[0]["message"]
    return message


def call_name(call: Any) -> str | None:
    """The tool name of a tool call in either shape."""
    if not isinstance(call, Mapping):
        return None
    function = call.get("function")
    if isinstance(function, Mapping) and isinstance(function.get("name"), str):
        return str(function["name"])
    name = call.get("name")
    return name if isinstance(name, str) else None


def call_arguments(call: Any) -> Any:
    """The arguments of a tool call in either shape, decoded when they are JSON text; raw when not JSON."""
    if not isinstance(call, Mapping):
        return None
    return decoded(_raw_arguments(call))


def call_argument_text(call: Any) -> str | None:
    """The argument text exactly as emitted: the JSON string of the wire shape, or the object re-encoded."""
    if not isinstance(call, Mapping):
        return None
    raw = _raw_arguments(call)
    if isinstance(raw, str):
        return raw
    return json.dumps(raw, ensure_ascii=False) if raw is not None else None


def _raw_arguments(call: Mapping[str, Any]) -> Any:
    function = call.get("function")
    if isinstance(function, Mapping):
        return function.get("arguments")
    return call["input"] if "input" in call and "arguments" not in call else call.get("arguments")


# -- the gateway log's request shapes (what the model was sent), in the logged call's dialect ------------
def said(request: Mapping[str, Any]) -> list[Said]:
    """The conversation a logged model call sent, item by item (windtunnel._wire.dialect.Said)."""
    return dialect_of(request).transcript(request)


def answer(request: Mapping[str, Any]) -> Said:
    """What a logged model call answered, as an assistant item (empty when it was refused)."""
    return dialect_of(request).answer(request) or Said(role="assistant", text="")


def offered_tool_names(request: Mapping[str, Any]) -> list[str]:
    """The names of the tools a logged request offered the model, in order, qualified as offered."""
    return dialect_of(request).offered_tools(request.get("tools"))
