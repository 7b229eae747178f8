"""The minimal runtime's stdlib MCP client against a server that behaves as MCP allows (SEP-1699): a call's
SSE stream closed before its answer is resumed with a GET after the server's `retry:` delay, naming the
last event id, and read until the answer (the server keeps that stream open); a stream with no event id is
not resumable and the call fails with the server named; a session ends with a DELETE. The server is a
stdlib HTTP server on loopback, shaped like the official suite's sse-retry scenario."""

from __future__ import annotations

import importlib
import json
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

RUNTIME_DIR = Path(__file__).resolve().parents[2] / "runtimes" / "minimal"
RETRY_MS = 300
SESSION = "session-1"


def _mcp() -> Any:
    if str(RUNTIME_DIR) not in sys.path:
        sys.path.insert(0, str(RUNTIME_DIR))
    return importlib.import_module("minimal_agent.mcp")


class Seen:
    """What the server saw: each request's method and headers, when the call's stream closed."""

    def __init__(self, resumable: bool) -> None:
        self.resumable = resumable
        self.requests: list[tuple[str, Any]] = []  # headers read case-blind, as HTTP has them
        self.closed_at = 0.0
        self.resumed_at = 0.0
        self.pending: Any = None


def handler(seen: Seen) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            return

        def _sse_head(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Mcp-Session-Id", SESSION)
            self.end_headers()

        def do_POST(self) -> None:
            seen.requests.append(("POST", self.headers))
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if body.get("method") != "tools/call":
                answer = json.dumps({"jsonrpc": "2.0", "id": body.get("id"), "result": {}}).encode()
                self.send_response(200 if "id" in body else 202)
                self.send_header("Content-Type", "application/json")
                self.send_header("Mcp-Session-Id", SESSION)
                self.send_header("Content-Length", str(len(answer) if "id" in body else 0))
                self.end_headers()
                if "id" in body:
                    self.wfile.write(answer)
                return
            seen.pending = body["id"]
            self._sse_head()
            priming = f"id: event-1\nretry: {RETRY_MS}\ndata: \n\n" if seen.resumable else ": opened\n\n"
            self.wfile.write(priming.encode())
            self.wfile.flush()
            time.sleep(0.05)
            seen.closed_at = time.monotonic()
            self.close_connection = True  # the stream closes with no answer in it

        def do_GET(self) -> None:
            seen.requests.append(("GET", self.headers))
            seen.resumed_at = time.monotonic()
            self._sse_head()
            answer = {
                "jsonrpc": "2.0",
                "id": seen.pending,
                "result": {"content": [{"type": "text", "text": "ok"}]},
            }
            self.wfile.write(f"id: event-2\nretry: {RETRY_MS}\ndata: \n\n".encode())
            self.wfile.write(f"event: message\nid: event-3\ndata: {json.dumps(answer)}\n\n".encode())
            self.wfile.flush()
            time.sleep(2)  # the stream stays open after the answer, as the suite's does
            self.close_connection = True

        def do_DELETE(self) -> None:
            seen.requests.append(("DELETE", self.headers))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

    return Handler


@pytest.fixture
def served(request: pytest.FixtureRequest) -> Iterator[tuple[str, Seen]]:
    seen = Seen(resumable=request.param)
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(seen))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/mcp", seen
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("served", [True], indirect=True)
def test_a_call_whose_stream_closed_is_resumed_after_the_retry_delay_with_the_last_event_id(
    served: tuple[str, Seen],
) -> None:
    url, seen = served
    link = _mcp().McpServerLink(url)
    link.open()
    started = time.monotonic()
    parts, is_error = link.call("test_reconnection", {})
    assert (parts, is_error) == ([{"type": "text", "text": "ok"}], False)
    assert time.monotonic() - started < 1.5  # the answer ends the read, not the stream's end
    waited = (seen.resumed_at - seen.closed_at) * 1000
    assert RETRY_MS - 50 <= waited <= RETRY_MS + 200, waited  # the suite's tolerance
    (get,) = [headers for method, headers in seen.requests if method == "GET"]
    assert get["Last-Event-ID"] == "event-1" and get["Mcp-Session-Id"] == SESSION
    link.close()
    (delete,) = [headers for method, headers in seen.requests if method == "DELETE"]
    assert delete["Mcp-Session-Id"] == SESSION
    link.close()  # the session is ended once
    assert [method for method, _ in seen.requests].count("DELETE") == 1


@pytest.mark.parametrize("served", [False], indirect=True)
def test_a_stream_closed_without_an_event_id_is_not_resumed_and_the_call_fails(
    served: tuple[str, Seen],
) -> None:
    url, seen = served
    mcp = _mcp()
    link = mcp.McpServerLink(url)
    link.open()
    with pytest.raises(mcp.McpFailure, match="gave no answer to tools/call"):
        link.call("test_reconnection", {})
    assert "GET" not in [method for method, _ in seen.requests]
