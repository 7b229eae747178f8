"""The mock's ASGI app: MCP JSON-RPC at /mcp and the /wt admin routes, driven in-process over ASGI.

The Host/Origin guard in front of them is tested over real HTTP in test_mcp_hosts.py.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from windtunnel._core.mock_kit import MockHost, MockServer, Tool, ToolDenied, ToolError
from windtunnel._mcp.server import mock_app
from windtunnel._net.server_thread import ServerThread

COUNTER_SCHEMA = {
    "type": "object",
    "properties": {"by": {"type": "integer", "minimum": 1, "description": "how much to add"}},
    "required": ["by"],
    "additionalProperties": False,
}
ACCEPT = {"Accept": "application/json, text/event-stream"}


def _add(state: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    state["count"] += arguments["by"]
    return {"count": state["count"]}


def _fail(state: dict[str, Any], arguments: dict[str, Any]) -> None:
    raise ToolError("the counter is jammed")


def _deny(state: dict[str, Any], arguments: dict[str, Any]) -> None:
    raise ToolDenied("resetting the counter is not allowed")


def counter_server() -> MockServer:
    empty = {"type": "object", "properties": {}}
    return MockServer(
        "counter",
        [
            Tool(name="add", description="Add to the counter.", input_schema=COUNTER_SCHEMA, handler=_add),
            Tool(name="names", description="A list.", input_schema=empty, handler=lambda s, a: ["a", "b"]),
            Tool(name="jam", description="Always fails.", input_schema=empty, handler=_fail),
            Tool(name="zero", description="Denied.", input_schema=empty, handler=_deny),
            Tool(name="odd", description="Not JSON.", input_schema=empty, handler=lambda s, a: {1, 2}),
        ],
        {"count": 0},
    )


LOCAL = "http://localhost:8000"  # TestClient's own "testserver" is no name a mock answers to


@pytest.fixture
def client() -> Iterator[TestClient]:
    with TestClient(mock_app(MockHost(counter_server)), base_url=LOCAL) as test_client:
        yield test_client


def rpc(client: TestClient, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method}
    if params is not None:
        body["params"] = params
    response = client.post("/mcp", json=body, headers=ACCEPT)
    assert response.status_code == 200, response.text
    reply: dict[str, Any] = response.json()
    return reply


def call(client: TestClient, name: str, arguments: Any) -> dict[str, Any]:
    result: dict[str, Any] = rpc(client, "tools/call", {"name": name, "arguments": arguments})["result"]
    return result


def call_error(client: TestClient, name: str, arguments: Any) -> dict[str, Any]:
    reply = rpc(client, "tools/call", {"name": name, "arguments": arguments})
    assert "result" not in reply, reply
    error: dict[str, Any] = reply["error"]
    return error


def recorded(client: TestClient) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = client.get("/wt/calls").json()["calls"]
    return calls


def test_tools_list_shows_each_tool_exactly_as_declared(client: TestClient) -> None:
    tools = rpc(client, "tools/list")["result"]["tools"]
    declared = {tool.name: tool for tool in counter_server().tools.values()}
    assert [tool["name"] for tool in tools] == list(declared)
    for tool in tools:
        assert tool["description"] == declared[tool["name"]].description
        assert tool["inputSchema"] == dict(declared[tool["name"]].input_schema)


def test_call_returns_structured_content_and_the_same_json_as_text(client: TestClient) -> None:
    result = call(client, "add", {"by": 2})
    assert result["isError"] is False
    assert result["structuredContent"] == {"count": 2}
    assert json.loads(result["content"][0]["text"]) == {"count": 2}
    assert client.get("/wt/state").json() == {"server": "counter", "state": {"count": 2}}


def test_a_call_is_recorded_with_the_session_its_x_wt_session_names_and_without_one_when_none(
    client: TestClient,
) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"by": 1}},
    }
    answered = client.post("/mcp", json=body, headers={**ACCEPT, "X-WT-Session": "wt-s-1"})
    assert answered.status_code == 200, answered.text
    call(client, "add", {"by": 2})
    first, second = client.get("/wt/calls").json()["calls"]
    assert first["session"] == "wt-s-1" and first["arguments"] == {"by": 1}
    assert "session" not in second  # the header is optional: a call without it is recorded as ever


def test_a_result_that_is_not_an_object_is_wrapped_for_structured_content(client: TestClient) -> None:
    result = call(client, "names", {})
    assert result["structuredContent"] == {"result": ["a", "b"]}
    assert json.loads(result["content"][0]["text"]) == ["a", "b"]


def test_an_unknown_tool_is_invalid_params_and_still_recorded(client: TestClient) -> None:
    # The MCP spec's tools/call: an unknown tool is a protocol error (-32602), not a tool result. The
    # runner's integrity checks read the call log, so the call the model made must show up there.
    error = call_error(client, "subtract", {"by": 1})
    assert error["code"] == -32602
    assert "unknown tool 'subtract'" in error["message"] and "tools here: add, jam" in error["message"]
    assert [(c["name"], c["arguments"], c["is_error"]) for c in recorded(client)] == [
        ("subtract", {"by": 1}, True)
    ]


def test_arguments_breaking_the_schema_are_an_error_result_and_recorded_as_received(
    client: TestClient,
) -> None:
    # Input validation errors are tool execution errors in the spec: the model can read and correct them.
    bad = call(client, "add", {"by": 0, "extra": True})
    assert bad["isError"] and "bad arguments for 'add'" in bad["content"][0]["text"]
    assert [(c["name"], c["arguments"], c["is_error"]) for c in recorded(client)] == [
        ("add", {"by": 0, "extra": True}, True)
    ]
    assert client.get("/wt/state").json()["state"] == {"count": 0}


def test_arguments_that_are_not_an_object_still_reach_the_recording(client: TestClient) -> None:
    # A runtime that forwards OpenAI's JSON-string arguments untouched: the SDK alone would reject it
    # before any handler saw it. The mock records it first, then answers as the SDK would (-32602).
    error = call_error(client, "add", '{"by": 1}')
    assert error["code"] == -32602 and "takes an object of arguments, got str" in error["message"]
    assert recorded(client)[0]["arguments"] == '{"by": 1}'


def test_an_unknown_tool_with_arguments_that_are_not_an_object_is_one_recorded_call(
    client: TestClient,
) -> None:
    error = call_error(client, "subtract", [1])
    assert error["code"] == -32602 and "unknown tool 'subtract'" in error["message"]
    assert [(c["name"], c["arguments"]) for c in recorded(client)] == [("subtract", [1])]


def test_missing_arguments_are_recorded_as_an_empty_object(client: TestClient) -> None:
    result = rpc(client, "tools/call", {"name": "names"})["result"]
    assert result["isError"] is False
    assert recorded(client)[0]["arguments"] == {}


def test_tool_errors_and_denials_are_error_results(client: TestClient) -> None:
    jammed, denied = call(client, "jam", {}), call(client, "zero", {})
    assert jammed["isError"] and jammed["content"][0]["text"] == "the counter is jammed"
    assert (
        denied["isError"] and "denied: resetting the counter is not allowed" in denied["content"][0]["text"]
    )
    assert [c["violation"] for c in recorded(client)] == [False, True]


def test_a_result_that_is_not_json_is_an_error_naming_the_cause(client: TestClient) -> None:
    result = call(client, "odd", {})
    assert result["isError"] and "not JSON" in result["content"][0]["text"]
    assert client.get("/wt/calls").status_code == 200


def test_reset_restores_fixture_state_and_empties_the_call_log(client: TestClient) -> None:
    call(client, "add", {"by": 5})
    assert client.post("/wt/reset").json() == {"server": "counter", "reset": True}
    assert client.get("/wt/state").json()["state"] == {"count": 0}
    assert recorded(client) == []
    assert call(client, "add", {"by": 1})["structuredContent"] == {"count": 1}


def test_health_names_the_server_and_its_tools(client: TestClient) -> None:
    assert client.get("/wt/health").json() == {
        "status": "ok",
        "server": "counter",
        "tools": ["add", "jam", "names", "odd", "zero"],
    }


def test_the_pack_name_of_the_server_is_what_the_admin_routes_report() -> None:
    with TestClient(mock_app(MockHost(counter_server), name="tally"), base_url=LOCAL) as test_client:
        assert test_client.get("/wt/state").json()["server"] == "tally"


def test_initialize_announces_only_the_tools_capability(client: TestClient) -> None:
    # What the official conformance suite is run against (nox -s mcp_conformance): nothing more is claimed.
    params = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    result = rpc(client, "initialize", params)["result"]
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert result["serverInfo"]["name"] == "windtunnel-mock-counter"
    assert rpc(client, "ping") == {"jsonrpc": "2.0", "id": 1, "result": {}}
    unserved = {"prompts/list": None, "resources/list": None, "logging/setLevel": {"level": "info"}}
    for method, method_params in unserved.items():
        assert rpc(client, method, method_params)["error"]["code"] == -32601, method


@pytest.mark.parametrize(("asked", "answered"), [("2025-06-18", "2025-06-18"), ("1999-01-01", "2025-11-25")])
def test_the_protocol_version_is_negotiated(client: TestClient, asked: str, answered: str) -> None:
    # A version the mock speaks is echoed; for another the server proposes its latest (lifecycle spec).
    params = {"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    assert rpc(client, "initialize", params)["result"]["protocolVersion"] == answered


def test_a_notification_is_accepted_without_a_body(client: TestClient) -> None:
    body = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    response = client.post("/mcp", json=body, headers=ACCEPT)
    assert response.status_code == 202 and response.content == b""


def test_admin_routes_refuse_the_wrong_method(client: TestClient) -> None:
    assert client.get("/wt/reset").status_code == 405
    assert client.post("/wt/calls").status_code == 405


def _waiting_server(release: threading.Event, started: threading.Event) -> MockServer:
    def wait(state: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
        started.set()
        return {"released": release.wait(timeout=30), "state_seen": dict(state)}

    empty = {"type": "object", "properties": {}}
    return MockServer(
        "waits",
        [
            Tool(name="wait", description="Waits.", input_schema=empty, handler=wait, blocking=True),
            Tool(name="add", description="Add to the counter.", input_schema=COUNTER_SCHEMA, handler=_add),
        ],
        {"count": 0},
    )


def test_a_blocking_tool_waits_in_a_thread_while_the_mock_answers_other_calls() -> None:
    # Over real HTTP: while `wait` holds its call, `add` must be answered; only then is `wait` released.
    # A mock that ran the waiting handler on its event loop (or under its state lock) would time out here.
    release, started = threading.Event(), threading.Event()
    host = MockHost(lambda: _waiting_server(release, started))
    with ServerThread(mock_app(host), name="wt-test-mock") as server, httpx.Client(timeout=30) as http:

        def post(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            body = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": name, "arguments": arguments},
            }
            reply: dict[str, Any] = http.post(f"{server.url}/mcp", json=body, headers=ACCEPT).json()["result"]
            return reply

        waiting: dict[str, Any] = {}
        caller = threading.Thread(target=lambda: waiting.update(post("wait", {})))
        caller.start()
        assert started.wait(timeout=10)
        with httpx.Client(timeout=5) as other:
            body = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "add", "arguments": {"by": 2}},
            }
            answered = other.post(f"{server.url}/mcp", json=body, headers=ACCEPT).json()["result"]
        release.set()
        caller.join(timeout=10)
    assert answered["structuredContent"] == {"count": 2}
    # The waiting handler saw no state (it may change none) and was released, not timed out.
    assert waiting["structuredContent"] == {"released": True, "state_seen": {}}
    assert [call["name"] for call in host.server.calls()] == ["add", "wait"]


def test_a_request_body_over_the_limit_is_refused_with_413_and_the_mock_serves_on() -> None:
    """Real HTTP: a tools/call whose declared or streamed body passes WT_MAX_BODY_BYTES never reaches the
    mock (nothing is recorded); a call under it does."""
    app = mock_app(MockHost(counter_server), max_body_bytes=4096)
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"by": 1}},
    }
    big = {**call, "params": {"name": "add", "arguments": {"by": 1, "pad": "x" * 8192}}}
    headers = {**ACCEPT, "content-type": "application/json"}
    with ServerThread(app) as server, httpx.Client(base_url=server.url, timeout=30) as http:
        declared = http.post("/mcp", content=json.dumps(big), headers=headers)
        assert declared.status_code == 413 and declared.json()["error"]["code"] == "body_too_large"

        def streamed() -> Iterator[bytes]:
            text = json.dumps(big).encode()
            for start in range(0, len(text), 1000):
                yield text[start : start + 1000]

        assert http.post("/mcp", content=streamed(), headers=headers).status_code == 413
        assert http.get("/wt/calls").json()["calls"] == []
        assert http.post("/mcp", json=call, headers=ACCEPT).status_code == 200
        assert [c["name"] for c in http.get("/wt/calls").json()["calls"]] == ["add"]


def test_a_json_rpc_batch_is_refused(client: TestClient) -> None:
    # Protocol versions since 2025-06-18 have no batches; the SDK refuses one as a whole, nothing is run.
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add", "arguments": {"by": 1}}}
    ]
    response = client.post("/mcp", json=batch, headers=ACCEPT)
    assert response.status_code == 400
    assert recorded(client) == []
