"""The harness's loopback server thread stops promptly even while a client holds a stream open (an MCP
client's GET listener, an SSE response that never ends): in-flight requests get a short grace, then uvicorn
stops waiting for them, and the thread is gone."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, StreamingResponse
from starlette.routing import Route

from windtunnel._net.server_thread import ServerThread


async def endless(request: Request) -> StreamingResponse:
    async def events() -> AsyncIterator[bytes]:
        while True:
            yield b": keep-alive\n\n"
            await asyncio.sleep(0.05)

    return StreamingResponse(events(), media_type="text/event-stream")


async def hello(request: Request) -> PlainTextResponse:
    return PlainTextResponse("hello")


APP = Starlette(routes=[Route("/stream", endless), Route("/hello", hello)])


def test_a_server_with_an_open_stream_stops_within_its_grace() -> None:
    server = ServerThread(APP).start()
    assert httpx.get(f"{server.url}/hello").text == "hello"
    opened = threading.Event()

    def listen() -> None:
        try:
            with httpx.stream("GET", f"{server.url}/stream", timeout=30) as response:
                for _ in response.iter_bytes():
                    opened.set()
        except httpx.HTTPError:
            return  # the server went away: what a stop does to a listener

    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    assert opened.wait(10)
    started = time.monotonic()
    server.stop(timeout=10, graceful=0.5)
    assert time.monotonic() - started < 5  # not the 10 s timeout an endless stream used to cost
    assert not server._thread.is_alive()


def test_a_stop_without_open_requests_is_at_once() -> None:
    server = ServerThread(APP).start()
    assert httpx.get(f"{server.url}/hello").text == "hello"
    started = time.monotonic()
    server.stop()
    assert time.monotonic() - started < 2
    server.stop()  # idempotent
