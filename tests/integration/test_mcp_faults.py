"""Scripted faults of the MCP mocks, over real HTTP (uvicorn on 127.0.0.1) with the official mcp SDK client.

Each fault answers the next call of its tool only, is recorded in /wt/calls with `fault` set, and (but for
`late`) the tool never runs: the fixture state is untouched.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from tests.unit.test_mcp_server import counter_server
from windtunnel._core.mock_kit import MockHost
from windtunnel._mcp.client import call_tool
from windtunnel._mcp.server import mock_app
from windtunnel._net.server_thread import ServerThread
from windtunnel.errors import HarnessError


@pytest.fixture
def mock() -> Iterator[tuple[str, httpx.Client]]:
    with (
        ServerThread(mock_app(MockHost(counter_server))) as server,
        httpx.Client(base_url=server.url) as admin,
    ):
        yield f"{server.url}/mcp", admin


def script(admin: httpx.Client, *faults: dict[str, object]) -> None:
    answer = admin.put("/wt/faults", json={"faults": list(faults)})
    assert answer.status_code == 200, answer.text


def test_an_error_result_answers_in_place_of_the_tool(mock: tuple[str, httpx.Client]) -> None:
    url, admin = mock
    script(admin, {"tool": "add", "kind": "error_result"})
    result = call_tool(url, "add", {"by": 2})
    assert result["isError"] is True and "scripted fault" in result["content"][0]["text"]
    assert call_tool(url, "add", {"by": 2})["structuredContent"] == {"count": 2}, "only the next call faults"
    first, second = admin.get("/wt/calls").json()["calls"]
    assert (first["fault"], first["is_error"], first["arguments"]) == ("error_result", True, {"by": 2})
    assert "fault" not in second
    assert admin.get("/wt/state").json()["state"] == {"count": 2}, "the faulted call never ran the tool"


def test_a_jsonrpc_error_is_an_error_not_a_result(mock: tuple[str, httpx.Client]) -> None:
    url, admin = mock
    script(admin, {"tool": "add", "kind": "jsonrpc_error"})
    with pytest.raises(HarnessError, match="JSON-RPC error -32603"):
        call_tool(url, "add", {"by": 1})
    assert admin.get("/wt/calls").json()["calls"][0]["fault"] == "jsonrpc_error"


def test_a_crash_drops_the_connection_mid_call(mock: tuple[str, httpx.Client]) -> None:
    url, admin = mock
    script(admin, {"tool": "add", "kind": "crash"})
    started = time.monotonic()
    with pytest.raises(HarnessError) as caught:
        call_tool(url, "add", {"by": 1}, timeout_s=5)
    assert time.monotonic() - started < 4, "the connection broke: no wait for a timeout"
    assert "JSON-RPC" not in str(caught.value), "no answer at all, not an error answer"
    assert call_tool(url, "add", {"by": 1})["structuredContent"] == {"count": 1}
    assert [c.get("fault") for c in admin.get("/wt/calls").json()["calls"]] == [None], "the tool ran once"
    (dropped,) = admin.get("/wt/requests").json()["requests"]
    assert dropped["method"] == "tools/call" and "crash" in dropped["error"]


def test_a_late_tool_runs_and_answers_after_its_delay(mock: tuple[str, httpx.Client]) -> None:
    url, admin = mock
    script(admin, {"tool": "add", "kind": "late", "seconds": 1.0})
    started = time.monotonic()
    assert call_tool(url, "add", {"by": 3})["structuredContent"] == {"count": 3}
    assert time.monotonic() - started >= 1.0
    script(admin, {"tool": "add", "kind": "late", "seconds": 3.0})
    with pytest.raises(HarnessError, match="no answer within"):
        call_tool(url, "add", {"by": 3}, timeout_s=1)


def test_faults_queue_per_tool_and_a_reset_clears_them(mock: tuple[str, httpx.Client]) -> None:
    url, admin = mock
    script(admin, {"tool": "names", "kind": "crash"}, {"tool": "add", "kind": "error_result"})
    assert call_tool(url, "add", {"by": 1})["isError"] is True
    assert admin.get("/wt/faults").json()["faults"] == [{"tool": "names", "kind": "crash", "seconds": 0.0}]
    admin.post("/wt/reset")
    assert admin.get("/wt/faults").json()["faults"] == []
    assert call_tool(url, "names", {})["structuredContent"] == {"result": ["a", "b"]}


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"faults": [{"tool": "add", "kind": "explode"}]}, "faults[0].kind"),
        ({"faults": [{"tool": "nope", "kind": "crash"}]}, "'nope'"),
        ({"faults": [{"tool": "add", "kind": "late", "seconds": -1}]}, "faults[0].seconds"),
        ({"fault": []}, "faults list"),
    ],
)
def test_a_bad_fault_script_is_refused_naming_the_culprit(
    mock: tuple[str, httpx.Client], body: dict[str, object], named: str
) -> None:
    _url, admin = mock
    answer = admin.put("/wt/faults", json=body)
    assert answer.status_code == 400 and named in answer.json()["error"]
    assert admin.get("/wt/faults").json()["faults"] == []
