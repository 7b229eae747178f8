"""An ASGI middleware that refuses request bodies over a size limit with 413, before they are buffered.

The gateway and the MCP mocks read whole bodies (JSON) and log them; a runaway or hostile client must
not make them hold (and write to the run's logs) gigabytes. A declared Content-Length over the limit is
refused before a byte of the body is read; a body without one is counted as it arrives and refused once
it passes the limit (windtunnel._limits holds the limit and its variable).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


class _TooLarge(Exception):
    pass


class BodyLimit:
    """Wraps `app`: an HTTP request whose body passes `max_bytes` gets 413 and an OpenAI-style error body."""

    def __init__(self, app: App, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            await self._refuse(send, f"declares {declared} bytes")
            return
        received = 0
        started = False

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise _TooLarge
            return message

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, watched)
        except _TooLarge:
            if started:
                raise  # too late for a 413; the server ends the connection
            await self._refuse(send, f"ran past {self.max_bytes} bytes")

    async def _refuse(self, send: Send, what: str) -> None:
        message = (
            f"the request body {what}, more than this server's limit of {self.max_bytes} bytes "
            "(WT_MAX_BODY_BYTES)"
        )
        body = json.dumps(
            {
                "error": {
                    "message": message,
                    "type": "invalid_request_error",
                    "param": None,
                    "code": "body_too_large",
                }
            }
        ).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers") or ():
        if name.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None
