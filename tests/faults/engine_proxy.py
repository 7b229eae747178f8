"""A Unix-socket proxy to the Docker engine that a test can cut: `wt` talks to the engine through it (its
DOCKER_HOST), and `cut()` closes the listening socket and every connection, as an engine that went away.
The machine's real engine, which other runs share, is never stopped."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from pathlib import Path

CHUNK = 65536


class EngineProxy:
    def __init__(self, path: Path, target: str | None = None) -> None:
        self.path = path
        self.target = target or _engine_socket()
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(path))
        self._server.listen(64)
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        self._cut = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def docker_host(self) -> str:
        return f"unix://{self.path}"

    def cut(self) -> None:
        """The engine is gone for the client: no new connection, every open one closed."""
        with self._lock:
            self._cut = True
            sockets, self._open = [self._server, *self._open], []
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            upstream.connect(self.target)
            with self._lock:
                if self._cut:
                    client.close()
                    upstream.close()
                    return
                self._open += [client, upstream]
            threading.Thread(target=_pump, args=(client, upstream), daemon=True).start()
            threading.Thread(target=_pump, args=(upstream, client), daemon=True).start()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(CHUNK):
            sink.sendall(data)
    except OSError:
        pass
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)


def _engine_socket() -> str:
    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    if not host.startswith("unix://"):
        raise RuntimeError(f"the engine proxy needs a Unix-socket engine, and DOCKER_HOST is {host}")
    return host.removeprefix("unix://")
