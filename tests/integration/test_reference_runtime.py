"""The reference runtime (runtimes/reference) served in-process over Contract C, against the real stack parts.

Every server here is real and listens on 127.0.0.1: the runtime's own Starlette app under uvicorn,
Wind Tunnel's model gateway in script mode (JSON and SSE, scripted per test with ReferenceDecisions)
and the support_desk pack's MCP mocks (orders, billing) over streamable HTTP. What the runtime sent is
read from the gateway's request log, what the tools received from the mocks' evidence. Two faults the
gateway cannot produce (non-object arguments, a late model) use reference_standins.RawModel. No Docker.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.integration.reference_standins import (
    REFUND_ARGS,
    RUNTIME_DIR,
    RawModel,
    Stack,
    calls,
    inject,
    prompt_text,
    refund_script,
    running_stack,
    say,
)
from windtunnel._net.server_thread import ServerThread


@pytest.fixture
def stack() -> Iterator[Stack]:
    with running_stack() as running:
        yield running


# --- the agent loop -----------------------------------------------------------------------------------------


def test_two_step_tool_loop_reports_every_call_in_order_with_raw_arguments(stack: Stack) -> None:
    client = stack.start()
    refund_script(stack)
    response = inject(client, "s1", "Order A-1042 arrived broken, please refund the mug.")
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) == {"content", "tool_calls", "usage"}
    assert body["content"] == "Refunded 12.50 for the broken mug."
    assert body["tool_calls"] == [
        {"name": "lookup_order", "arguments": {"order_id": "A-1042"}},
        {"name": "issue_refund", "arguments": REFUND_ARGS},
    ]
    assert list(body["tool_calls"][1]["arguments"]) == [
        "reason",
        "order_id",
        "amount",
    ]  # key order as emitted
    assert stack.mcp_calls() == [("lookup_order", {"order_id": "A-1042"}), ("issue_refund", REFUND_ARGS)]
    requests = stack.requests()
    assert [r["session"] for r in requests] == ["s1"] * 3
    offered = {tool["function"]["name"]: tool for tool in requests[0]["tools"]}
    assert set(offered) == {"lookup_order", "issue_refund"}  # from two servers, orders and billing
    assert offered["issue_refund"]["function"]["parameters"]["required"] == ["order_id", "amount"]
    served_ids = [c["id"] for r in requests[:2] for c in r["response"]["tool_calls"]]
    tool_messages = [m for m in requests[2]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == served_ids  # each result answers its call
    looked_up = stack.mocks["orders"].calls()[0]["result"]
    assert json.loads(tool_messages[0]["content"]) == looked_up and looked_up["order_id"] == "A-1042"
    served = [r["usage"] for r in requests]
    assert body["usage"]["prompt_tokens"] == sum(u["prompt_tokens"] for u in served)
    assert body["usage"]["completion_tokens"] == sum(u["completion_tokens"] for u in served)
    assert [c["prompt_tokens"] for c in body["usage"]["calls"]] == [u["prompt_tokens"] for u in served]


def test_a_tool_error_and_an_unknown_tool_are_fed_back_and_still_reported(stack: Stack) -> None:
    client = stack.start()
    stack.script(
        calls(("lookup_order", {"order_id": "Z-9"}), ("cancel_order", {"order_id": "Z-9"})),
        say("I could not find that order."),
    )
    body = inject(client, "s1", "Cancel Z-9").json()
    assert [c["name"] for c in body["tool_calls"]] == ["lookup_order", "cancel_order"]
    fed_back = [m["content"] for m in stack.requests()[1]["messages"] if m["role"] == "tool"]
    assert "no order Z-9" in fed_back[0]
    assert fed_back[1].startswith("error: unknown tool 'cancel_order'")
    assert stack.mcp_calls() == [("lookup_order", {"order_id": "Z-9"})]  # the invented tool reached no mock


def test_a_session_remembers_its_earlier_turns(stack: Stack) -> None:
    client = stack.start()
    stack.script(say("Noted, Ada."), say("You are Ada."))
    inject(client, "s1", "My name is Ada Lovelace.")
    inject(client, "s1", "Who am I?")
    messages = stack.requests()[1]["messages"]
    assert [(m["role"], m["content"]) for m in messages] == [
        ("system", "You are the test agent."),
        ("user", "My name is Ada Lovelace."),
        ("assistant", "Noted, Ada."),
        ("user", "Who am I?"),
    ]


def test_two_sessions_do_not_mix(stack: Stack) -> None:
    client = stack.start()
    stack.script(say("ok"), say("ok"))
    inject(client, "alpha", "My favourite colour is teal.")
    inject(client, "beta", "Say hello.")
    beta = stack.requests("beta")[0]["messages"]
    assert [(m["role"], m["content"]) for m in beta] == [
        ("system", "You are the test agent."),
        ("user", "Say hello."),
    ]


def test_the_search_index_recalls_other_sessions_until_reset_wipes_everything(stack: Stack) -> None:
    client = stack.start()
    stack.script(calls(("lookup_order", {"order_id": "A-1042"})), say("ok"), session="seed")
    inject(client, "seed", "Remember the canary code wt-nonce-7f3a for order A-1042.")
    stack.script(say("ok"), say("ok"))
    inject(client, "probe", "Which canary code did I give you?")
    notes = stack.requests("probe")[0]["messages"][1]
    assert notes["role"] == "system"
    assert notes["content"].startswith("Relevant notes:")
    assert "wt-nonce-7f3a" in notes["content"]
    state = client.get("/wt/state").json()
    assert set(state["sessions"]) == {"seed", "probe"}
    assert {n["kind"] for n in state["index"]} == {"user", "tool"}  # user turns and tool results are indexed
    assert client.post("/wt/reset").status_code == 200
    assert client.get("/wt/state").json() == {"sessions": {}, "index": [], "log": []}
    inject(client, "probe-2", "Which canary code did I give you?")
    assert "wt-nonce-7f3a" not in prompt_text(stack.bodies("probe-2")[0])


# --- model options, streaming, errors -----------------------------------------------------------------------


def test_sampling_reaches_every_model_call_unchanged(stack: Stack) -> None:
    sampling = {"temperature": 0, "top_p": 0.5, "max_tokens": 64, "tool_choice": "required"}
    client = stack.start(WT_SAMPLING=json.dumps(sampling))
    refund_script(stack)
    assert inject(client, "s1", "Refund A-1042").status_code == 200
    requests = stack.requests()
    assert len(requests) == 3
    for request in requests:
        assert request["sampling"] == sampling
        assert isinstance(request["sampling"]["temperature"], int)  # forwarded as given, not coerced
        assert request["model"] == "wt-scripted"


def test_streaming_assembles_tool_call_deltas_and_usage(stack: Stack) -> None:
    client = stack.start(WT_STREAM="1")
    refund_script(stack)
    body = inject(client, "s1", "Refund A-1042").json()
    requests = stack.requests()
    assert all(r["stream"] and r["extra"]["stream_options"] == {"include_usage": True} for r in requests)
    assert all(r["usage_sent"] for r in requests)  # the gateway streamed the usage chunk every time
    assert body["content"] == "Refunded 12.50 for the broken mug."
    assert body["tool_calls"][1] == {"name": "issue_refund", "arguments": REFUND_ARGS}
    assert list(body["tool_calls"][1]["arguments"]) == ["reason", "order_id", "amount"]
    assert [c["prompt_tokens"] for c in body["usage"]["calls"]] == [
        r["usage"]["prompt_tokens"] for r in requests
    ]
    assert [name for name, _ in stack.mcp_calls()] == ["lookup_order", "issue_refund"]


@pytest.mark.parametrize("stream", ["0", "1"])
def test_a_refusing_gateway_gives_502_naming_its_cause(stack: Stack, stream: str) -> None:
    client = stack.start(WT_STREAM=stream)
    stack.script(calls(("lookup_order", {"order_id": "A-1042"})))
    response = inject(client, "s1", "Refund A-1042")
    assert response.status_code == 502
    error = response.json()["error"]
    assert "HTTP 422" in error
    assert "script exhausted" in error and "this is call 2" in error
    assert "script_exhausted" in error
    assert stack.requests()[-1]["error_code"] == "script_exhausted"
    assert client.get("/wt/state").json()["sessions"]["s1"] == [
        {"role": "system", "content": "You are the test agent."}
    ]


def test_a_turn_past_timeout_s_gives_504() -> None:
    # The gateway answers at once by design, so a late model is the RawModel stand-in's job.
    model = RawModel([{"content": "late", "delay": 1.5}])
    with running_stack() as stack, ServerThread(model.app()) as late:
        client = stack.start(servers=[], WT_MODEL_BASE_URL=f"{late.url}/v1")
        started = time.monotonic()
        response = inject(client, "s1", "hello", timeout_s=0.3)
        assert response.status_code == 504
        assert "timeout_s=0.3" in response.json()["error"]
        assert time.monotonic() - started < 1.2


def test_a_model_that_never_stops_calling_tools_is_cut_off(stack: Stack) -> None:
    client = stack.start(WT_MAX_STEPS="2")
    stack.script(*[calls(("lookup_order", {"order_id": "A-1042"}))] * 3)
    response = inject(client, "s1", "loop")
    assert response.status_code == 502
    assert "WT_MAX_STEPS" in response.json()["error"]
    assert len(stack.requests()) == 2


def test_tool_arguments_that_are_not_an_object_fail_the_turn(stack: Stack) -> None:
    # A reference decision's arguments are always an object, so the gateway cannot send a list: RawModel.
    model = RawModel([{"tool_calls": [("lookup_order", '["A-1042"]')]}])
    with ServerThread(model.app()) as raw:
        client = stack.start(WT_MODEL_BASE_URL=f"{raw.url}/v1")
        response = inject(client, "s1", "x")
    assert response.status_code == 502
    assert "not a JSON object" in response.json()["error"]
    assert stack.mcp_calls() == []  # the real mocks received nothing


def test_an_unreachable_mcp_server_gives_502_and_is_reconnected_once_back(stack: Stack) -> None:
    client = stack.start()
    stack.script(say("one"))
    assert inject(client, "s1", "first").status_code == 200  # the clients are open now
    port = stack.stop_mock("orders")
    # Tools are listed once per run, so the outage shows when the model calls a tool.
    stack.script(calls(("lookup_order", {"order_id": "A-1042"})))
    response = inject(client, "s1", "second")
    assert response.status_code == 502
    assert "'orders'" in response.json()["error"]
    stack.restart_mock("orders", port)
    stack.script(calls(("lookup_order", {"order_id": "A-1042"})), say("back"))
    assert inject(client, "s1", "third").json()["content"] == "back"
    assert stack.mcp_calls() == [("lookup_order", {"order_id": "A-1042"})]


def test_a_tool_name_offered_by_two_servers_is_refused(stack: Stack) -> None:
    url = stack.mocks["orders"].url
    client = stack.start(servers=[{"name": "orders", "url": url}, {"name": "orders-copy", "url": url}])
    response = inject(client, "s1", "x")
    assert response.status_code == 502
    assert "'orders'" in response.json()["error"]
    assert "'orders-copy'" in response.json()["error"]
    assert stack.requests() == []


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"message": {"role": "user", "content": "x"}, "timeout_s": 5}, "session_id"),
        ({"session_id": "s", "message": {"role": "assistant", "content": "x"}, "timeout_s": 5}, "message"),
        ({"session_id": "s", "message": {"role": "user", "content": "x"}, "timeout_s": -1}, "timeout_s"),
        (
            {"session_id": "s", "message": {"role": "user", "content": "x"}, "timeout_s": 5, "history": []},
            "history",
        ),
    ],
)
def test_a_bad_inject_request_gets_400_naming_the_field(
    stack: Stack, payload: dict[str, object], field: str
) -> None:
    response = stack.start().post("/wt/inject", json=payload)
    assert response.status_code == 400
    assert field in response.json()["error"]


def test_health_can_list_the_tools(stack: Stack) -> None:
    client = stack.start()
    assert client.get("/wt/health").json() == {"status": "ok"}
    deep = client.get("/wt/health", params={"tools": "1"}).json()
    assert deep == {"status": "ok", "tools": {"lookup_order": "orders", "issue_refund": "billing"}}


# --- the service entry point (python -m reference_agent), as the container runs it ----------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def entrypoint_env(**env: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("WT_")}
    return {**base, "WT_INJECT_HOST": "127.0.0.1", **env}


def test_the_entry_point_refuses_an_unknown_fault() -> None:
    env = entrypoint_env(
        WT_MODEL_BASE_URL="http://127.0.0.1:9/v1", WT_FAULT="drop_tables", WT_INJECT_PORT=str(free_port())
    )
    done = subprocess.run(
        [sys.executable, "-m", "reference_agent"],
        check=False,
        cwd=RUNTIME_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "refusing to start" in done.stderr
    assert "hide_intermediate_tool_calls" in done.stderr  # the known faults are listed


def test_the_entry_point_serves_contract_c(stack: Stack) -> None:
    port = free_port()
    env = entrypoint_env(
        WT_MODEL_BASE_URL=f"{stack.gateway_url}/v1",
        WT_MCP_SERVERS=json.dumps(stack.servers()),
        WT_INJECT_PORT=str(port),
    )
    process = subprocess.Popen([sys.executable, "-m", "reference_agent"], cwd=RUNTIME_DIR, env=env)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=20) as client:
            _wait_healthy(client, process)
            stack.script(calls(("lookup_order", {"order_id": "A-1042"})), say("done"))
            body = inject(client, "s1", "Look up A-1042").json()
        assert body["tool_calls"] == [{"name": "lookup_order", "arguments": {"order_id": "A-1042"}}]
        assert stack.mcp_calls() == [("lookup_order", {"order_id": "A-1042"})]
    finally:
        process.terminate()
        process.wait(timeout=20)


def _wait_healthy(client: httpx.Client, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert process.poll() is None, "the runtime exited before it became healthy"
        try:
            if client.get("/wt/health").status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError("the runtime did not answer /wt/health within 30 s")
