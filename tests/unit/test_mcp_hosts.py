"""The mock's Host/Origin guard over real HTTP: uvicorn on loopback, requests as clients send them."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from windtunnel._core.mock_kit import MockHost, MockServer, Tool
from windtunnel._mcp.hosts import AllowedHosts, host_name
from windtunnel._mcp.server import mock_app
from windtunnel._net.server_thread import ServerThread
from windtunnel.errors import UsageError

ACCEPT = {"Accept": "application/json, text/event-stream"}
ALIAS = "mock-notes-counter"


def _add(state: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    state["count"] += arguments["by"]
    return {"count": state["count"]}


def counter() -> MockServer:
    schema = {"type": "object", "properties": {"by": {"type": "integer"}}, "required": ["by"]}
    return MockServer(
        "counter", [Tool(name="add", description="Add.", input_schema=schema, handler=_add)], {"count": 0}
    )


@pytest.fixture
def host() -> MockHost:
    return MockHost(counter)


@pytest.fixture
def served(host: MockHost) -> Iterator[ServerThread]:
    with ServerThread(mock_app(host, allowed_hosts=[ALIAS]), name="wt-test-hosts") as server:
        yield server


def _call(server: ServerThread, headers: dict[str, str], by: int = 1) -> httpx.Response:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"by": by}},
    }
    with httpx.Client(timeout=10) as client:
        return client.post(f"{server.url}/mcp", json=body, headers={**ACCEPT, **headers})


@pytest.mark.parametrize(
    "headers",
    [
        {},  # httpx sends Host 127.0.0.1:PORT: the address the connection reached
        {"Host": "localhost:{port}"},
        {"Host": "[::1]:{port}"},
        {"Host": f"{ALIAS}:8000"},  # how a runtime on the run network names the mock
        {"Host": f"{ALIAS.upper()}.:8000"},  # names are case-insensitive; a trailing dot is the same name
        {"Host": ALIAS, "Origin": f"http://{ALIAS}:8000"},
        {"Host": "localhost:{port}", "Origin": "http://127.0.0.1:{port}"},
    ],
)
def test_names_the_harness_uses_are_served_and_recorded(
    served: ServerThread, host: MockHost, headers: dict[str, str]
) -> None:
    response = _call(served, {key: value.format(port=served.port) for key, value in headers.items()})
    assert response.status_code == 200, response.text
    assert response.json()["result"]["structuredContent"] == {"count": 1}
    assert [call["arguments"] for call in host.server.calls()] == [{"by": 1}]


@pytest.mark.parametrize(
    ("headers", "status", "text"),
    [
        ({"Host": "evil.example.com"}, 421, "Invalid Host header"),
        ({"Host": "evil.example.com:{port}"}, 421, "Invalid Host header"),
        ({"Host": f"{ALIAS}.evil.example.com:8000"}, 421, "Invalid Host header"),
        ({"Host": "127.0.0.9:{port}"}, 421, "Invalid Host header"),  # an address this socket is not on
        ({"Host": "localhost:{port}", "Origin": "http://evil.example.com"}, 403, "Invalid Origin header"),
        ({"Host": "localhost:{port}", "Origin": "null"}, 403, "Invalid Origin header"),
        ({"Host": "localhost:{port}", "Origin": "file://localhost"}, 403, "Invalid Origin header"),
    ],
)
def test_other_names_are_refused_before_anything_is_recorded(
    served: ServerThread, host: MockHost, headers: dict[str, str], status: int, text: str
) -> None:
    response = _call(served, {key: value.format(port=served.port) for key, value in headers.items()})
    assert (response.status_code, response.text) == (status, text)
    assert host.server.calls() == []
    assert host.server.snapshot() == {"count": 0}


def test_the_admin_routes_are_guarded_too(served: ServerThread, host: MockHost) -> None:
    assert _call(served, {}, by=5).status_code == 200
    with httpx.Client(base_url=served.url, timeout=10) as client:
        evil = {"Host": "evil.example.com"}
        assert client.post("/wt/reset", headers=evil).status_code == 421
        assert client.get("/wt/calls", headers=evil).status_code == 421
        assert client.get("/wt/state", headers={"Origin": "http://evil.example.com"}).status_code == 403
        assert host.server.snapshot() == {"count": 5}  # the refused reset did not happen
        assert client.post("/wt/reset", headers={"Host": f"{ALIAS}:8000"}).json()["reset"] is True
    assert host.server.snapshot() == {"count": 0}


def test_a_request_without_host_is_refused(served: ServerThread, host: MockHost) -> None:
    with socket.create_connection((served.host, served.port), timeout=10) as conn:
        conn.sendall(b"POST /wt/reset HTTP/1.0\r\nContent-Length: 0\r\n\r\n")
        answer = conn.recv(4096)
    assert answer.startswith(b"HTTP/1.1 421 ")


def test_the_address_a_connection_reached_is_accepted_and_no_other() -> None:
    # 127.0.0.2 is this machine's loopback too, but no loopback name: only "the address it reached" admits it.
    host = MockHost(counter)
    with ServerThread(mock_app(host), host="127.0.0.2", name="wt-test-hosts") as server:
        assert _call(server, {}).status_code == 200  # Host 127.0.0.2:PORT
        assert _call(server, {"Host": f"{ALIAS}:8000"}).status_code == 421  # not given as allowed here
        assert _call(server, {"Host": "127.0.0.3"}).status_code == 421
    assert len(host.server.calls()) == 1


def test_an_ip_address_is_compared_as_an_address() -> None:
    allowed = AllowedHosts.of(["10.0.0.7"])
    assert "::1" in allowed.names and "10.0.0.7" in allowed.names
    with TestClient(
        mock_app(MockHost(counter), allowed_hosts=["10.0.0.7"]), base_url="http://10.0.0.7"
    ) as client:
        assert client.get("/wt/health", headers={"Host": "[0:0:0:0:0:0:0:1]:8000"}).status_code == 200
        assert client.get("/wt/health").status_code == 200


@pytest.mark.parametrize(
    ("given", "name"),
    [("Mock-A", "mock-a"), ("mock-a.", "mock-a"), ("[::1]", "::1"), ("10.0.0.1", "10.0.0.1")],
)
def test_allowed_names_are_normalised(given: str, name: str) -> None:
    assert host_name(given) == name


@pytest.mark.parametrize("given", ["", "mock-a:8000", "http://mock-a", "mock-a/mcp", "user@mock-a"])
def test_a_malformed_allowed_name_is_a_usage_error_naming_the_flag(given: str) -> None:
    with pytest.raises(UsageError, match="--allow-host") as caught:
        host_name(given)
    assert caught.value.hint and "without scheme, port or path" in caught.value.hint
