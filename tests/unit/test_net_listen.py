"""The socket `wt gateway serve` and `wt mcp serve` announce: it accepts connections from the moment its
line is printed, before any server runs on it."""

from __future__ import annotations

import socket

import pytest

from windtunnel._net.listen import announce, listen_tcp
from windtunnel.errors import HarnessError


def test_a_client_that_connects_on_the_announcement_is_queued_not_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    server = listen_tcp("127.0.0.1", 0)
    try:
        announce(server, "a test server", "/v1")
        url = capsys.readouterr().err.strip().rsplit(" at ", 1)[-1]
        port = int(url.removeprefix("http://127.0.0.1:").removesuffix("/v1"))
        with socket.create_connection(("127.0.0.1", port), timeout=2):  # no server is accepting yet
            accepted, _ = server.accept()
            accepted.close()
    finally:
        server.close()


def test_a_port_in_use_is_one_error_naming_it() -> None:
    taken = listen_tcp("127.0.0.1", 0)
    try:
        port = taken.getsockname()[1]
        with pytest.raises(HarnessError, match=f"cannot listen on 127.0.0.1:{port}"):
            listen_tcp("127.0.0.1", port)
    finally:
        taken.close()
