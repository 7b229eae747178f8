"""HttpMCPHandle: the admin routes read over HTTP, with clear errors when the mock is missing or wrong."""

from __future__ import annotations

import socket
from typing import Any

import httpx
import pytest

from windtunnel._mcp.http_handle import HttpMCPHandle
from windtunnel.errors import HarnessError
from windtunnel.spi import RecordingMCPHandle


def serving(answers: dict[str, Any], seen: list[str] | None = None) -> httpx.MockTransport:
    """A transport answering `METHOD path` keys; a tuple value is (status, body text)."""

    def handle(request: httpx.Request) -> httpx.Response:
        key = f"{request.method} {request.url}"
        if seen is not None:
            seen.append(key)
        answer = answers.get(key)
        if answer is None:
            return httpx.Response(404, text="not found")
        if isinstance(answer, tuple):
            return httpx.Response(answer[0], text=answer[1])
        return httpx.Response(200, json=answer)

    return httpx.MockTransport(handle)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_is_a_recording_handle_whose_admin_base_is_the_url_without_mcp() -> None:
    handle = HttpMCPHandle("billing", "http://127.0.0.1:8000/mcp")
    assert isinstance(handle, RecordingMCPHandle)
    assert (handle.name, handle.url, handle.admin_url) == (
        "billing",
        "http://127.0.0.1:8000/mcp",
        "http://127.0.0.1:8000",
    )
    assert HttpMCPHandle("b", "http://proxy/tools/billing/mcp/").admin_url == "http://proxy/tools/billing"


def test_reads_calls_state_and_resets_at_the_admin_base_not_the_agent_url() -> None:
    seen: list[str] = []
    admin = "http://172.18.0.5:8000"
    transport = serving(
        {
            f"GET {admin}/wt/calls": {"server": "billing", "calls": [{"name": "issue_refund"}]},
            f"GET {admin}/wt/state": {"server": "billing", "state": {"refunds": []}},
            f"POST {admin}/wt/reset": {"server": "billing", "reset": True},
        },
        seen,
    )
    handle = HttpMCPHandle("billing", "http://mock-billing:8000/mcp", admin, transport=transport)
    assert handle.url == "http://mock-billing:8000/mcp"
    assert handle.calls() == [{"name": "issue_refund"}]
    assert handle.state() == {"refunds": []}
    handle.reset()
    assert seen == [f"GET {admin}/wt/calls", f"GET {admin}/wt/state", f"POST {admin}/wt/reset"]


def test_a_url_that_does_not_end_in_mcp_needs_an_admin_url() -> None:
    with pytest.raises(HarnessError, match="expected a URL ending in /mcp"):
        HttpMCPHandle("billing", "http://127.0.0.1:8000/")


def test_an_unreachable_mock_is_a_harness_error_naming_it() -> None:
    handle = HttpMCPHandle("billing", f"http://127.0.0.1:{free_port()}/mcp", timeout_s=2)
    with pytest.raises(
        HarnessError, match=r"MCP mock 'billing' is unreachable: GET http://127\.0\.0\.1:\d+/wt/calls"
    ):
        handle.calls()
    with pytest.raises(HarnessError, match=r"not ready within 0\.2s"):
        handle.wait_ready(0.2)


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ((500, "boom"), "answered GET http://m:1/wt/state with HTTP 500: boom"),
        ((200, "<html>"), "something other than a JSON object"),
        (
            {"server": "orders", "state": {}},
            "expected MCP mock 'billing' at http://m:1/wt/state, found mock 'orders'",
        ),
        ({"server": "billing", "state": []}, "should hold an object under 'state', found list"),
    ],
)
def test_a_wrong_answer_is_a_harness_error_that_says_what_was_found(answer: Any, message: str) -> None:
    handle = HttpMCPHandle(
        "billing", "http://m:1/mcp", transport=serving({"GET http://m:1/wt/state": answer})
    )
    with pytest.raises(HarnessError) as error:
        handle.state()
    assert message in str(error.value)


def test_a_reset_the_mock_does_not_confirm_is_an_error() -> None:
    transport = serving({"POST http://m:1/wt/reset": {"server": "billing", "reset": False}})
    with pytest.raises(HarnessError, match="did not confirm its reset"):
        HttpMCPHandle("billing", "http://m:1/mcp", transport=transport).reset()


def test_a_closed_handle_says_so_instead_of_reaching_out() -> None:
    handle = HttpMCPHandle("billing", "http://m:1/mcp", transport=serving({}))
    handle.close()
    handle.close()
    with pytest.raises(HarnessError, match="asked of a closed handle"):
        handle.calls()
