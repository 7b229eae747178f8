"""Third-party runtimes (runtimes/openai-agents, runtimes/pydantic-ai) over Contract C, against the real stack.

Each runtime's agent loop is served in-process by windtunnel_inject's Contract C server (uvicorn on
127.0.0.1) and wired, through its WT_* settings, to the real model gateway in script mode and the
support_desk pack's MCP mocks on loopback.
Nothing here stands in for the SDKs: their own agent loops, chat-completions clients and MCP clients run.

The SDKs are not in the shared dev venv: `nox -s runtimes` runs this module once per runtime, in a venv
holding that runtime's requirements.txt plus `-e .[test]` and the library, with WT_THIRDPARTY_RUNTIME naming it; then a
missing SDK is an error, not a skip. Elsewhere a runtime whose SDK is missing is skipped (the `tests`
session leaves the module out; the conformance suite runs these runtimes in containers).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from windtunnel_inject import Settings
from windtunnel_inject import create_app as inject_app

from windtunnel._gateway.app import create_app as create_gateway
from windtunnel._gateway.client import GatewayClient
from windtunnel._gateway.script import ScriptMode
from windtunnel._mcp.loopback import LoopbackMCP, start_loopback, stop_loopback
from windtunnel._net.server_thread import ServerThread
from windtunnel._packs.loader import load_pack
from windtunnel._scenario.model import Scenario
from windtunnel._wire.registry import dialect_of

REPO = Path(__file__).resolve().parents[2]
SUPPORT_DESK = REPO / "scenarios" / "support_desk"
MODEL = "wt-test-model"
SYSTEM_PROMPT = "You are the test agent."


@dataclass(frozen=True)
class Wrapped:
    name: str  # the runtime's name (its test id)
    directory: str  # its directory under runtimes/, which holds the package and requirements.txt
    sdk: str  # the SDK's import name
    package: str  # the runtime's own package
    loop: str  # its agent loop class, in <package>.agent, which windtunnel_inject serves
    wire: str  # the gateway dialect its model calls speak (the log's `wire`)
    env: dict[str, str] = field(default_factory=dict)  # what its runtime.toml's [env] set adds


ALL_WRAPPED = (
    Wrapped("openai-agents", "openai-agents", "agents", "oa_runtime", "OpenAIAgentsLoop", "openai-responses"),
    # runtimes/openai-agents-chat: the same loop on the SDK's chat-completions model.
    Wrapped(
        "openai-agents-chat",
        "openai-agents",
        "agents",
        "oa_runtime",
        "OpenAIAgentsLoop",
        "openai-chat",
        {"WT_MODEL_WIRE": "chat"},
    ),
    Wrapped("pydantic-ai", "pydantic-ai", "pydantic_ai", "pai_runtime", "PydanticAILoop", "openai-chat"),
)
# WT_THIRDPARTY_RUNTIME is read here, at collection, on purpose: it chooses which tests exist (every runtime
# of that directory, as its requirements.txt installs the SDK they share).
REQUESTED = os.environ.get("WT_THIRDPARTY_RUNTIME", "")
WRAPPED = (
    tuple(wrapped for wrapped in ALL_WRAPPED if wrapped.directory == REQUESTED) if REQUESTED else ALL_WRAPPED
)
if REQUESTED and not WRAPPED:
    raise pytest.UsageError(
        f"WT_THIRDPARTY_RUNTIME={REQUESTED!r} names no wrapped runtime; "
        f"use one of {sorted({wrapped.directory for wrapped in ALL_WRAPPED})}"
    )

if not REQUESTED and not any(importlib.util.find_spec(wrapped.sdk) for wrapped in WRAPPED):
    pytest.skip(
        "neither the OpenAI Agents SDK nor pydantic-ai is installed; `nox -s runtimes` runs this module "
        "with each runtime's requirements.txt, and the conformance suite runs them in containers",
        allow_module_level=True,
    )


def runtime_module(wrapped: Wrapped, name: str) -> ModuleType:
    """Import <package>.<name> from runtimes/<name>: a standalone service, not part of windtunnel."""
    if REQUESTED and importlib.util.find_spec(wrapped.sdk) is None:
        pytest.fail(f"WT_THIRDPARTY_RUNTIME={REQUESTED} but its SDK ({wrapped.sdk}) is not installed here")
    pytest.importorskip(wrapped.sdk, reason=f"the {wrapped.name} runtime needs its SDK ({wrapped.sdk})")
    directory = str(REPO / "runtimes" / wrapped.directory)
    if directory not in sys.path:
        sys.path.insert(0, directory)
    return importlib.import_module(f"{wrapped.package}.{name}")


# --- the stack: the real gateway and mocks, shared by the module; a fresh runtime per test -----------------


@dataclass
class Stack:
    gateway: GatewayClient
    mocks: list[LoopbackMCP]
    start: Callable[..., httpx.Client]
    wire: str
    servers: list[dict[str, str]] = field(default_factory=list)

    def tool_calls_received(self) -> list[tuple[str, str, dict[str, Any]]]:
        calls = sorted((call for mock in self.mocks for call in mock.calls()), key=lambda call: call["at"])
        return [(call["server"], call["name"], call["arguments"]) for call in calls]


@pytest.fixture(scope="module")
def scenario() -> Scenario:
    return load_pack(str(SUPPORT_DESK)).scenario("refund_damaged_item")


@pytest.fixture(scope="module")
def gateway_url() -> Iterator[str]:
    with ServerThread(create_gateway(ScriptMode(), models=[MODEL]), name="wt-test-gateway") as server:
        yield f"{server.url}/v1"


@pytest.fixture(scope="module")
def mocks() -> Iterator[list[LoopbackMCP]]:
    handles = start_loopback(load_pack(str(SUPPORT_DESK)).plans())
    yield handles
    stop_loopback(handles)


@pytest.fixture(params=WRAPPED, ids=[wrapped.name for wrapped in WRAPPED])
def stack(request: pytest.FixtureRequest, gateway_url: str, mocks: list[LoopbackMCP]) -> Iterator[Stack]:
    wrapped: Wrapped = request.param
    loop_type = getattr(runtime_module(wrapped, "agent"), wrapped.loop)
    gateway = GatewayClient(gateway_url)
    gateway.clear_script()
    gateway.clear_log()
    for mock in mocks:
        mock.reset()
    servers = [{"name": mock.name, "url": mock.url} for mock in mocks]
    started: list[ServerThread] = []
    clients: list[httpx.Client] = []

    def start(**env: str) -> httpx.Client:
        base = {
            "WT_MODEL_BASE_URL": gateway_url,
            "WT_MODEL_NAME": MODEL,
            "WT_MCP_SERVERS": json.dumps(servers),
            "WT_SYSTEM_PROMPT": SYSTEM_PROMPT,
            **wrapped.env,
        }
        app = inject_app(loop_type(Settings.from_env({**base, **env})), name=wrapped.name)
        started.append(ServerThread(app, name=f"wt-test-{wrapped.name}").start())
        clients.append(httpx.Client(base_url=started[-1].url, timeout=30))
        return clients[-1]

    try:
        yield Stack(gateway, mocks, start, wrapped.wire, servers)
    finally:
        for client in clients:
            client.close()
        for server in reversed(started):
            server.stop()
        gateway.close()


def inject(client: httpx.Client, session: str, text: str, timeout_s: float = 20.0) -> httpx.Response:
    return client.post(
        "/wt/inject",
        json={"session_id": session, "message": {"role": "user", "content": text}, "timeout_s": timeout_s},
    )


def say(*texts: str) -> list[dict[str, Any]]:
    return [{"content": text, "tool_calls": []} for text in texts]


def conversation(entry: dict[str, Any]) -> list[tuple[str, str]]:
    """(role, text) of every message the model was sent, read in the call's own wire (system prompt first)."""
    return [(said.role, said.text) for said in dialect_of(entry).transcript(entry)]


def emitted_calls(entry: dict[str, Any]) -> list[tuple[str, Any]]:
    """(name, decoded arguments) of every tool call the logged answer carried, in its own wire."""
    answer = dialect_of(entry).answer(entry)
    return [(call.name, call.arguments) for call in (answer.calls if answer else ())]


TOKENS = {"openai-chat": ("prompt_tokens", "completion_tokens")}
"""Input and output token counts by the call's wire: chat's names; Responses and Messages say input/output."""


def served_tokens(entry: dict[str, Any]) -> tuple[int, int]:
    prompt, completion = TOKENS.get(entry["wire"], ("input_tokens", "output_tokens"))
    return entry["usage"][prompt], entry["usage"][completion]


# --- the agent loop ---------------------------------------------------------------------------------------


def test_the_golden_refund_reports_both_tool_calls_in_order_and_the_mocks_ran_them(
    stack: Stack, scenario: Scenario
) -> None:
    client = stack.start()
    golden = scenario.goldens[0]
    stack.gateway.install_script(golden.name, golden.decisions, session="s1")
    response = inject(client, "s1", str(scenario.prompt))
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) == {"content", "tool_calls", "usage"}
    assert body["content"] == golden.decisions[-1].content
    assert body["tool_calls"] == [
        {"name": "lookup_order", "arguments": {"order_id": "A-1042"}},
        {"name": "issue_refund", "arguments": {"order_id": "A-1042", "amount": 12.5, "reason": "damaged"}},
    ]
    assert stack.tool_calls_received() == [
        ("orders", "lookup_order", {"order_id": "A-1042"}),
        ("billing", "issue_refund", {"order_id": "A-1042", "amount": 12.5, "reason": "damaged"}),
    ]
    log = stack.gateway.log()
    assert [(entry["session"], entry["status"], entry["model"]) for entry in log] == [("s1", 200, MODEL)] * 3
    assert stack.gateway.scripts()["sessions"]["s1"]["remaining"] == 0
    assert {entry["wire"] for entry in log} == {stack.wire}
    offered = set(dialect_of(log[0]).offered_tools(log[0]["tools"]))
    assert offered == {"lookup_order", "issue_refund"}
    assert conversation(log[0])[:2] == [("system", SYSTEM_PROMPT), ("user", scenario.prompt)]
    # Usage: one entry per model call with the counts the gateway served, and their sum.
    prompt_key, completion_key = TOKENS.get(stack.wire, ("input_tokens", "output_tokens"))
    served = [served_tokens(entry) for entry in log]
    assert [(call[prompt_key], call[completion_key]) for call in body["usage"]["calls"]] == served
    assert body["usage"][prompt_key] == sum(prompt for prompt, _ in served)
    assert body["usage"][completion_key] == sum(completion for _, completion in served)


def test_tool_call_arguments_are_reported_as_the_model_emitted_them(stack: Stack) -> None:
    client = stack.start()
    emitted = {"reason": "damaged", "order_id": "A-1042", "amount": 12.5}  # not the schema's key order
    decisions = [
        {"content": None, "tool_calls": [{"name": "issue_refund", "arguments": emitted}]},
        *say("Done."),
    ]
    stack.gateway.install_script("raw-arguments", decisions, session="raw")
    body = inject(client, "raw", "Refund the mug on A-1042.").json()
    (reported,) = body["tool_calls"]
    ((name, served),) = emitted_calls(stack.gateway.log()[0])
    assert reported == {"name": name, "arguments": served}
    assert list(reported["arguments"]) == ["reason", "order_id", "amount"]
    assert stack.tool_calls_received() == [("billing", "issue_refund", emitted)]


def test_a_tool_error_goes_back_to_the_model_and_the_call_is_still_reported(stack: Stack) -> None:
    client = stack.start()
    decisions = [
        {"content": None, "tool_calls": [{"name": "lookup_order", "arguments": {"order_id": "Z-9"}}]},
        *say("I could not find order Z-9."),
    ]
    stack.gateway.install_script("tool-error", decisions, session="e")
    response = inject(client, "e", "Where is order Z-9?")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["tool_calls"] == [{"name": "lookup_order", "arguments": {"order_id": "Z-9"}}]
    assert body["content"] == "I could not find order Z-9."
    assert stack.tool_calls_received() == [("orders", "lookup_order", {"order_id": "Z-9"})]
    fed_back = [text for role, text in conversation(stack.gateway.log()[1]) if role == "tool"]
    assert len(fed_back) == 1
    assert "no order Z-9" in fed_back[0]


def test_an_unknown_tool_is_reported_and_the_model_hears_about_it(stack: Stack) -> None:
    client = stack.start()
    decisions = [
        {"content": None, "tool_calls": [{"name": "cancel_order", "arguments": {"order_id": "A-1042"}}]},
        *say("I cannot cancel orders."),
    ]
    stack.gateway.install_script("unknown-tool", decisions, session="u")
    response = inject(client, "u", "Cancel A-1042.")
    assert response.status_code == 200, response.text
    assert response.json()["tool_calls"] == [{"name": "cancel_order", "arguments": {"order_id": "A-1042"}}]
    assert stack.tool_calls_received() == []
    fed_back = [text for role, text in conversation(stack.gateway.log()[1]) if role == "tool"]
    assert len(fed_back) == 1
    assert "cancel_order" in fed_back[0]


# --- sessions and reset -------------------------------------------------------------------------------------


def test_a_session_remembers_its_earlier_turns(stack: Stack) -> None:
    client = stack.start()
    stack.gateway.install_script("memory", say("Noted, Ada.", "You are Ada."), session="m")
    assert inject(client, "m", "My name is Ada Lovelace.").status_code == 200
    assert inject(client, "m", "Who am I?").json()["content"] == "You are Ada."
    assert conversation(stack.gateway.log()[1]) == [
        ("system", SYSTEM_PROMPT),
        ("user", "My name is Ada Lovelace."),
        ("assistant", "Noted, Ada."),
        ("user", "Who am I?"),
    ]


def test_two_sessions_do_not_mix(stack: Stack) -> None:
    client = stack.start()
    stack.gateway.install_script("alpha", say("ok"), session="alpha")
    stack.gateway.install_script("beta", say("hello"), session="beta")
    assert inject(client, "alpha", "My favourite colour is teal.").status_code == 200
    assert inject(client, "beta", "Say hello.").json()["content"] == "hello"
    (beta,) = [entry for entry in stack.gateway.log() if entry["session"] == "beta"]
    assert conversation(beta) == [("system", SYSTEM_PROMPT), ("user", "Say hello.")]


def test_reset_wipes_every_session_before_it_answers(stack: Stack) -> None:
    client = stack.start()
    stack.gateway.install_script("before", say("Noted."), session="r")
    stack.gateway.install_script("other", say("Noted too."), session="o")
    inject(client, "r", "The canary code is wt-nonce-7f3a.")
    inject(client, "o", "Another conversation.")
    assert set(client.get("/wt/state").json()["sessions"]) == {"r", "o"}
    assert "wt-nonce-7f3a" in json.dumps(client.get("/wt/state").json())
    assert client.post("/wt/reset").status_code == 200
    assert client.get("/wt/state").json() == {"sessions": {}}
    stack.gateway.install_script("after", say("I know of no code."), session="r")
    assert inject(client, "r", "Which canary code did I give you?").status_code == 200
    after = stack.gateway.log()[-1]
    assert conversation(after) == [("system", SYSTEM_PROMPT), ("user", "Which canary code did I give you?")]
    assert "wt-nonce-7f3a" not in json.dumps(after["messages"])


# --- model options and failures -------------------------------------------------------------------------------


def test_sampling_reaches_every_model_call(stack: Stack, scenario: Scenario) -> None:
    sampling = {"temperature": 0, "top_p": 0.5, "max_tokens": 64, "tool_choice": "required"}
    client = stack.start(WT_SAMPLING=json.dumps(sampling))
    stack.gateway.install_script("sampled", scenario.goldens[0].decisions, session="t")
    assert inject(client, "t", str(scenario.prompt)).status_code == 200
    log = stack.gateway.log()
    assert len(log) == 3
    for entry in log:
        neutral = dialect_of(entry).neutral_sampling(entry["sampling"])
        assert {key: neutral.get(key) for key in sampling} == sampling


def test_an_exhausted_script_gives_502_naming_the_cause_and_leaves_no_history(
    stack: Stack, scenario: Scenario
) -> None:
    client = stack.start()
    stack.gateway.install_script("short", scenario.goldens[0].decisions[:1], session="x")
    response = inject(client, "x", str(scenario.prompt))
    assert response.status_code == 502, response.text
    error = response.json()["error"]
    assert "HTTP 422" in error
    assert "script exhausted: case 'short'" in error
    assert "(code script_exhausted)" in error
    assert stack.tool_calls_received() == [("orders", "lookup_order", {"order_id": "A-1042"})]
    assert [entry["status"] for entry in stack.gateway.log()] == [200, 422]  # the refusal is not retried
    assert not client.get("/wt/state").json()["sessions"].get("x")
    # The failed turn left nothing behind: the next turn of the session starts from scratch.
    stack.gateway.install_script("again", say("Hello again."), session="x")
    assert inject(client, "x", "Hello?").status_code == 200
    assert conversation(stack.gateway.log()[-1]) == [("system", SYSTEM_PROMPT), ("user", "Hello?")]


def test_no_script_gives_502_with_the_gateways_message(stack: Stack) -> None:
    response = inject(stack.start(), "nobody", "Hello?")
    assert response.status_code == 502
    assert "no script installed for session 'nobody'" in response.json()["error"]


def test_an_unreachable_mcp_server_gives_502_naming_it(stack: Stack) -> None:
    with ServerThread(Starlette()) as closed:
        url = f"{closed.url}/mcp"
    client = stack.start(WT_MCP_SERVERS=json.dumps([{"name": "gone", "url": url}]))
    stack.gateway.install_script("any", say("ok"), session="u")
    response = inject(client, "u", "Hello?")
    assert response.status_code == 502
    assert response.json()["error"].startswith(f"cannot connect to MCP server 'gone' at {url}: ")


@pytest.fixture
def hanging_mcp() -> Iterator[str]:
    """An MCP URL whose server never answers, until the test ends."""
    release = threading.Event()

    async def hang(_request: Request) -> Response:
        while not release.is_set():
            await anyio.sleep(0.05)
        return Response(status_code=503)

    server = ServerThread(Starlette(routes=[Route("/mcp", hang, methods=["GET", "POST", "DELETE"])])).start()
    try:
        yield f"{server.url}/mcp"
    finally:
        release.set()
        server.stop()


def test_a_turn_past_timeout_s_gives_504(stack: Stack, hanging_mcp: str) -> None:
    client = stack.start(WT_MCP_SERVERS=json.dumps([{"name": "slow", "url": hanging_mcp}]))
    started = time.monotonic()
    response = inject(client, "late", "Hello?", timeout_s=0.5)
    assert response.status_code == 504
    assert "timeout_s=0.5" in response.json()["error"]
    assert time.monotonic() - started < 5


# --- the service itself -----------------------------------------------------------------------------------------


def test_health_lists_the_tools_of_every_mcp_server(stack: Stack) -> None:
    client = stack.start()
    assert client.get("/wt/health").json() == {"status": "ok"}
    assert client.get("/wt/health", params={"tools": "1"}).json() == {
        "status": "ok",
        "tools": {"lookup_order": "orders", "issue_refund": "billing"},
    }


def test_a_request_outside_contract_c_gets_400_naming_the_field(stack: Stack) -> None:
    client = stack.start()
    response = client.post(
        "/wt/inject",
        json={"session_id": "s", "message": {"role": "user", "content": "hi"}, "timeout_s": 5, "x": 1},
    )
    assert response.status_code == 400
    assert "unknown field 'x'" in response.json()["error"]
    assert stack.gateway.log() == []


def test_a_bad_environment_is_refused_naming_the_variable(stack: Stack) -> None:
    with pytest.raises(ValueError, match="WT_SAMPLING has keys this runtime cannot honour: \\['seed'\\]"):
        stack.start(WT_SAMPLING=json.dumps({"seed": 1}))
