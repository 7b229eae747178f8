"""The model gateway served for real on 127.0.0.1 (uvicorn via ServerThread), over HTTP.

Script mode is exercised with httpx and, when the `openai` package is importable, with the official OpenAI
client (JSON and streaming). Live mode proxies to a second server started here on loopback: the stand-in
OpenAI-compatible upstream of tests/standin_upstream.py (no live model is reachable here), plus a small
upstream defined below whose stream waits for the client, to prove chunks pass through as they arrive.
`wt gateway serve` is started as a subprocess (on 127.0.0.1) to prove it serves until stopped, reads the
upstream key from a key file, and exits 1 with one clear message when its tape fails at shutdown.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from tests.standin_upstream import StandinUpstream
from windtunnel._core.reference import ReferenceDecision, ReferenceToolCall
from windtunnel._gateway.app import create_app
from windtunnel._gateway.client import GatewayClient
from windtunnel._gateway.live import LiveMode
from windtunnel._gateway.script import ScriptMode
from windtunnel._net.server_thread import ServerThread
from windtunnel._tapes.builder import TapeBuilder
from windtunnel._tapes.model import RecordedResponse
from windtunnel._tapes.store import load_tape, write_tape

KEY = "wt-test-upstream-key-0123456789abcdef"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "issue_refund",
            "description": "Refund an order",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
        },
    }
]
REFUND = ReferenceToolCall("issue_refund", {"order_id": "A-1042", "amount": 12.5})
GOLDEN = (
    ReferenceDecision(tool_calls=(REFUND,)),
    ReferenceDecision(content="Refunded 12.50 for order A-1042."),
)


@pytest.fixture
def script_gateway() -> Iterator[tuple[str, GatewayClient]]:
    with (
        ServerThread(create_app(ScriptMode(), models=["wt-model"])) as server,
        GatewayClient(server.url) as admin,
    ):
        yield server.url, admin


def gateway_log(url: str) -> list[dict[str, Any]]:
    with GatewayClient(url) as admin:
        return admin.log()


def sse_chunks(text: str) -> list[dict[str, Any]]:
    """Parse an SSE body strictly: every event a `data:` line, the last one [DONE]."""
    events = text.split("\n\n")
    assert events[-1] == "", "the body ends with a blank line"
    assert events[-2] == "data: [DONE]"
    assert all(event.startswith("data: ") for event in events[:-1])
    return [json.loads(event.removeprefix("data: ")) for event in events[:-2]]


def agent_turn(base: str, session: str, *, stream: bool) -> list[dict[str, Any]]:
    """What an agent loop does: call the model, run the tool call it asks for, feed the result back."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Refund order A-1042, it arrived broken."}]
    replies = []
    with httpx.Client(base_url=base, headers={"X-WT-Session": session}) as http:
        for _ in range(2):
            body: dict[str, Any] = {
                "model": "wt-model",
                "messages": messages,
                "tools": TOOLS,
                "temperature": 0,
            }
            if stream:
                body |= {"stream": True, "stream_options": {"include_usage": True}}
            response = http.post("/v1/chat/completions", json=body)
            assert response.status_code == 200, response.text
            message = (
                assemble(sse_chunks(response.text)) if stream else response.json()["choices"][0]["message"]
            )
            replies.append(message)
            messages.append(message)
            for call in message.get("tool_calls") or []:
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": '{"refunded": true}'})
    return replies


def assemble(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    content, calls = "", dict[int, dict[str, Any]]()
    for chunk in chunks:
        for choice in chunk["choices"]:
            delta = choice["delta"]
            content += delta.get("content") or ""
            for piece in delta.get("tool_calls") or []:
                call = calls.setdefault(
                    piece["index"], {"type": "function", "function": {"name": "", "arguments": ""}}
                )
                call["id"] = piece.get("id") or call.get("id")
                call["function"]["name"] += piece.get("function", {}).get("name") or ""
                call["function"]["arguments"] += piece.get("function", {}).get("arguments") or ""
    message: dict[str, Any] = {"role": "assistant", "content": content or None}
    if calls:
        message["tool_calls"] = [calls[index] for index in sorted(calls)]
    return message


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_an_agent_loop_through_script_mode(script_gateway: tuple[str, GatewayClient], stream: bool) -> None:
    base, admin = script_gateway
    admin.install_script("refund-golden", GOLDEN, session="s-1")
    first, final = agent_turn(base, "s-1", stream=stream)
    [call] = first["tool_calls"]
    assert call["function"]["name"] == "issue_refund"
    assert json.loads(call["function"]["arguments"]) == {"order_id": "A-1042", "amount": 12.5}
    assert final["content"] == "Refunded 12.50 for order A-1042."
    entries = admin.log()
    assert [e["case"] for e in entries] == ["refund-golden", "refund-golden"]
    # the second prompt, as the gateway saw it, carries the tool result under the id the gateway issued
    assert entries[1]["messages"][-1] == {
        "role": "tool",
        "tool_call_id": call["id"],
        "content": '{"refunded": true}',
    }
    assert all(e["stream"] is stream and e["usage"]["total_tokens"] > 0 for e in entries)
    assert all(e["usage_sent"] for e in entries)
    assert entries[0]["tools"] == TOOLS
    assert entries[0]["sampling"] == {"temperature": 0}


def test_an_exhausted_script_yields_the_error_not_an_answer(
    script_gateway: tuple[str, GatewayClient],
) -> None:
    base, admin = script_gateway
    admin.install_script("one-call", GOLDEN[1:])
    body = {"model": "wt-model", "messages": [{"role": "user", "content": "hi"}]}
    assert httpx.post(f"{base}/v1/chat/completions", json=body).status_code == 200
    for extra in ({}, {"stream": True}):
        refused = httpx.post(f"{base}/v1/chat/completions", json=body | extra)
        assert refused.status_code == 422
        assert "choices" not in refused.json()
        assert refused.json()["error"]["code"] == "script_exhausted"
    assert [e["error_code"] for e in admin.log()] == [None, "script_exhausted", "script_exhausted"]


def test_concurrent_sessions_each_get_their_own_script(script_gateway: tuple[str, GatewayClient]) -> None:
    base, admin = script_gateway
    sessions = [f"s{n}" for n in range(12)]
    for name in sessions:
        answer = ReferenceDecision(content=f"answer for {name}")
        admin.install_script(f"case-{name}", (ReferenceDecision(tool_calls=(REFUND,)), answer), session=name)

    def run(name: str) -> list[dict[str, Any]]:
        return agent_turn(base, name, stream=name.endswith(("1", "3", "5")))

    with ThreadPoolExecutor(max_workers=6) as pool:
        results = dict(zip(sessions, pool.map(run, sessions), strict=True))
    for name, (_, final) in results.items():
        assert final["content"] == f"answer for {name}"
    entries = admin.log()
    assert len(entries) == 24
    assert sorted(e["index"] for e in entries) == list(range(24))
    assert all(e["case"] == f"case-{e['session']}" for e in entries)


def test_the_official_openai_client_talks_to_script_mode(script_gateway: tuple[str, GatewayClient]) -> None:
    openai = pytest.importorskip("openai", reason="the openai package is not installed in this venv")
    base, admin = script_gateway
    admin.install_script("golden", (*GOLDEN, *GOLDEN), session="oa")
    client = openai.OpenAI(base_url=f"{base}/v1", api_key="unused", default_headers={"X-WT-Session": "oa"})
    messages: list[Any] = [{"role": "user", "content": "Refund A-1042"}]
    first = client.chat.completions.create(model="wt-model", messages=messages, tools=TOOLS, seed=3)
    call = first.choices[0].message.tool_calls[0]
    assert first.choices[0].finish_reason == "tool_calls"
    assert (call.function.name, json.loads(call.function.arguments)) == (
        "issue_refund",
        dict(REFUND.arguments),
    )
    assert first.usage is not None and first.usage.total_tokens > 0
    final = client.chat.completions.create(model="wt-model", messages=messages)
    assert final.choices[0].message.content == GOLDEN[1].content
    stream = client.chat.completions.create(
        model="wt-model", messages=messages, stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)
    pieces = [c.choices[0].delta.tool_calls[0] for c in chunks if c.choices and c.choices[0].delta.tool_calls]
    assert pieces[0].function.name == "issue_refund"
    assert json.loads("".join(p.function.arguments or "" for p in pieces)) == dict(REFUND.arguments)
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens > 0
    with client.chat.completions.stream(model="wt-model", messages=messages) as managed:
        assert managed.get_final_completion().choices[0].message.content == GOLDEN[1].content
    with pytest.raises(openai.UnprocessableEntityError) as refused:
        client.chat.completions.create(model="wt-model", messages=messages)
    assert refused.value.code == "script_exhausted"
    assert len(admin.log()) == 5, "a refusal is not retried by the client"
    assert [m.id for m in client.models.list()] == ["wt-model"]


@pytest.fixture
def standin() -> Iterator[tuple[StandinUpstream, str]]:
    upstream = StandinUpstream(api_key=KEY)
    with ServerThread(upstream.app) as server:
        yield upstream, f"{server.url}/v1"


@pytest.fixture
def live_gateway(standin: tuple[StandinUpstream, str]) -> Iterator[tuple[str, GatewayClient]]:
    mode = LiveMode(standin[1], api_key=KEY)
    with ServerThread(create_app(mode, models=["small-model"])) as server, GatewayClient(server.url) as admin:
        yield server.url, admin


def test_live_mode_proxies_json_and_logs_without_the_key(
    standin: tuple[StandinUpstream, str], live_gateway: tuple[str, GatewayClient]
) -> None:
    upstream, _ = standin
    base, admin = live_gateway
    body = {
        "model": "small-model",
        "messages": [{"role": "user", "content": "refund please"}],
        "tools": TOOLS,
    }
    reply = httpx.post(
        f"{base}/v1/chat/completions", json=body, headers={"Authorization": "Bearer client-key"}
    )
    assert reply.status_code == 200
    data = reply.json()
    assert data["model"] == "small-model-standin-0001", "the upstream's answer is passed through unchanged"
    assert data["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "issue_refund"
    [received] = upstream.received
    assert received["body"] == body
    assert received["headers"]["authorization"] == f"Bearer {KEY}", "the gateway's key, not the client's"
    [entry] = admin.log()
    assert entry["mode"] == "live"
    assert entry["usage"] == data["usage"]
    assert entry["response"] == data["choices"][0]["message"]
    assert KEY not in json.dumps(entry)
    assert "client-key" not in json.dumps(entry)


def test_live_mode_passes_streams_through(
    standin: tuple[StandinUpstream, str], live_gateway: tuple[str, GatewayClient]
) -> None:
    base, admin = live_gateway
    body = {
        "model": "small-model",
        "messages": [{"role": "user", "content": "a long enough answer to need several chunks"}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    reply = httpx.post(f"{base}/v1/chat/completions", json=body)
    assert reply.status_code == 200
    chunks = sse_chunks(reply.text)
    assert all(c["id"].startswith("chatcmpl-standin-") for c in chunks), (
        "upstream chunks, not re-derived ones"
    )
    assert chunks[-1]["usage"] == {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
    [entry] = admin.log()
    assert entry["response"]["content"] == "echo: a long enough answer to need several chunks"
    assert entry["usage"]["total_tokens"] == 10
    assert entry["stream"] is True and entry["error"] is None


def test_live_mode_passes_upstream_refusals_on(standin: tuple[StandinUpstream, str]) -> None:
    with ServerThread(create_app(LiveMode(standin[1], api_key="wrong-key-123456"), models=["m"])) as server:
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        for extra in ({}, {"stream": True}):
            reply = httpx.post(f"{server.url}/v1/chat/completions", json=body | extra)
            assert reply.status_code == 401
            assert reply.json()["error"]["code"] == "invalid_api_key"
            assert "wrong-key-123456" not in reply.text
        entries = gateway_log(server.url)
        assert [e["error_code"] for e in entries] == ["invalid_api_key", "invalid_api_key"]
        assert all("wrong-key-123456" not in json.dumps(e) for e in entries)


def test_live_mode_with_an_unreachable_upstream_is_a_502() -> None:
    with ServerThread(Starlette()) as dead:
        url = f"{dead.url}/v1"
    with ServerThread(create_app(LiveMode(url, api_key=KEY), models=["m"])) as server:
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        for extra in ({}, {"stream": True}):
            reply = httpx.post(f"{server.url}/v1/chat/completions", json=body | extra)
            assert reply.status_code == 502
            assert reply.json()["error"]["code"] == "upstream_unreachable"


class GatedUpstream:
    """Streams one chunk, then waits until the test says it has received it (or gives up), then finishes.

    With `break_off`, it ends the stream without `data: [DONE]`, as a crashed upstream does.
    """

    def __init__(self, *, break_off: bool = False) -> None:
        self.released = threading.Event()
        self.break_off = break_off
        self.app = Starlette(routes=[Route("/v1/chat/completions", self.chat, methods=["POST"])])

    async def chat(self, _request: Request) -> Response:
        return StreamingResponse(self.events(), media_type="text/event-stream")

    def chunk(self, content: str) -> bytes:
        delta = {"choices": [{"index": 0, "delta": {"content": content}, "finish_reason": None}]}
        return f"data: {json.dumps({'id': 'up-1', 'object': 'chat.completion.chunk', **delta})}\n\n".encode()

    async def events(self) -> AsyncIterator[bytes]:
        yield self.chunk("first ")
        for _ in range(300):  # up to 3 s
            if self.released.is_set():
                break
            await asyncio.sleep(0.01)
        yield self.chunk("released" if self.released.is_set() else "timed-out")
        if not self.break_off:
            yield b"data: [DONE]\n\n"


def test_live_streams_reach_the_client_as_they_arrive() -> None:
    upstream = GatedUpstream()
    with (
        ServerThread(upstream.app) as up,
        ServerThread(create_app(LiveMode(f"{up.url}/v1"), models=["m"])) as gw,
    ):
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
        with httpx.stream("POST", f"{gw.url}/v1/chat/completions", json=body, timeout=10) as response:
            lines = response.iter_lines()
            first = next(line for line in lines if line.startswith("data:"))
            assert json.loads(first[5:])["choices"][0]["delta"]["content"] == "first "
            upstream.released.set()  # only now may the upstream finish: a buffering gateway never gets here
            rest = [line for line in lines if line.startswith("data:")]
        assert json.loads(rest[0][5:])["choices"][0]["delta"]["content"] == "released"
        assert rest[-1] == "data: [DONE]"
        [entry] = gateway_log(gw.url)
        assert entry["response"]["content"] == "first released"


def test_a_live_stream_that_breaks_off_is_an_error_event_and_logged() -> None:
    upstream = GatedUpstream(break_off=True)
    upstream.released.set()
    with (
        ServerThread(upstream.app) as up,
        ServerThread(create_app(LiveMode(f"{up.url}/v1"), models=["m"])) as gw,
    ):
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
        text = httpx.post(f"{gw.url}/v1/chat/completions", json=body).text
        events = [json.loads(e.removeprefix("data: ")) for e in text.split("\n\n") if e]
        assert "data: [DONE]\n\n" not in text.split("\n\n")
        assert not text.endswith("data: [DONE]\n\n")
        assert events[-1]["error"]["code"] == "upstream_stream_broken"
        assert "without data: [DONE]" in events[-1]["error"]["message"]
        [entry] = gateway_log(gw.url)
        assert entry["error_code"] == "upstream_stream_broken"
        assert entry["response"]["content"] == "first released"


def test_wt_gateway_serve_runs_until_stopped() -> None:
    env = {**os.environ, "WT_UPSTREAM_API_KEY": ""}
    command = [
        sys.executable,
        "-m",
        "windtunnel._cli.main",
        "gateway",
        "serve",
        "--port",
        "0",
        "--model",
        "a",
        "b",
    ]
    with subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env) as process:
        try:
            assert process.stderr is not None
            line = process.stderr.readline()
            assert "model gateway (script mode, models a, b) at http://127.0.0.1:" in line, line
            url = line.split(" at ")[1].strip().removesuffix("/v1")
            with GatewayClient(url, timeout=5) as admin:
                assert admin.wait_until_healthy(timeout=10)["models"] == ["a", "b"]
                admin.install_script("c", GOLDEN[1:])
                body = {"model": "a", "messages": [{"role": "user", "content": "hi"}]}
                reply = httpx.post(f"{url}/v1/chat/completions", json=body).json()
                assert reply["choices"][0]["message"]["content"] == GOLDEN[1].content
        finally:
            process.terminate()
            process.wait(timeout=10)


@dataclass
class Served:
    """A `wt gateway serve` subprocess: its base URL while it runs; its exit code and stderr once stopped."""

    url: str
    returncode: int | None = None
    stderr: str = ""


@contextmanager
def wt_gateway(*args: str, env: dict[str, str] | None = None) -> Iterator[Served]:
    """`wt gateway serve ARGS --port 0` until the block ends, then SIGTERM, as a supervisor stops it."""
    command = [sys.executable, "-m", "windtunnel._cli.main", "gateway", "serve", *args, "--port", "0"]
    environment = {key: value for key, value in os.environ.items() if not key.startswith("WT_UPSTREAM")}
    with subprocess.Popen(
        command, stderr=subprocess.PIPE, text=True, env=environment | (env or {})
    ) as process:
        assert process.stderr is not None
        line = process.stderr.readline()
        assert " at http://127.0.0.1:" in line, line + process.stderr.read()
        served = Served(url=line.split(" at ")[1].strip().removesuffix("/v1"))
        try:
            with GatewayClient(served.url, timeout=5) as admin:
                admin.wait_until_healthy(timeout=10)
            yield served
        finally:
            process.terminate()
            served.stderr = process.stderr.read()
            served.returncode = process.wait(timeout=20)


def test_a_record_gateway_that_recorded_nothing_exits_1_with_one_clear_message(tmp_path: Path) -> None:
    tape = tmp_path / "t.jsonl"
    with wt_gateway(
        "--mode", "record", "--upstream", "http://127.0.0.1:9/v1", "--tape-out", str(tape)
    ) as served:
        pass
    assert served.returncode == 1, served.stderr
    assert served.stderr.startswith(
        "wt: TapeNotRecorded: the record run for tape 't' recorded no interaction"
    )
    assert "how to fix: check that the runtime's model base URL points at the gateway" in served.stderr
    assert "Traceback" not in served.stderr and "Application shutdown failed" not in served.stderr
    assert not tape.exists()


def test_a_strict_replay_gateway_exits_1_on_unused_interactions_and_0_when_all_were_used(
    tmp_path: Path,
) -> None:
    builder = TapeBuilder("t", upstream="http://127.0.0.1:9/v1", clock=lambda: datetime.now(UTC))
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    completion = {"id": "c", "object": "chat.completion", "model": "m", "choices": []}
    builder.add("POST", "/v1/chat/completions", body, RecordedResponse(status=200, body=completion))
    tape = tmp_path / "t.jsonl"
    write_tape(builder.build(), tape)
    with wt_gateway("--mode", "replay", "--tape", str(tape), "--strict") as unused:
        pass
    assert unused.returncode == 1, unused.stderr
    assert unused.stderr.startswith(f"wt: TapeUnused: tape {tape}: 1 of 1 interaction(s) never requested:")
    assert "Traceback" not in unused.stderr and "Application shutdown failed" not in unused.stderr
    with wt_gateway("--mode", "replay", "--tape", str(tape), "--strict") as used:
        assert httpx.post(f"{used.url}/v1/chat/completions", json=body).json() == completion
    assert (used.returncode, used.stderr) == (0, "")


def test_a_record_gateway_reads_the_upstream_key_from_a_key_file(
    standin: tuple[StandinUpstream, str], tmp_path: Path
) -> None:
    upstream, url = standin
    key_file = tmp_path / "upstream-key"
    key_file.write_text(KEY + "\n", encoding="utf-8")
    tape = tmp_path / "t.jsonl"
    args = ("--mode", "record", "--upstream", url, "--tape-out", str(tape), "--pack", "p", "--scenario", "s")
    with wt_gateway(*args, env={"WT_UPSTREAM_KEY_FILE": str(key_file)}) as served:
        body = {"model": "small-model", "messages": [{"role": "user", "content": "hi"}]}
        assert httpx.post(f"{served.url}/v1/chat/completions", json=body).status_code == 200
    assert served.returncode == 0, served.stderr
    assert upstream.received[0]["headers"]["authorization"] == f"Bearer {KEY}"
    lineage = load_tape(tape, known_secrets=[KEY]).header.lineage
    assert (lineage.pack, lineage.scenario, lineage.runtime) == ("p", "s", None)
    with wt_gateway("--mode", "live", "--upstream", url, "--upstream-key-file", str(key_file)) as live:
        assert httpx.post(f"{live.url}/v1/chat/completions", json=body).status_code == 200
    assert upstream.received[1]["headers"]["authorization"] == f"Bearer {KEY}"
