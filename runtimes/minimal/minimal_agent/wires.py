"""The three model wires (WT_MODEL_WIRE): each builds its request and reads its answer in its own shape.

A history is kept in the wire's own items (chat messages, Anthropic messages with content blocks,
Responses input items), so what the model is sent back is exactly what it emitted. A tool's result is its
MCP content parts: all text, it goes as one string (the parts' texts, one per line) in every wire; with an
image or an embedded resource, Messages and Responses hand each part over as their own blocks, while a chat
tool message holds text only, so there such a part goes as its JSON.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar


@dataclass(frozen=True)
class ToolCall:
    """One call the model emitted: its id in the wire, the tool's name and its arguments as decoded."""

    id: str
    name: str
    arguments: dict[str, Any]


Parts = list[dict[str, Any]]
"""A tool result's MCP content parts, as the server sent them."""


@dataclass(frozen=True)
class Step:
    """One model answer: its text, its tool calls, and the items that go into the history for it."""

    content: str
    calls: list[ToolCall]
    items: list[dict[str, Any]]


def _decoded(text: str | None) -> dict[str, Any]:
    """Arguments JSON as the model wrote it, key order kept."""
    arguments = json.loads(text or "{}")
    return arguments if isinstance(arguments, dict) else {}


class Chat:
    """OpenAI Chat Completions: POST $WT_MODEL_BASE_URL/chat/completions."""

    def url(self, env: dict[str, str]) -> str:
        return f"{_required(env, 'WT_MODEL_BASE_URL')}/chat/completions"

    def tool(self, name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": name, "description": description, "parameters": schema},
        }

    def body(
        self, model: str, system: str, history: list[Any], tools: list[Any], sampling: dict[str, Any]
    ) -> Any:
        body = {"model": model, "messages": [{"role": "system", "content": system}, *history], **sampling}
        return {**body, "tools": tools} if tools else body

    def read(self, answer: dict[str, Any]) -> Step:
        message = answer["choices"][0]["message"]
        native = message.get("tool_calls") or []
        calls = [
            ToolCall(c["id"], c["function"]["name"], _decoded(c["function"].get("arguments"))) for c in native
        ]
        content = message.get("content") or ""
        item = (
            {"role": "assistant", "content": message.get("content"), "tool_calls": native}
            if native
            else {
                "role": "assistant",
                "content": content,
            }
        )
        return Step(content, calls, [item])

    def results(self, answered: list[tuple[ToolCall, Parts]]) -> list[dict[str, Any]]:
        return [
            {"role": "tool", "tool_call_id": call.id, "content": as_text(parts)} for call, parts in answered
        ]


class Messages:
    """Anthropic Messages: POST $WT_MODEL_ROOT_URL/v1/messages (the root URL has no /v1)."""

    DEFAULT_MAX_TOKENS = 4096  # the API requires max_tokens; WT_SAMPLING's, when set, replaces it
    CHOICES: ClassVar[dict[str, Any]] = {
        "auto": {"type": "auto"},
        "required": {"type": "any"},
        "none": {"type": "none"},
    }

    def url(self, env: dict[str, str]) -> str:
        return f"{_required(env, 'WT_MODEL_ROOT_URL')}/v1/messages"

    def tool(self, name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
        return {"name": name, "description": description, "input_schema": schema}

    def body(
        self, model: str, system: str, history: list[Any], tools: list[Any], sampling: dict[str, Any]
    ) -> Any:
        body: dict[str, Any] = {"model": model, "system": system, "messages": history}
        body["max_tokens"] = sampling.get("max_tokens", self.DEFAULT_MAX_TOKENS)
        body |= {key: sampling[key] for key in ("temperature", "top_p") if key in sampling}
        if "tool_choice" in sampling:
            body["tool_choice"] = self._choice(sampling["tool_choice"])
        return {**body, "tools": tools} if tools else body

    def _choice(self, choice: Any) -> Any:
        if isinstance(choice, dict):  # {"type": "function", "function": {"name": ...}}: one named tool
            return {"type": "tool", "name": choice.get("function", {}).get("name")}
        return self.CHOICES.get(choice, choice)

    def read(self, answer: dict[str, Any]) -> Step:
        blocks = answer.get("content") or []
        text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        calls = [
            ToolCall(b["id"], b["name"], dict(b.get("input") or {}))
            for b in blocks
            if b.get("type") == "tool_use"
        ]
        return Step(text, calls, [{"role": "assistant", "content": blocks}])

    def results(self, answered: list[tuple[ToolCall, Parts]]) -> list[dict[str, Any]]:
        # Every result of one assistant message goes back in one user message, as the API asks.
        blocks = [
            {"type": "tool_result", "tool_use_id": call.id, "content": native(parts, self._block)}
            for call, parts in answered
        ]
        return [{"role": "user", "content": blocks}]

    def _block(self, part: dict[str, Any]) -> dict[str, Any]:
        kind, resource = part.get("type"), part.get("resource") or {}
        if kind == "image":
            source = {"type": "base64", "media_type": part.get("mimeType"), "data": part.get("data")}
            return {"type": "image", "source": source}
        if kind == "resource" and isinstance(resource.get("text"), str):
            source = {"type": "text", "media_type": "text/plain", "data": resource["text"]}
            return {"type": "document", "source": source, "title": resource.get("uri")}
        return {"type": "text", "text": part_text(part)}


class Responses:
    """OpenAI Responses: POST $WT_MODEL_BASE_URL/responses, the whole conversation in `input` each time."""

    def url(self, env: dict[str, str]) -> str:
        return f"{_required(env, 'WT_MODEL_BASE_URL')}/responses"

    def tool(self, name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
        return {"type": "function", "name": name, "description": description, "parameters": schema}

    def body(
        self, model: str, system: str, history: list[Any], tools: list[Any], sampling: dict[str, Any]
    ) -> Any:
        body: dict[str, Any] = {"model": model, "instructions": system, "input": history}
        body |= {("max_output_tokens" if k == "max_tokens" else k): v for k, v in sampling.items()}
        choice = sampling.get("tool_choice")
        if isinstance(
            choice, dict
        ):  # {"type": "function", "function": {"name": ...}} -> Responses' flat form
            body["tool_choice"] = {"type": "function", "name": choice.get("function", {}).get("name")}
        return {**body, "tools": tools} if tools else body

    def read(self, answer: dict[str, Any]) -> Step:
        output = answer.get("output") or []
        text = "".join(
            part.get("text", "")
            for item in output
            if item.get("type") == "message"
            for part in item.get("content") or []
            if part.get("type") == "output_text"
        )
        calls = [
            ToolCall(item["call_id"], item["name"], _decoded(item.get("arguments")))
            for item in output
            if item.get("type") == "function_call"
        ]
        return Step(text, calls, list(output))

    def results(self, answered: list[tuple[ToolCall, Parts]]) -> list[dict[str, Any]]:
        return [
            {"type": "function_call_output", "call_id": call.id, "output": native(parts, self._part)}
            for call, parts in answered
        ]

    def _part(self, part: dict[str, Any]) -> dict[str, Any]:
        kind, resource = part.get("type"), part.get("resource") or {}
        if kind == "image":
            return {
                "type": "input_image",
                "image_url": f"data:{part.get('mimeType')};base64,{part.get('data')}",
            }
        if kind == "resource" and isinstance(resource.get("text"), str):
            return {"type": "input_text", "text": f"[resource {resource.get('uri')}]\n{resource['text']}"}
        return {"type": "input_text", "text": part_text(part)}


def part_text(part: dict[str, Any]) -> str:
    """A part as text: a text part's own text, any other part as its JSON."""
    if part.get("type") == "text":
        return str(part.get("text", ""))
    return json.dumps(part, ensure_ascii=False)


def as_text(parts: Parts) -> str:
    return "\n".join(part_text(part) for part in parts)


def native(parts: Parts, convert: Callable[[dict[str, Any]], dict[str, Any]]) -> Any:
    """A result all text as one string (as in every wire); else each part as the wire's own block."""
    if all(part.get("type") == "text" for part in parts):
        return as_text(parts)
    return [convert(part) for part in parts]


WIRES = {"chat": Chat, "messages": Messages, "responses": Responses}


def _required(env: dict[str, str], name: str) -> str:
    value = env.get(name, "").rstrip("/")
    if not value:
        raise SystemExit(f"{name} is not set: the model gateway's URL (docs/contract-c.md)")
    return value


def wire_for(env: dict[str, str]) -> Chat | Messages | Responses:
    """The wire WT_MODEL_WIRE names (chat when unset); another value stops the runtime, naming it."""
    name = env.get("WT_MODEL_WIRE") or "chat"
    if name not in WIRES:
        raise SystemExit(f"WT_MODEL_WIRE={name!r} is not a model wire: use one of {', '.join(WIRES)}")
    return WIRES[name]()
