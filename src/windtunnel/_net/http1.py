"""A small keep-alive HTTP/1.1 client for the harness's hottest hop: one Contract C request per agent turn.

Built on the standard library's http.client: it costs about a third of an httpx client's CPU (measured
against a local server on a 2-core machine: ~0.15 ms against ~0.55 ms per request), and every turn of
every case pays it; bench/bench_stack.py shows the effect on a whole turn. It does what that hop needs and
no more: one connection, reused while the server keeps it open; http and https; one timeout that bounds the
whole exchange (connect, send, status line, headers and body together: a server trickling its answer a
byte at a time cannot stretch it, as a per-read timeout would let it); a limit on the answer's size (a
runaway answer is refused, not buffered). No proxies: a Contract C endpoint is a local process or a
container on the run's own network, never something to reach through HTTP_PROXY.

A connection the server has closed while idle (uvicorn's keep-alive ends after 5 s) is noticed before it is
reused: an idle keep-alive socket that turns readable has seen its end. The request then goes out on a new
connection instead of failing. A request is never sent twice: one that fails once sent is reported.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import select
import socket
import ssl
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit


class Http1Error(Exception):
    """The exchange failed at the transport level (connect, send, receive, malformed HTTP)."""


class Http1Timeout(Http1Error):
    """No whole answer (or no connection) within the client's timeout."""


class Http1TooLarge(Http1Error):
    """The answer is larger than the client's `max_response_bytes`; it was not read further."""

    def __init__(self, message: str, *, limit: int) -> None:
        super().__init__(message)
        self.limit = limit


_CHUNK = 1 << 16
_IDLE_EXIT_S = 30.0


@dataclass(frozen=True, slots=True)
class Http1Response:
    status_code: int
    content: bytes

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        """The body decoded as JSON; ValueError when it is not."""
        return json.loads(self.content)


def is_http_url(url: str) -> bool:
    """Whether `url` names an http or https origin (scheme and host), as Http1Client needs."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        return False
    return parts.scheme in {"http", "https"} and bool(parts.hostname)


class Http1Client:
    """Keep-alive JSON POSTs to one origin: `Http1Client("http://host:port", timeout=...)`.

    One connection: posts from several threads take turns on it (a lock), they never share it mid-exchange.
    `timeout` bounds each whole exchange; `max_response_bytes` bounds each answer's body.
    """

    def __init__(
        self,
        base_url: str,
        *,
        timeout: float,
        ssl_context: ssl.SSLContext | None = None,
        max_response_bytes: int | None = None,
    ) -> None:
        if not is_http_url(base_url):
            raise ValueError(f"not an http(s) URL: {base_url!r}")
        parts = urlsplit(base_url)
        self._https = parts.scheme == "https"
        self._host = parts.hostname or ""
        self._port = parts.port or (443 if self._https else 80)
        self._prefix = parts.path.rstrip("/")
        self._timeout = timeout
        self._ssl_context = ssl_context
        self._max_bytes = max_response_bytes
        self._connection: http.client.HTTPConnection | None = None
        self._lock = threading.Lock()
        self._watchdog = _Watchdog()

    @property
    def timeout(self) -> float:
        return self._timeout

    @timeout.setter
    def timeout(self, seconds: float) -> None:
        """A new timeout applies from the next connection on, so the current one is closed."""
        self._timeout = seconds
        self.close()

    def post_json(self, path: str, body: Mapping[str, Any]) -> Http1Response:
        """POST `body` as JSON to `path` under the base URL; the whole response is read."""
        payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
        with self._lock:
            return self._exchange(path, payload)

    def _exchange(self, path: str, payload: bytes) -> Http1Response:
        connection = self._open()
        self._watchdog.arm(connection, self._timeout)
        try:
            connection.request(
                "POST",
                self._prefix + path,
                body=payload,
                headers={"Content-Type": "application/json", "Accept": "application/json"},
            )
            response = connection.getresponse()
            content = self._body(response)
        except Http1TooLarge:
            self.close()  # the rest of the answer is never read, so the connection cannot be reused
            raise
        except (OSError, http.client.HTTPException) as exc:
            self.close()
            if self._watchdog.fired or isinstance(exc, TimeoutError):
                raise Http1Timeout(f"no whole answer within {self._timeout}s") from exc
            raise Http1Error(f"{type(exc).__name__}: {exc}") from exc
        finally:
            self._watchdog.disarm()
        if response.will_close:
            self.close()
        return Http1Response(response.status, content)

    def _body(self, response: http.client.HTTPResponse) -> bytes:
        """The whole body, or Http1TooLarge as soon as it is known to exceed the limit."""
        limit = self._max_bytes
        if limit is None:
            return response.read()
        if response.length is not None and response.length > limit:
            raise self._too_large(f"announces {response.length} bytes")
        parts: list[bytes] = []
        size = 0
        while chunk := response.read(_CHUNK):
            size += len(chunk)
            if size > limit:
                raise self._too_large(f"ran past {limit} bytes")
            parts.append(chunk)
        return b"".join(parts)

    def _too_large(self, what: str) -> Http1TooLarge:
        limit = self._max_bytes or 0
        return Http1TooLarge(f"the answer {what}, more than the limit of {limit} bytes", limit=limit)

    def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()

    def shutdown(self) -> None:
        """close(), and stop the deadline thread (it is started again by the next post)."""
        self.close()
        self._watchdog.stop()

    def __enter__(self) -> Http1Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    def _open(self) -> http.client.HTTPConnection:
        connection = self._connection
        if connection is not None and _ended(connection):
            self.close()
            connection = None
        if connection is None:
            connection = self._new_connection()
            self._connection = connection
        return connection

    def _new_connection(self) -> http.client.HTTPConnection:
        if self._https:
            return http.client.HTTPSConnection(
                self._host, self._port, timeout=self._timeout, context=self._ssl_context
            )
        return http.client.HTTPConnection(self._host, self._port, timeout=self._timeout)


def _ended(connection: http.client.HTTPConnection) -> bool:
    """Whether an idle kept-alive connection was closed (or broken) by the server since its last answer."""
    sock = connection.sock
    if sock is None:
        return False  # not connected yet: http.client connects on the next request
    try:
        if hasattr(select, "poll"):  # no limit on the descriptor's number, unlike select()
            poller = select.poll()
            poller.register(sock, select.POLLIN)
            return bool(poller.poll(0))
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


class _Watchdog:
    """Ends an exchange that outlives its deadline: one thread per client, armed and disarmed per exchange
    (a Condition notify, microseconds), which shuts the connection's socket down at the deadline so the
    blocked read returns at once. A per-read socket timeout cannot do this: every byte would restart it."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._connection: http.client.HTTPConnection | None = None
        self._deadline = 0.0
        self._thread: threading.Thread | None = None
        self._stopped = False
        self.fired = False

    def arm(self, connection: http.client.HTTPConnection, seconds: float) -> None:
        with self._condition:
            self._connection, self._deadline, self.fired = connection, time.monotonic() + seconds, False
            self._stopped = False
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="wt-http1-deadline", daemon=True)
                self._thread.start()
            self._condition.notify()

    def disarm(self) -> None:
        with self._condition:
            self._connection = None
            self._condition.notify()

    def stop(self) -> None:
        with self._condition:
            self._connection, self._stopped = None, True
            self._condition.notify()

    def _run(self) -> None:
        with self._condition:
            while not self._stopped:
                if self._connection is None:
                    if not self._condition.wait(_IDLE_EXIT_S) and self._connection is None:
                        break  # idle: a client nobody posts with holds no thread (arm starts a new one)
                    continue
                left = self._deadline - time.monotonic()
                if left > 0:
                    self._condition.wait(left)
                    continue
                self.fired = True
                _shut(self._connection)
                self._connection = None
            self._thread = None


def _shut(connection: http.client.HTTPConnection) -> None:
    sock = connection.sock
    if sock is not None:
        with contextlib.suppress(OSError):  # already closed: the exchange is over either way
            sock.shutdown(socket.SHUT_RDWR)
