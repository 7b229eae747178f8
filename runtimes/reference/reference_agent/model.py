"""Calls the model through the OpenAI chat-completions wire format, as JSON or as an SSE stream.

aiohttp, not httpx: every turn makes several model calls, and aiohttp's client costs about a third of
httpx.AsyncClient's per request (bench/bench_stack.py), overhead that would otherwise count as the stack's.
aiohttp is imported by reference_agent.preload, not on the start-up path: one client session is opened on
the first model call and reused by every later one.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from windtunnel_inject import TurnFailed

from reference_agent import preload
from reference_agent.settings import Fault, Settings

if TYPE_CHECKING:
    import aiohttp

SESSION_HEADER = "X-WT-Session"
# The turn deadline is the caller's timeout_s; this only bounds a single hung model connection.
MODEL_HTTP_TIMEOUT_S = 600.0


class ModelError(TurnFailed):
    """A model call failed; the message names the cause, including the gateway's own error text (502).
    `status` is the HTTP status the model API answered, None when no status came (a broken answer)."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class ModelReply:
    """The assistant message in OpenAI shape (role, content, tool_calls) and the usage served, if any."""

    message: dict[str, Any]
    usage: dict[str, Any] | None


class ModelClient:
    """One chat-completions endpoint; every call carries the configured model, sampling and session.

    Its HTTP client session is opened on the first call and kept (connections reused) until aclose()."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._http: aiohttp.ClientSession | None = None
        self._url = f"{settings.model_base_url}/chat/completions"
        self._first_session: str | None = None  # fault stale_session_header: the session it keeps sending

    async def _session(self) -> aiohttp.ClientSession:
        await preload.loaded()
        import aiohttp  # off the start-up path (reference_agent.preload)

        if self._http is None:  # no await since the check: one session even for concurrent first calls
            self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=MODEL_HTTP_TIMEOUT_S))
        return self._http

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.close()

    def request_body(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self._settings.model_name, "messages": list(messages)}
        if tools:
            # OpenAI rejects an empty tools list, so a runtime without tools sends none.
            body["tools"] = list(tools)
        if self._settings.fault is not Fault.IGNORE_SAMPLING:
            body.update(self._settings.sampling)
        # else: fault `ignore_sampling` - the configured knobs never reach the model.
        if self._settings.fault is Fault.HARDCODE_SAMPLING_DEFAULTS:
            # fault: temperature and tool_choice pinned to the usual defaults, whatever was configured
            body.update({"temperature": 0.0, "tool_choice": "auto"} if tools else {"temperature": 0.0})
        if self._settings.stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body

    async def complete(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]], session_id: str
    ) -> ModelReply:
        http = await self._session()
        import aiohttp  # loaded by now (reference_agent.preload)

        body = self.request_body(messages, tools)
        data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        if self._settings.fault is Fault.STALE_SESSION_HEADER:
            # fault: a shared client whose default headers were set once, for the first session it served
            self._first_session = self._first_session or session_id
            session_id = self._first_session
        headers = {SESSION_HEADER: session_id, "Content-Type": "application/json"}
        try:
            async with http.post(self._url, data=data, headers=headers) as response:
                if response.status != 200:
                    content = await response.read()
                    raise ModelError(_refusal(self._url, response.status, content), status=response.status)
                if self._settings.stream:
                    return await _assemble(self._url, _lines(response.content))
                return _parse_completion(self._url, await response.read())
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise ModelError(f"model call to {self._url} failed: {type(exc).__name__}: {exc}") from exc


async def _lines(content: aiohttp.StreamReader) -> AsyncIterator[str]:
    async for raw in content:
        yield raw.decode("utf-8", "replace").rstrip("\r\n")


async def _assemble(url: str, lines: AsyncIterator[str]) -> ModelReply:
    assembler = StreamAssembler()
    async for chunk in _sse_chunks(url, lines):
        assembler.add(chunk)
    return assembler.reply()


def _refusal(url: str, status: int, content: bytes) -> str:
    """The gateway's refusal as one sentence: status, OpenAI-style error message and code."""
    text = content.decode("utf-8", "replace")
    message, code = text.strip()[:1000] or "(empty body)", None
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = None
    if isinstance(data, dict):
        error = data.get("error", data.get("detail"))
        if isinstance(error, dict):
            message = str(error.get("message") or error)
            code = error.get("code") or error.get("type")
        elif error is not None:
            message = str(error)
    suffix = f" (code {code})" if code else ""
    return f"model call to {url} answered HTTP {status}: {message}{suffix}"


def _parse_completion(url: str, content: bytes) -> ModelReply:
    try:
        data = json.loads(content)
        message = data["choices"][0]["message"]
    except (json.JSONDecodeError, KeyError, IndexError, TypeError) as exc:
        raise ModelError(f"model call to {url} returned no choices[0].message: {content[:300]!r}") from exc
    if not isinstance(message, dict):
        raise ModelError(f"model call to {url} returned a message that is not an object: {message!r}")
    usage = data.get("usage")
    return ModelReply(message=message, usage=usage if isinstance(usage, dict) else None)


async def _sse_chunks(url: str, lines: AsyncIterator[str]) -> AsyncIterator[dict[str, Any]]:
    """The chat.completion.chunk objects of an SSE body, up to `data: [DONE]` (required: no silent truncation)."""
    async for line in lines:
        if not line.startswith("data:"):
            continue  # blank separators, comments and event names carry nothing we assemble
        payload = line[len("data:") :].strip()
        if payload == "[DONE]":
            return
        try:
            chunk = json.loads(payload)
        except json.JSONDecodeError as exc:
            raise ModelError(
                f"model stream from {url} sent a chunk that is not JSON: {payload[:300]!r}"
            ) from exc
        if isinstance(chunk, dict) and chunk.get("error") is not None:
            raise ModelError(_refusal(url, 200, json.dumps(chunk).encode()) + " (in the stream)")
        if isinstance(chunk, dict):
            yield chunk
    raise ModelError(f"model stream from {url} ended without data: [DONE]")


class StreamAssembler:
    """Rebuilds one assistant message from streamed deltas: content pieces and tool calls by index."""

    def __init__(self) -> None:
        self._content: list[str] = []
        self._calls: dict[int, dict[str, Any]] = {}
        self._usage: dict[str, Any] | None = None

    def add(self, chunk: Mapping[str, Any]) -> None:
        if isinstance(chunk.get("usage"), dict):
            self._usage = chunk["usage"]
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            if isinstance(delta.get("content"), str):
                self._content.append(delta["content"])
            for call_delta in delta.get("tool_calls") or []:
                self._add_call_delta(call_delta)

    def _add_call_delta(self, delta: Mapping[str, Any]) -> None:
        index = delta.get("index", len(self._calls))
        call = self._calls.setdefault(
            index, {"id": None, "type": "function", "function": {"name": "", "arguments": ""}}
        )
        if delta.get("id"):
            call["id"] = delta["id"]
        if delta.get("type"):
            call["type"] = delta["type"]
        function = delta.get("function") or {}
        # Names normally arrive whole in the first delta; concatenating also handles split names.
        call["function"]["name"] += function.get("name") or ""
        call["function"]["arguments"] += function.get("arguments") or ""

    def reply(self) -> ModelReply:
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self._content) or None}
        if self._calls:
            message["tool_calls"] = [self._calls[index] for index in sorted(self._calls)]
        return ModelReply(message=message, usage=self._usage)
