"""A stand-in upstream for tests and benchmarks, in every dialect (no live model is reachable here).

It answers POST /v1/chat/completions, /v1/messages and /v1/responses deterministically, as JSON or as a
stream: with tools offered and a user turn last, one call to the first tool; otherwise
`echo: <last message>`. Chat answers are built here; the Messages and Responses answers are that decision
rendered by the dialect (windtunnel._wire), as the gateway would render it. It checks the bearer key
when given one, reports a model name different from the requested one (as hosted APIs do), and keeps
every request it received. A user message containing `ECHO_AUTH` makes it echo the Authorization header
back, the way a misbehaving upstream leaks a key, so tests can prove the recorder redacts it.
Run it with windtunnel._net.server_thread.ServerThread on 127.0.0.1.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from windtunnel._core.reference import ReferenceDecision, ReferenceToolCall
from windtunnel._wire.registry import dialect_for_path

CREATED = 1_700_000_000


class StandinUpstream:
    """The app (`.app`) plus what it received (`.received`: headers and body of each request)."""

    def __init__(self, *, api_key: str | None = None) -> None:
        self.api_key = api_key
        self.received: list[dict[str, Any]] = []
        self.app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/v1/messages", self._other, methods=["POST"]),
                Route("/v1/responses", self._other, methods=["POST"]),
            ]
        )

    async def _other(self, request: Request) -> Response:
        """Anthropic Messages and OpenAI Responses: the stand-in's decision in the route's dialect."""
        body = await request.json()
        self.received.append({"headers": dict(request.headers), "body": body})
        dialect = dialect_for_path(request.url.path)
        sent = request.headers.get("x-api-key") or request.headers.get("authorization", "").removeprefix(
            "Bearer "
        )
        if self.api_key is not None and sent != self.api_key:
            return JSONResponse(dialect.error_body("invalid api key", "invalid_api_key"), status_code=401)
        said = dialect.transcript({"messages": body.get(dialect.messages_key), "extra": body})
        text = said[-1].text if said else ""
        tools = dialect.offered_tools(body.get("tools"))
        if tools and said and said[-1].role == "user":
            decision = ReferenceDecision(tool_calls=(ReferenceToolCall(tools[0], {"echo": text}),))
        else:
            decision = ReferenceDecision(content=f"echo: {text}")
        answer = {**dialect.render(decision, body), "model": _reported(body)}
        if not body.get("stream"):
            return JSONResponse(answer)
        frames = b"".join(dialect.frame(event) for event in dialect.events(answer, body))
        return Response(frames, media_type="text/event-stream")

    async def _chat(self, request: Request) -> Response:
        body = await request.json()
        self.received.append({"headers": dict(request.headers), "body": body})
        if self.api_key is not None and request.headers.get("authorization") != f"Bearer {self.api_key}":
            error = {"message": "invalid api key", "type": "invalid_request_error", "code": "invalid_api_key"}
            return JSONResponse({"error": error}, status_code=401)
        message = _answer(body, request.headers.get("authorization", ""))
        number = len(self.received)
        if body.get("stream"):
            return StreamingResponse(_sse(body, message, number), media_type="text/event-stream")
        return JSONResponse(_completion(body, message, number))


def _answer(body: dict[str, Any], authorization: str) -> dict[str, Any]:
    messages = body.get("messages") or [{}]
    last = messages[-1]
    text = str(last.get("content") or "")
    if "ECHO_AUTH" in text:
        return {"role": "assistant", "content": f"you sent {authorization}"}
    tools = body.get("tools") or []
    if tools and last.get("role") == "user":
        name = tools[0].get("function", {}).get("name", "tool")
        call = {
            "id": f"call_{len(messages)}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps({"echo": text})},
        }
        return {"role": "assistant", "content": None, "tool_calls": [call]}
    return {"role": "assistant", "content": f"echo: {text}"}


def _reported(body: dict[str, Any]) -> str:
    return f"{body.get('model', 'unknown')}-standin-0001"


def _usage() -> dict[str, int]:
    return {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}


def _completion(body: dict[str, Any], message: dict[str, Any], number: int) -> dict[str, Any]:
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return {
        "id": f"chatcmpl-standin-{number}",
        "object": "chat.completion",
        "created": CREATED,
        "model": _reported(body),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": _usage(),
    }


def _chunks(body: dict[str, Any], message: dict[str, Any], number: int) -> list[dict[str, Any]]:
    base = {"id": f"chatcmpl-standin-{number}", "object": "chat.completion.chunk", "created": CREATED}
    base["model"] = _reported(body)
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    content = message.get("content") or ""
    deltas += [{"content": content[i : i + 8]} for i in range(0, len(content), 8)]
    for index, call in enumerate(message.get("tool_calls") or []):
        deltas.append(
            {"tool_calls": [{"index": index, **call, "function": {**call["function"], "arguments": ""}}]}
        )
        deltas.append(
            {"tool_calls": [{"index": index, "function": {"arguments": call["function"]["arguments"]}}]}
        )
    chunks = [{**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]} for delta in deltas]
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    if (body.get("stream_options") or {}).get("include_usage"):
        chunks.append({**base, "choices": [], "usage": _usage()})
    return chunks


async def _sse(body: dict[str, Any], message: dict[str, Any], number: int) -> AsyncIterator[bytes]:
    for chunk in _chunks(body, message, number):
        yield f"data: {json.dumps(chunk)}\n\n".encode()
    yield b"data: [DONE]\n\n"
