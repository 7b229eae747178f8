"""GatewayClient against a real gateway on 127.0.0.1 (ServerThread): admin calls and the errors it raises."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import httpx
import pytest

from windtunnel._core.reference import ReferenceDecision, ReferenceToolCall
from windtunnel._gateway.app import create_app
from windtunnel._gateway.client import GatewayClient
from windtunnel._gateway.live import LiveMode
from windtunnel._gateway.script import ScriptMode
from windtunnel._net.server_thread import ServerThread
from windtunnel.errors import GatewayError, HarnessError

DECISIONS = (
    ReferenceDecision(tool_calls=(ReferenceToolCall("lookup_order", {"order_id": "A-1"}),)),
    ReferenceDecision(content="done"),
)


@pytest.fixture
def gateway() -> Iterator[GatewayClient]:
    with ServerThread(create_app(ScriptMode(), models=["m"])) as server, GatewayClient(server.url) as client:
        yield client


def ask(client: GatewayClient, session: str | None = None) -> httpx.Response:
    headers = {"X-WT-Session": session} if session else {}
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    return httpx.post(f"{client.base_url}/v1/chat/completions", json=body, headers=headers)


def test_install_serve_log_and_clear(gateway: GatewayClient) -> None:
    installed = gateway.install_script("golden", DECISIONS, session="s1")
    assert installed == {"case": "golden", "session": "s1", "total": 2, "served": 0, "remaining": 2}
    assert ask(gateway, "s1").json()["choices"][0]["finish_reason"] == "tool_calls"
    assert gateway.scripts()["sessions"]["s1"]["remaining"] == 1
    entries = gateway.log()
    assert [(e["index"], e["case"], e["session"]) for e in entries] == [(0, "golden", "s1")]
    ask(gateway, "s1")
    assert [e["index"] for e in gateway.log(since=1)] == [1]
    assert gateway.next_index() == 2
    assert gateway.clear_log() == 2
    assert gateway.next_index() == 2, "indices keep counting across clears"
    assert gateway.log() == []
    assert gateway.clear_script(session="s1") == 1
    assert ask(gateway, "s1").json()["error"]["code"] == "no_script"
    assert gateway.health()["requests"] == 3


def test_json_decisions_are_accepted_as_well(gateway: GatewayClient) -> None:
    installed = gateway.install_script("c", [{"content": "hi", "tool_calls": []}])
    assert installed["total"] == 1
    assert gateway.clear_script() == 1


def test_a_bad_script_raises_gateway_error_naming_the_field(gateway: GatewayClient) -> None:
    with pytest.raises(GatewayError, match=r"decisions\[0\]") as caught:
        gateway.install_script("c", [{"content": None, "tool_calls": []}])
    assert caught.value.reason == "invalid_script"  # type: ignore[attr-defined]
    assert caught.value.field == "decisions[0]"  # type: ignore[attr-defined]
    with pytest.raises(GatewayError) as empty_case:
        gateway.install_script("", DECISIONS)
    assert empty_case.value.field == "case"  # type: ignore[attr-defined]


def test_scripts_outside_script_mode_raise_gateway_error() -> None:
    app = create_app(LiveMode("http://127.0.0.1:9/v1"), models=["m"])
    with ServerThread(app) as server, GatewayClient(f"{server.url}/v1") as client:
        assert client.base_url == server.url
        with pytest.raises(GatewayError, match="live mode") as caught:
            client.install_script("c", DECISIONS)
        assert caught.value.reason == "not_script_mode"  # type: ignore[attr-defined]
        assert "--mode script" in str(caught.value)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_an_unreachable_gateway_raises_harness_error() -> None:
    with GatewayClient(f"http://127.0.0.1:{free_port()}", timeout=2) as client:
        with pytest.raises(HarnessError, match="unreachable"):
            client.health()
        with pytest.raises(HarnessError, match=r"did not become healthy within 0\.2s"):
            client.wait_until_healthy(timeout=0.2)


def test_something_that_is_not_a_gateway_raises_harness_error() -> None:
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    async def hello(_request: object) -> PlainTextResponse:
        return PlainTextResponse("hello")

    app = Starlette(routes=[Route("/wt/health", hello)])
    with (
        ServerThread(app) as server,
        GatewayClient(server.url) as client,
        pytest.raises(HarnessError) as caught,
    ):
        client.health()
    assert "other than a JSON object" in str(caught.value)
