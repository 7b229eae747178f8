"""Serving the gateway app with uvicorn until SIGINT or SIGTERM, so `wt gateway serve` decides its exit code.

uvicorn shuts down gracefully on a signal and then raises the same signal again, which kills the process
(exit -15) before it can report what the shutdown found. Here a signal only stops the server; the caller
then reads `GatewayState.shutdown_error` (a tape that failed at shutdown) and exits 1 or 0.
"""

from __future__ import annotations

import signal
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class _Server(uvicorn.Server):
    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        # Same as uvicorn's, minus re-raising the signal afterwards: a signal is how this server is stopped.
        original = {sig: signal.signal(sig, self.handle_exit) for sig in STOP_SIGNALS}
        try:
            yield
        finally:
            for sig, handler in original.items():
                signal.signal(sig, handler)


def serve(app: Any, sock: socket.socket) -> None:
    """Serve `app` on the bound `sock` until a stop signal; returns after a graceful shutdown."""
    server = _Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on"))
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
