"""The OpenAI Responses dialect: POST /v1/responses requests, output items, namespaced tools, stored responses.

A request needs `model` and `input` (a string or an array of items); `instructions` is the system prompt.
A tool call is a `function_call` item (`call_id`, `name`, JSON `arguments`, and `namespace` when the tool
was offered inside a `namespace` tool, as Codex offers MCP tools); its result a `function_call_output` item
with the same `call_id`. `previous_response_id` names an earlier answer of this gateway, whose conversation
the gateway recalls from its own memory (an id it did not serve is refused, naming it).
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from windtunnel._core.reference import ReferenceDecision
from windtunnel._wire import fields
from windtunnel._wire.body import model_problem
from windtunnel._wire.dialect import Memory, Said, ToolCall
from windtunnel._wire.fields import Problem
from windtunnel._wire.openai_chat import error_body, estimate_tokens, next_call_id
from windtunnel._wire.reading import decoded, text_of
from windtunnel._wire.responses_stream import assemble_response, response_events
from windtunnel._wire.sse import NamedEvents
from windtunnel._wire.tools import QUALIFIER, resolve

SAMPLING_KEYS = frozenset(
    {"temperature", "top_p", "max_output_tokens", "tool_choice", "parallel_tool_calls", "reasoning", "text"}
)
_numbers: Iterator[int] = itertools.count(1)
REMEMBERED = 512
"""Answers the gateway keeps for previous_response_id, newest last: a bound, since each holds a whole
conversation (a harness's requests run to hundreds of kilobytes) and a gateway may serve many runs."""


def required_problem(body: dict[str, Any]) -> Problem | None:
    if (problem := model_problem(body)) is not None:
        return problem
    given = body.get("input")
    if not (isinstance(given, str) and given) and not (fields.objects(given) and given):
        return f"input must be a string or a non-empty array of items, got {fields.kind(given)}", "input"
    return None


def field_problem(body: dict[str, Any]) -> Problem | None:
    for index, item in enumerate(body["input"] if isinstance(body["input"], list) else ()):
        where = f"input[{index}]"
        if item.get("type") in ("function_call", "function_call_output") and not isinstance(
            item.get("call_id"), str
        ):
            return f"{where}.call_id must be the string id of the call", f"{where}.call_id"
        if "type" not in item and item.get("role") not in ("user", "assistant", "system", "developer"):
            return (
                f"{where} must have a type, or a role user, assistant, system or developer",
                f"{where}.role",
            )
    return fields.first_problem(body, _FIELDS)


_FIELDS: dict[str, fields.Field] = {
    "instructions": fields.STRING,
    "temperature": fields.between(0, 2),
    "top_p": fields.between(0, 1),
    "max_output_tokens": fields.at_least(1),
    "stream": fields.BOOLEAN,
    "store": fields.BOOLEAN,
    "parallel_tool_calls": fields.BOOLEAN,
    "previous_response_id": fields.STRING,
    "metadata": fields.OBJECT,
    "tools": (
        lambda v: fields.objects(v) and all(isinstance(t.get("type"), str) for t in v),
        "an array of tools with a type",
    ),
    "tool_choice": (
        lambda v: v in ("none", "auto", "required") or isinstance(v, dict),
        '"none", "auto", "required" or an object',
    ),
}


def offered(tools: Any) -> dict[str, tuple[str | None, str]]:
    """Qualified name -> (namespace, name) of every named tool offered; a namespace's tools qualify as
    <namespace>__<name>, the form Claude Code uses, so one resolver serves both harnesses."""
    names: dict[str, tuple[str | None, str]] = {}
    for tool in tools if isinstance(tools, list) else ():
        if not isinstance(tool, Mapping) or not isinstance(tool.get("name"), str):
            continue
        if tool.get("type") == "namespace":
            for inner in tool.get("tools") or ():
                if isinstance(inner, Mapping) and isinstance(inner.get("name"), str):
                    names[tool["name"] + QUALIFIER + inner["name"]] = (tool["name"], inner["name"])
        else:
            names[tool["name"]] = (None, tool["name"])
    return names


def input_items(body: Mapping[str, Any]) -> list[Any]:
    given = body.get("input")
    return [{"role": "user", "content": given}] if isinstance(given, str) else list(given or ())


class OpenAIResponses(NamedEvents):
    """The Dialect of POST /v1/responses."""

    name = "openai-responses"
    messages_key = "input"
    sampling_keys = SAMPLING_KEYS
    fingerprint_fields = frozenset({"model", "instructions", "input", "tools", "stream", "truncation"})

    # What needs no dialect state is module functions: the request checks, reassembly, the error envelope.
    required_problem = staticmethod(required_problem)
    field_problem = staticmethod(field_problem)
    assemble = staticmethod(assemble_response)
    error_body = staticmethod(error_body)

    def render(self, decision: ReferenceDecision, body: Mapping[str, Any]) -> dict[str, Any]:
        number = next(_numbers)
        tools = offered(body.get("tools"))
        output: list[dict[str, Any]] = []
        if decision.content:
            part = {"type": "output_text", "text": decision.content, "annotations": [], "logprobs": []}
            message = {
                "type": "message",
                "id": f"msg_wt{number:08d}",
                "status": "completed",
                "role": "assistant",
            }
            output.append({**message, "content": [part]})
        for position, call in enumerate(decision.tool_calls):
            namespace, name = tools.get(resolve(call.name, list(tools)), (None, call.name))
            item = {"type": "function_call", "id": f"fc_wt{number:08d}_{position}", "call_id": next_call_id()}
            item |= {"name": name, "arguments": json.dumps(dict(call.arguments), ensure_ascii=False)}
            output.append({**item, "status": "completed", **({"namespace": namespace} if namespace else {})})
        prompt = sum(estimate_tokens(body.get(key)) for key in ("instructions", "input", "tools"))
        completion = max(1, estimate_tokens(output))
        usage = {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": completion,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt + completion,
        }
        echoed = {
            key: body.get(key) for key in ("instructions", "previous_response_id", "temperature", "top_p")
        }
        return {
            "id": f"resp_wt{number:08d}",
            "object": "response",
            "created_at": int(time.time()),
            "status": "completed",
            "error": None,
            "incomplete_details": None,
            "model": str(body.get("model")),
            "output": output,
            "parallel_tool_calls": body.get("parallel_tool_calls", True),
            "tool_choice": body.get("tool_choice", "auto"),
            "tools": body.get("tools") or [],
            **echoed,
            "usage": usage,
        }

    def events(self, response: Mapping[str, Any], body: Mapping[str, Any]) -> list[dict[str, Any]]:
        return response_events(response)

    def stream_error(self, message: str, code: str) -> dict[str, Any]:
        return {"type": "error", "code": code, "message": message, "param": None}

    def recall(self, body: Mapping[str, Any], memory: Memory) -> tuple[list[Any] | None, Problem | None]:
        earlier = body.get("previous_response_id")
        if earlier is None:
            return None, None
        if earlier not in memory:
            return None, (
                f"previous_response_id {earlier!r} is not a response this gateway served (it remembers only "
                f"its own last {REMEMBERED} answers, while it runs): send the whole conversation in input, "
                "or an id it answered",
                "previous_response_id",
            )
        return list(memory[earlier]), None

    def remember(
        self, body: Mapping[str, Any], response: Mapping[str, Any], history: list[Any] | None, memory: Memory
    ) -> None:
        if isinstance(response.get("id"), str):
            memory[response["id"]] = [*(history or ()), *input_items(body), *(response.get("output") or ())]
            while len(memory) > REMEMBERED:
                del memory[next(iter(memory))]  # the oldest answer (dicts keep insertion order)

    def neutral_sampling(self, sampling: Mapping[str, Any]) -> dict[str, Any]:
        neutral = {
            ("max_tokens" if key == "max_output_tokens" else key): value for key, value in sampling.items()
        }
        choice = sampling.get("tool_choice")
        if isinstance(choice, Mapping) and choice.get("type") == "function" and "function" not in choice:
            neutral["tool_choice"] = {"type": "function", "function": {"name": choice.get("name")}}
        return neutral

    def logged_response(self, response: Mapping[str, Any]) -> Any:
        return dict(response)

    def usage(self, response: Mapping[str, Any]) -> Any:
        return response.get("usage")

    def offered_tools(self, tools: Any) -> list[str]:
        return list(offered(tools))

    def transcript(self, entry: Mapping[str, Any]) -> list[Said]:
        instructions = (entry.get("extra") or {}).get("instructions")
        said = [Said(role="system", text=str(instructions), native=instructions)] if instructions else []
        given = entry.get("messages")
        items = [{"role": "user", "content": given}] if isinstance(given, str) else list(given or ())
        return said + read_items([*(entry.get("history") or ()), *items])

    def answer(self, entry: Mapping[str, Any]) -> Said | None:
        response = entry.get("response")
        if not isinstance(response, Mapping):
            return None
        said = read_items(response.get("output") or [])
        return said[0] if said else Said(role="assistant", text="", native=response)


def read_items(items: Sequence[Any]) -> list[Said]:
    """Items as conversation entries: an assistant message and the function calls after it read as one
    assistant entry (as a chat assistant message with tool_calls), each output as a tool entry."""
    said: list[Said] = []
    for item in items:
        if not isinstance(item, Mapping):
            continue
        kind_ = item.get("type") or "message"
        if kind_ == "function_call":
            call = ToolCall(
                id=item.get("call_id"),
                name=_qualified(item),
                arguments=decoded(item.get("arguments")),
                native=item,
            )
            said[-1:] = _with_call(said[-1] if said else None, call)
        elif kind_ == "function_call_output":
            said.append(
                Said(role="tool", text=text_of(item.get("output")), answers=item.get("call_id"), native=item)
            )
        elif kind_ == "message":
            role = str(item.get("role") or "user")
            role = "system" if role == "developer" else role
            said.append(Said(role=role, text=text_of(item.get("content")), native=item))
    return said


def _with_call(last: Said | None, call: ToolCall) -> list[Said]:
    if last is not None and last.role == "assistant":
        return [Said(role="assistant", text=last.text, calls=(*last.calls, call), native=last.native)]
    opened = Said(role="assistant", text="", calls=(call,), native=call.native)
    return [last, opened] if last is not None else [opened]


def _qualified(item: Mapping[str, Any]) -> str:
    name = str(item.get("name") or "")
    return f"{item['namespace']}{QUALIFIER}{name}" if item.get("namespace") else name
