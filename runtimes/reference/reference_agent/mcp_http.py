"""The HTTP under the official MCP client: its streamable-HTTP transport, with connections through aiohttp.

`mcp`'s streamable HTTP client keeps all of the protocol (sessions, SSE, resumption, redirects within the
origin, cancellation); it sends each request through an `httpx2.AsyncClient`. That client's default
connection layer (httpcore2 + h11, pure Python) is most of an MCP round trip's cost after the SDK's own, so
the client here is given a transport that hands the HTTP exchange to aiohttp (C-accelerated), which the
runtime already uses for its model calls. Requests and responses pass through unchanged, bodies streamed.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping

import aiohttp
import httpx2

from reference_agent.settings import Fault

# What mcp's own client uses: 30 s to connect and write, 300 s between bytes of a (long-lived) SSE stream.
CONNECT_TIMEOUT_S = 30.0
READ_TIMEOUT_S = 300.0
# Set by aiohttp from the URL and the body it sends; passing httpx2's copies along would duplicate them.
_MANAGED_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "connection"})
OLD_PROTOCOL_VERSION = "2024-11-05"  # the old_mcp_protocol_version poison's: an MCP SDK pinned long ago


def mcp_http_client(session: aiohttp.ClientSession, fault: Fault | None = None) -> httpx2.AsyncClient:
    """An httpx2 client for `mcp.client.streamable_http.streamable_http_client` that sends through `session`
    (a poison's `fault` mishandling what the SDK sends)."""
    return httpx2.AsyncClient(
        transport=AiohttpTransport(session, fault),
        timeout=httpx2.Timeout(CONNECT_TIMEOUT_S, read=READ_TIMEOUT_S),
    )


class AiohttpTransport(httpx2.AsyncBaseTransport):
    """httpx2 requests sent with an aiohttp session; aiohttp failures raised as the httpx2 errors they are."""

    def __init__(self, session: aiohttp.ClientSession, fault: Fault | None = None) -> None:
        self._session = session
        self._fault = fault

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = b"".join([part async for part in request.stream])  # type: ignore[union-attr]
        headers = [(k, v) for k, v in request.headers.multi_items() if k.lower() not in _MANAGED_HEADERS]
        if self._fault is Fault.ACCEPT_JSON_ONLY:  # fault: a client that never reads an SSE stream
            headers = [(k, "application/json" if k.lower() == "accept" else v) for k, v in headers]
        if self._fault is Fault.OLD_MCP_PROTOCOL_VERSION:
            body = _old_version(body)
        if self._fault is Fault.NO_GET_STREAMS and request.method == "GET":  # fault: never resumes a stream
            return httpx2.Response(405, request=request)
        try:
            response = await self._session.request(
                request.method,
                str(request.url),
                data=body or None,
                headers=headers,
                timeout=_timeout(request.extensions.get("timeout", {})),
                allow_redirects=False,  # the SDK decides which redirects to follow
                auto_decompress=False,  # httpx2 decodes by Content-Encoding, as with its own transport
            )
        except TimeoutError as exc:
            raise httpx2.ReadTimeout(f"no answer from {request.url}: {exc}", request=request) from exc
        except aiohttp.ClientConnectorError as exc:
            raise httpx2.ConnectError(str(exc), request=request) from exc
        except aiohttp.ClientError as exc:
            raise httpx2.RemoteProtocolError(f"{type(exc).__name__}: {exc}", request=request) from exc
        return httpx2.Response(
            response.status,
            headers=list(response.raw_headers),
            stream=_ResponseBody(response, request),
            request=request,
        )


class _ResponseBody(httpx2.AsyncByteStream):
    def __init__(self, response: aiohttp.ClientResponse, request: httpx2.Request) -> None:
        self._response = response
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._response.content.iter_any():
                yield chunk
        except TimeoutError as exc:
            raise httpx2.ReadTimeout(
                f"{self._request.url} stopped sending: {exc}", request=self._request
            ) from exc
        except aiohttp.ClientError as exc:
            raise httpx2.ReadError(f"{type(exc).__name__}: {exc}", request=self._request) from exc

    async def aclose(self) -> None:
        if self._response.content.at_eof():
            self._response.release()  # read to the end: the connection goes back to the pool
        else:
            self._response.close()  # abandoned mid-body (an SSE stream the SDK closed): drop the connection


def _old_version(body: bytes) -> bytes:
    """The fault: an initialize request that offers the protocol version of an MCP SDK pinned long ago."""
    try:
        message = json.loads(body) if body else None
    except ValueError:
        return body
    if not (isinstance(message, dict) and message.get("method") == "initialize"):
        return body
    message.setdefault("params", {})["protocolVersion"] = OLD_PROTOCOL_VERSION
    return json.dumps(message).encode()


def _timeout(timeout: Mapping[str, float | None]) -> aiohttp.ClientTimeout:
    return aiohttp.ClientTimeout(
        total=None, sock_connect=timeout.get("connect"), sock_read=timeout.get("read")
    )
