"""Runtime readiness over real servers on 127.0.0.1: any HTTP answer is up, a 5xx (501 aside) is not yet."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from windtunnel._engine.readiness import GONE_EVERY_S, probe, wait_listening
from windtunnel._net.server_thread import ServerThread
from windtunnel.errors import RuntimeUnavailableError


class _OnlyPost(BaseHTTPRequestHandler):
    """A Contract C endpoint as the docs describe it, on Python's http.server: GET answers 501."""

    def do_POST(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *_args: object) -> None:
        return


@pytest.fixture
def stdlib_post_only() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _OnlyPost)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


async def _ok(_request: Request) -> Response:
    return JSONResponse({})


def _serve(*routes: Route) -> ServerThread:
    return ServerThread(Starlette(routes=list(routes))).start()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_http_server_without_do_get_counts_as_up(stdlib_post_only: str) -> None:
    with httpx.Client() as http:
        outcome = probe(http, stdlib_post_only)
    assert outcome.ready and outcome.answer == "HTTP 501"
    wait_listening(stdlib_post_only, timeout=5, what="runtime 'x'", hint="h")


@pytest.mark.parametrize(
    ("routes", "status"),
    [
        ((Route("/wt/inject", _ok, methods=["POST"]), Route("/wt/reset", _ok, methods=["POST"])), 404),
        ((Route("/wt/health", _ok, methods=["POST"]),), 405),
        ((Route("/wt/health", _ok, methods=["GET"]),), 200),
    ],
)
def test_any_answer_but_a_5xx_counts_as_up(routes: tuple[Route, ...], status: int) -> None:
    server = _serve(*routes)
    try:
        with httpx.Client() as http:
            assert probe(http, server.url).answer == f"HTTP {status}"
        wait_listening(server.url, timeout=5, what="runtime 'x'", hint="h")
    finally:
        server.stop()


def test_503_is_not_ready_yet_until_it_stops() -> None:
    ready_at = time.monotonic() + 0.5

    async def warming(_request: Request) -> Response:
        return JSONResponse({}, status_code=503 if time.monotonic() < ready_at else 200)

    server = _serve(Route("/wt/health", warming, methods=["GET"]))
    try:
        wait_listening(server.url, timeout=10, what="runtime 'x'", hint="h")
        assert time.monotonic() >= ready_at
    finally:
        server.stop()


def test_a_5xx_until_the_deadline_is_reported_with_the_answer() -> None:
    async def broken(_request: Request) -> Response:
        return Response(json.dumps({"error": "model not loaded"}), status_code=500)

    server = _serve(Route("/wt/health", broken, methods=["GET"]))
    try:
        with pytest.raises(RuntimeUnavailableError) as raised:
            wait_listening(
                server.url, timeout=0.3, what="runtime 'slowpoke'", hint="fix it", runtime="slowpoke"
            )
    finally:
        server.stop()
    message = str(raised.value)
    assert "runtime 'slowpoke' did not answer HTTP" in message
    assert "answered HTTP 500" in message and "model not loaded" in message
    assert raised.value.hint == "fix it"


def test_nothing_listening_fails_at_the_deadline() -> None:
    url = f"http://127.0.0.1:{_free_port()}"
    with pytest.raises(RuntimeUnavailableError, match="no HTTP answer"):
        wait_listening(url, timeout=0.2, what="runtime 'x'", hint="h")


def test_a_gone_service_fails_at_once_with_its_details() -> None:
    url = f"http://127.0.0.1:{_free_port()}"
    started = time.monotonic()
    with pytest.raises(RuntimeUnavailableError) as raised:
        wait_listening(
            url,
            timeout=30,
            what="runtime 'x'",
            gone=lambda: "container exited",
            details=lambda: "\n  its last log lines: boom",
            hint="h",
        )
    assert time.monotonic() - started < 5
    assert "(container exited)" in str(raised.value) and "boom" in str(raised.value)


def test_a_slow_start_asks_whether_the_service_is_gone_a_few_times_a_second_not_per_probe() -> None:
    url = f"http://127.0.0.1:{_free_port()}"
    asked: list[float] = []

    def gone() -> str | None:  # each answer costs an engine call (an inspect) in the container driver
        asked.append(time.monotonic())
        return None

    started = time.monotonic()
    with pytest.raises(RuntimeUnavailableError, match="no HTTP answer"):
        wait_listening(url, timeout=1.0, what="runtime 'x'", hint="h", gone=gone)
    elapsed = time.monotonic() - started
    assert len(asked) <= elapsed / GONE_EVERY_S + 2  # once per quarter second, and at the deadline
    assert asked and asked[-1] >= started + 1.0  # the last answer was asked at the deadline
