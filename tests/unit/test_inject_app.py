"""windtunnel_inject's Contract C server over real HTTP (uvicorn on 127.0.0.1) around small real agent loops."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import anyio
import httpx
import pytest
from windtunnel_inject import Transcript, Turn, TurnFailed, create_app

from windtunnel._net.server_thread import ServerThread

OK = {"session_id": "s1", "message": {"role": "user", "content": "hello"}, "timeout_s": 5}


class EchoLoop:
    """Echoes each turn, calling a tool named by the text ("call:NAME"); fails on request ("fail:...")."""

    def __init__(self) -> None:
        self.sessions: dict[str, list[str]] = {}
        self.resets = 0
        self.cancelled = 0

    async def turn(self, session_id: str, text: str) -> Turn:
        if text.startswith("sleep:"):
            try:
                await anyio.sleep(float(text.removeprefix("sleep:")))
            except anyio.get_cancelled_exc_class():
                self.cancelled += 1
                raise
        if text.startswith("fail:"):
            raise TurnFailed(f"the model gateway refused: {text.removeprefix('fail:')}")
        if text == "bug":
            raise KeyError("oops")
        self.sessions.setdefault(session_id, []).append(text)
        transcript = Transcript()
        transcript.model_call({"prompt_tokens": 5})
        if text.startswith("call:"):
            transcript.tool_call(text.removeprefix("call:"), '{"z": 1, "a": 2}')
            transcript.model_call({"prompt_tokens": 7})
        return transcript.turn(f"{session_id} said {text}")

    async def reset(self) -> None:
        if self.sessions.get("s1") == ["break reset"]:
            raise OSError("the store is read-only")
        self.sessions.clear()
        self.resets += 1


class FullLoop(EchoLoop):
    """EchoLoop with every optional ability: tools, state, and resources held for the server's lifetime."""

    def __init__(self, tools_fail: bool = False) -> None:
        super().__init__()
        self.tools_fail = tools_fail
        self.entered = self.exited = 0

    async def list_tools(self) -> Mapping[str, str]:
        if self.tools_fail:
            raise TurnFailed("cannot connect to MCP server 'orders' at http://orders:8000/mcp")
        return {"lookup_order": "orders"}

    async def snapshot(self) -> Mapping[str, Any]:
        return {"sessions": self.sessions}

    async def __aenter__(self) -> FullLoop:
        self.entered += 1
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.exited += 1


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[ServerThread] = []
    clients: list[httpx.Client] = []

    def start(loop: Any) -> httpx.Client:
        servers.append(ServerThread(create_app(loop, name="echo")).start())
        clients.append(httpx.Client(base_url=servers[-1].url, timeout=10))
        return clients[-1]

    yield start
    for client in clients:
        client.close()
    for server in servers:
        server.stop()


def inject(client: httpx.Client, text: str, session: str = "s1", timeout_s: float = 5) -> httpx.Response:
    message = {"role": "user", "content": text}
    return client.post("/wt/inject", json={"session_id": session, "message": message, "timeout_s": timeout_s})


def test_a_turn_answers_the_envelope_with_the_ordered_calls_and_the_usage(serve: Any) -> None:
    loop = EchoLoop()
    client = serve(loop)
    plain = inject(client, "hello")
    assert plain.status_code == 200
    assert plain.json() == {"content": "s1 said hello", "tool_calls": [], "usage": plain.json()["usage"]}
    body = inject(client, "call:lookup_order", session="s2").json()
    assert body["tool_calls"] == [{"name": "lookup_order", "arguments": {"z": 1, "a": 2}}]
    assert list(body["tool_calls"][0]["arguments"]) == ["z", "a"]  # the key order the model emitted
    assert body["usage"] == {"prompt_tokens": 12, "calls": [{"prompt_tokens": 5}, {"prompt_tokens": 7}]}
    assert loop.sessions == {"s1": ["hello"], "s2": ["call:lookup_order"]}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"{not json", "the body is not JSON"),
        (b"[]", "the body must be an object, got list"),
        (json.dumps({**OK, "x": 1}).encode(), "unknown field 'x'; Contract C v1 sends only"),
        (json.dumps({**OK, "session_id": ""}).encode(), "session_id must be a non-empty string"),
        (json.dumps({k: v for k, v in OK.items() if k != "session_id"}).encode(), "session_id must be"),
        (json.dumps({**OK, "message": "hi"}).encode(), 'message must be {"role": "user", "content": str}'),
        (json.dumps({**OK, "message": {"role": "system", "content": "x"}}).encode(), "message must be"),
        (json.dumps({**OK, "message": {"role": "user", "content": 3}}).encode(), "message must be"),
        (json.dumps({**OK, "timeout_s": True}).encode(), "timeout_s must be a positive number of seconds"),
        (json.dumps({**OK, "timeout_s": 0}).encode(), "timeout_s must be a positive number"),
        (json.dumps({**OK, "timeout_s": "5"}).encode(), "timeout_s must be a positive number"),
        (
            b'{"session_id": "s", "message": {"role": "user", "content": ""}, "timeout_s": Infinity}',
            "timeout_s",
        ),
    ],
)
def test_a_request_outside_contract_c_gets_400_naming_the_field_and_runs_no_turn(
    serve: Any, body: bytes, message: str
) -> None:
    loop = EchoLoop()
    response = serve(loop).post("/wt/inject", content=body)
    assert response.status_code == 400
    assert message in response.json()["error"]
    assert loop.sessions == {}


def test_a_turn_past_timeout_s_answers_504_and_the_loop_is_cancelled(serve: Any) -> None:
    loop = EchoLoop()
    client = serve(loop)
    response = inject(client, "sleep:30", timeout_s=0.2)
    assert response.status_code == 504
    assert response.json() == {"error": "the turn for session 's1' exceeded timeout_s=0.2"}
    assert loop.cancelled == 1
    assert inject(client, "sleep:0.01", timeout_s=5).status_code == 200  # the server goes on serving


def test_a_failed_turn_answers_502_with_its_reason_and_a_bug_500_naming_the_runtime(serve: Any) -> None:
    client = serve(EchoLoop())
    failed = inject(client, "fail:no script installed")
    assert (failed.status_code, failed.json()) == (
        502,
        {"error": "the model gateway refused: no script installed"},
    )
    bug = inject(client, "bug")
    assert (bug.status_code, bug.json()) == (500, {"error": "the echo runtime failed: KeyError: 'oops'"})


def test_reset_answers_200_after_the_loop_wiped_and_500_naming_why_when_it_could_not(serve: Any) -> None:
    loop = EchoLoop()
    client = serve(loop)
    inject(client, "hello")
    response = client.post("/wt/reset")
    assert (response.status_code, response.json(), loop.sessions, loop.resets) == (
        200,
        {"reset": True},
        {},
        1,
    )
    inject(client, "break reset")
    broken = client.post("/wt/reset")
    assert broken.status_code == 500
    assert broken.json() == {"error": "the echo runtime could not reset: OSError: the store is read-only"}


def test_the_optional_routes_are_absent_when_the_loop_cannot_serve_them(serve: Any) -> None:
    client = serve(EchoLoop())
    assert client.get("/wt/health").json() == {"status": "ok"}
    deep = client.get("/wt/health", params={"tools": "1"})
    assert deep.status_code == 404 and "cannot list its tools" in deep.json()["error"]
    assert client.get("/wt/state").status_code == 404
    assert client.get("/wt/inject").status_code == 405


def test_the_optional_routes_are_served_when_the_loop_has_the_abilities(serve: Any) -> None:
    client = serve(FullLoop())
    inject(client, "hello")
    assert client.get("/wt/health", params={"tools": "1"}).json() == {
        "status": "ok",
        "tools": {"lookup_order": "orders"},
    }
    assert client.get("/wt/state").json() == {"sessions": {"s1": ["hello"]}}
    client.post("/wt/reset")
    assert client.get("/wt/state").json() == {"sessions": {}}


def test_unreachable_tools_answer_503_with_the_reason(serve: Any) -> None:
    response = serve(FullLoop(tools_fail=True)).get("/wt/health", params={"tools": "true"})
    assert response.status_code == 503
    assert response.json() == {
        "status": "error",
        "error": "cannot connect to MCP server 'orders' at http://orders:8000/mcp",
    }


def test_a_loop_that_is_an_async_context_manager_is_entered_before_serving_and_left_at_shutdown() -> None:
    loop = FullLoop()
    with ServerThread(create_app(loop, name="echo")) as server:
        assert (loop.entered, loop.exited) == (1, 0)
        assert httpx.post(f"{server.url}/wt/reset").status_code == 200
    assert (loop.entered, loop.exited) == (1, 1)


def test_an_object_that_is_not_a_loop_is_refused_naming_what_it_lacks() -> None:
    class HalfLoop:
        async def turn(self, session_id: str, text: str) -> Turn:
            return Turn("")

    with pytest.raises(TypeError, match="HalfLoop is not an agent loop: it has no reset\\(\\)"):
        create_app(HalfLoop(), name="half")  # type: ignore[arg-type]
