"""The TCP socket a server listens on (`wt gateway serve`, `wt mcp serve`, the harness's loopback servers):
bound with a one-line error, listening, announced."""

from __future__ import annotations

import socket
import sys

from windtunnel.errors import HarnessError

BACKLOG = 128
"""Connections the kernel queues before the server accepts them (asyncio's default for create_server)."""


def listen_tcp(host: str, port: int) -> socket.socket:
    """A bound, listening TCP socket. Created from getaddrinfo, so it names IPPROTO_TCP: asyncio sets
    TCP_NODELAY only on sockets that do, and without it Nagle plus delayed ACK add ~40 ms to every response
    uvicorn writes in two parts. It listens before it is announced: a client that connects as soon as it
    reads the announcement is queued until the server accepts, never refused."""
    sock: socket.socket | None = None
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(BACKLOG)
    except OSError as exc:
        if sock is not None:
            sock.close()
        raise HarnessError(
            f"cannot listen on {host}:{port}: {exc}",
            hint="pick another --port, or check that --host is an address of this machine",
        ) from exc
    return sock


def announce(sock: socket.socket, what: str, path: str) -> None:
    """Print "wt: WHAT at http://HOST:PORT/PATH" on stderr: the one line a supervisor or a test waits for."""
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    print(f"wt: {what} at http://{shown}:{port}{path}", file=sys.stderr, flush=True)  # noqa: T201
