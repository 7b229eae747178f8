"""Live mode: proxy every model call to its upstream, in its dialect, streams passed through as they arrive.

The API key is given to the constructor, sent only in the upstream request's auth header (Anthropic's
`x-api-key` for the Messages dialect, `Authorization: Bearer` otherwise) and masked in every message this
mode produces; the gateway never logs headers. A chat stream ends at `data: [DONE]`; the other dialects'
streams end when the upstream closes them after their last event.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Collection, Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from windtunnel._chat.mode import ChatRequest, ModeReply
from windtunnel.errors import GatewayError

UPSTREAM_FAILED = 502
MASK = "***"


class LiveMode:
    """A GatewayMode forwarding to `upstream`, an OpenAI-compatible base URL (usually ending in /v1).

    Upstream refusals keep their HTTP status and error code; an unreachable upstream or an answer that
    is not the OpenAI wire format is a 502 naming the upstream. Only headers named in `forward_headers`
    are passed on from the client, and never credentials.
    """

    name = "live"

    def __init__(
        self,
        upstream: str,
        *,
        api_key: str | None = None,
        timeout: float = 120.0,
        forward_headers: Collection[str] = (),
    ) -> None:
        self.upstream_url = upstream.rstrip("/")
        self.label = upstream_label(upstream)
        self._key = api_key or None
        self._forward = {name.lower() for name in forward_headers} - {"authorization", "cookie", "api-key"}
        self._forward -= {"x-api-key"}
        self._client = httpx.AsyncClient(timeout=timeout)

    def forward_url(self, path: str) -> str:
        """The gateway serves /v1/... (or the bare paths); the upstream base URL already ends at its API root."""
        return self.upstream_url + (path[3:] if path.startswith("/v1/") else path)

    async def complete(self, request: ChatRequest) -> ModeReply:
        url = self.forward_url(request.path)
        headers = {k: v for k, v in request.headers.items() if k.lower() in self._forward} | self._auth(
            request
        )
        try:
            if request.stream:
                return await self._stream(url, request, headers)
            response = await self._client.post(url, json=dict(request.body), headers=headers)
        except httpx.HTTPError as exc:
            return self._failed(f"is unreachable: {type(exc).__name__}: {exc}", "upstream_unreachable")
        if response.status_code >= 400:
            return self._refusal(response.status_code, response.content)
        try:
            completion = response.json()
        except ValueError:
            return self._failed(f"answered non-JSON: {response.content[:200]!r}", "upstream_bad_reply")
        return ModeReply(status=response.status_code, completion=completion)

    def _auth(self, request: ChatRequest) -> dict[str, str]:
        if not self._key:
            return {}
        return (
            {"x-api-key": self._key}
            if request.wire == "anthropic-messages"
            else {"authorization": f"Bearer {self._key}"}
        )

    async def _stream(self, url: str, request: ChatRequest, headers: dict[str, str]) -> ModeReply:
        outgoing = self._client.build_request("POST", url, json=dict(request.body), headers=headers)
        response = await self._client.send(outgoing, stream=True)
        if response.status_code >= 400:
            try:
                return self._refusal(response.status_code, await response.aread())
            finally:
                await response.aclose()
        if not response.headers.get("content-type", "").startswith("text/event-stream"):
            # Some servers ignore `stream` and answer JSON; the gateway then derives the chunks itself.
            try:
                return ModeReply(status=response.status_code, completion=json.loads(await response.aread()))
            except ValueError:
                return self._failed(
                    "answered a stream request with neither SSE nor JSON", "upstream_bad_reply"
                )
            finally:
                await response.aclose()
        done_ends = request.wire == "openai-chat"
        return ModeReply(status=response.status_code, chunks=self._passthrough(response, done_ends=done_ends))

    async def _passthrough(
        self, response: httpx.Response, *, done_ends: bool
    ) -> AsyncIterator[Mapping[str, Any]]:
        try:
            async for line in response.aiter_lines():
                if not line.startswith("data:"):
                    continue  # blank separators, comments and other SSE fields carry no chunk
                payload = line[5:].strip()
                if payload == "[DONE]":
                    return
                yield _chunk(payload, self.label)
        except httpx.HTTPError as exc:
            raise GatewayError(
                self._mask(f"upstream {self.label} broke off its stream: {type(exc).__name__}: {exc}"),
                reason="upstream_stream_broken",
            ) from exc
        finally:
            await response.aclose()
        if not done_ends:
            return
        raise GatewayError(
            f"upstream {self.label} ended its stream without data: [DONE]", reason="upstream_stream_broken"
        )

    def _refusal(self, status: int, content: bytes) -> ModeReply:
        message, code = _upstream_error(content)
        return ModeReply(
            status=status,
            error=self._mask(f"upstream {self.label} answered HTTP {status}: {message}"),
            error_code=code or "upstream_error",
        )

    def _failed(self, what: str, code: str) -> ModeReply:
        return ModeReply(
            status=UPSTREAM_FAILED, error=self._mask(f"upstream {self.label} {what}"), error_code=code
        )

    def _mask(self, text: str) -> str:
        return text.replace(self._key, MASK) if self._key else text

    async def aclose(self) -> None:
        await self._client.aclose()


def upstream_label(url: str) -> str:
    """The upstream as shown in messages: no credentials, query or fragment."""
    parts = urlsplit(url.strip())
    netloc = parts.hostname or ""
    if parts.port:
        netloc = f"{netloc}:{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def _chunk(payload: str, label: str) -> Mapping[str, Any]:
    try:
        chunk = json.loads(payload)
    except ValueError as exc:
        raise GatewayError(
            f"upstream {label} sent a stream chunk that is not JSON: {payload[:200]!r}",
            reason="upstream_bad_reply",
        ) from exc
    if not isinstance(chunk, Mapping):
        raise GatewayError(
            f"upstream {label} sent a stream chunk that is not an object: {payload[:200]!r}",
            reason="upstream_bad_reply",
        )
    return chunk


def _upstream_error(content: bytes) -> tuple[str, str | None]:
    """The upstream's error message and code from an OpenAI-style body, else its text."""
    text = content.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        return text[:500] or "(empty body)", None
    error = data.get("error") if isinstance(data, Mapping) else None
    if isinstance(error, Mapping):
        code = error.get("code") or error.get("type")
        return str(error.get("message") or error), str(code) if code else None
    return text[:500], None
