"""Run an ASGI app with uvicorn in a background thread; the harness's own servers listen on loopback."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from typing import Any

import uvicorn

from windtunnel._net.listen import listen_tcp

LOOPBACK = "127.0.0.1"


class ServerThread:
    """A uvicorn server in a daemon thread. `url` is known once started; `stop()` is idempotent."""

    def __init__(self, app: Any, *, host: str = LOOPBACK, port: int = 0, name: str = "wt-server") -> None:
        self._socket = listen_tcp(host, port)
        self.host, self.port = self._socket.getsockname()[:2]
        config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def _serve(self) -> None:
        self._server.run(sockets=[self._socket])

    def start(self, timeout: float = 10.0) -> ServerThread:
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"server {self.url} did not start within {timeout}s")
            time.sleep(0.01)
        return self

    def request_stop(self) -> None:
        """Ask the server to stop without waiting: its loop notices within a tick (0.1 s)."""
        self._server.should_exit = True

    def stop(self, timeout: float = 10.0, graceful: float = 2.0) -> None:
        """Stop serving: requests in flight get `graceful` seconds to end, then uvicorn stops waiting for
        them (an open stream, such as an MCP client's GET listener, would otherwise hold the stop until
        `timeout` and leave the thread running)."""
        if not self._thread.is_alive():
            self._socket.close()
            return
        self.request_stop()
        self._thread.join(min(graceful, timeout))
        if self._thread.is_alive():
            self._server.force_exit = True
            self._thread.join(max(timeout - graceful, 0.0))
        self._socket.close()

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def stop_servers(servers: Iterable[ServerThread]) -> None:
    """Stop many servers in one tick of their loops, not one tick each."""
    servers = list(servers)
    for server in servers:
        server.request_stop()
    for server in servers:
        server.stop()
