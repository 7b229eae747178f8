"""Record mode against a real local upstream: JSON and streams, the key never written, empty runs fail.

The upstream is tests/standin_upstream.py, a small Starlette OpenAI-compatible app served by ServerThread on
127.0.0.1 (no live model is reachable here); the record path is the same for any OpenAI-compatible server.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.standin_upstream import StandinUpstream
from windtunnel._chat.mode import ChatRequest, GatewayMode, ModeReply
from windtunnel._net.server_thread import ServerThread
from windtunnel._tapes.errors import TapeNotRecorded
from windtunnel._tapes.record import RecordMode
from windtunnel._tapes.replay import ReplayMode
from windtunnel._tapes.store import load_tape

KEY = "wt-test-upstream-key-0123456789"
PATH = "/v1/chat/completions"
TOOLS = [{"type": "function", "function": {"name": "lookup_order", "parameters": {"type": "object"}}}]


@pytest.fixture
def upstream() -> Iterator[tuple[StandinUpstream, str]]:
    standin = StandinUpstream(api_key=KEY)
    with ServerThread(standin.app) as server:
        yield standin, f"{server.url}/v1"


def chat(text: str, **extra: Any) -> ChatRequest:
    headers = {"user-agent": "agent/1.0", "x-request-id": "req-1", "openai-beta": "x"}
    body = {"model": "small-model", "messages": [{"role": "user", "content": text}], **extra}
    return ChatRequest(method="POST", path=PATH, body=body, headers=headers)


def record(mode: RecordMode, *requests: ChatRequest) -> list[ModeReply]:
    async def go() -> list[ModeReply]:
        replies = [await mode.complete(item) for item in requests]
        await mode.aclose()
        return replies

    return asyncio.run(go())


def test_record_mode_is_a_gateway_mode(tmp_path: Path) -> None:
    mode = RecordMode(upstream="http://127.0.0.1:9/v1", api_key=None, tape_path=tmp_path / "t.jsonl")
    assert isinstance(mode, GatewayMode)
    asyncio.run(mode.abort())


def test_json_and_stream_answers_are_recorded_and_replay_to_the_same_replies(
    upstream: tuple[StandinUpstream, str], tmp_path: Path
) -> None:
    standin, url = upstream
    path = tmp_path / "support.jsonl"
    requests = [
        chat("look up A-1042", tools=TOOLS),
        chat("stream me", stream=True, stream_options={"include_usage": True}),
        chat("look up A-1042", tools=TOOLS),
    ]
    recorded = record(RecordMode(upstream=url, api_key=KEY, tape_path=path, source_run="run-7"), *requests)
    assert [reply.status for reply in recorded] == [200, 200, 200]
    assert recorded[0].completion is not None
    assert (
        recorded[0].completion["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "lookup_order"
    )
    assert recorded[1].events is not None and recorded[1].events[-1]["usage"]["total_tokens"] == 10

    tape = load_tape(path, known_secrets=[KEY])
    assert len(standin.received) == 3
    assert [i.response.is_stream for i in tape.interactions] == [False, True, False]
    assert tape.interactions[1].response.events == [dict(e) for e in recorded[1].events]
    lineage = tape.header.lineage
    assert lineage.requested_models == ["small-model"]
    assert lineage.reported_models == ["small-model-standin-0001"]
    assert (lineage.source_run, lineage.upstream, lineage.fingerprint_version) == ("run-7", url, 1)

    replayed = ReplayMode(path, clock=lambda: tape.oldest)
    again = [asyncio.run(replayed.complete(item)) for item in requests]
    assert [(r.status, r.completion, r.events) for r in again] == [
        (r.status, r.completion, r.events) for r in recorded
    ]
    assert replayed.finish().ok


def test_the_key_reaches_the_upstream_but_never_the_tape(
    upstream: tuple[StandinUpstream, str], tmp_path: Path
) -> None:
    standin, url = upstream
    path = tmp_path / "t.jsonl"
    replies = record(RecordMode(upstream=url, api_key=KEY, tape_path=path), chat("ECHO_AUTH now"))
    assert standin.received[0]["headers"]["authorization"] == f"Bearer {KEY}"
    text = path.read_text(encoding="utf-8")
    assert KEY not in text
    assert "[REDACTED:key-in-use]" in text, "the upstream echoed the key and the recorder redacted it"
    assert replies[0].completion is not None
    assert KEY not in json.dumps(replies[0].completion)


def test_headers_are_dropped_unless_allowlisted(
    upstream: tuple[StandinUpstream, str], tmp_path: Path
) -> None:
    standin, url = upstream
    path = tmp_path / "t.jsonl"
    mode = RecordMode(
        upstream=url, api_key=KEY, tape_path=path, request_headers=["openai-beta", "authorization"]
    )
    record(mode, chat("hi"))
    interaction = load_tape(path).interactions[0]
    assert interaction.request.headers == {"openai-beta": "x"}
    assert set(interaction.response.headers) <= {"content-type", "openai-model", "openai-version"}
    forwarded = standin.received[0]["headers"]
    assert forwarded["openai-beta"] == "x"
    assert "x-request-id" not in forwarded
    assert "agent/1.0" not in forwarded.get("user-agent", "")


def test_upstream_errors_are_recorded_as_answers(tmp_path: Path) -> None:
    standin = StandinUpstream(api_key="the-right-key-123")
    with ServerThread(standin.app) as server:
        path = tmp_path / "t.jsonl"
        replies = record(RecordMode(upstream=f"{server.url}/v1", api_key=KEY, tape_path=path), chat("hi"))
    assert (replies[0].status, replies[0].error_code) == (401, "upstream_error")
    assert load_tape(path).interactions[0].response.status == 401


def test_a_record_run_that_recorded_nothing_fails_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    mode = RecordMode(upstream="http://127.0.0.1:9/v1", api_key=KEY, tape_path=path)
    with pytest.raises(TapeNotRecorded, match="recorded no interaction") as caught:
        asyncio.run(mode.aclose())
    assert "WT_MODEL_BASE_URL" in (caught.value.hint or "")
    assert not path.exists()


def test_an_unreachable_upstream_is_an_error_reply_and_is_not_recorded(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    mode = RecordMode(upstream="http://127.0.0.1:9/v1", api_key=KEY, tape_path=path)

    async def go() -> ModeReply:
        reply = await mode.complete(chat("hi"))
        await mode.abort()
        return reply

    reply = asyncio.run(go())
    assert (reply.status, reply.error_code) == (502, "upstream_unreachable")
    assert mode.interactions == []
    assert not path.exists()


def test_the_tape_is_written_atomically_and_rechecked(
    upstream: tuple[StandinUpstream, str], tmp_path: Path
) -> None:
    _, url = upstream
    path = tmp_path / "t.jsonl"
    path.write_text("an older recording\n", encoding="utf-8")
    fixed = datetime(2030, 1, 2, tzinfo=UTC)
    mode = RecordMode(upstream=url, api_key=KEY, tape_path=path, clock=lambda: fixed)
    record(mode, chat("a"), chat("b"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.jsonl"]
    tape = mode.finish()  # idempotent: returns the reloaded tape
    assert tape.path == path
    assert tape.header.recorded_at == fixed
    assert [i.recorded_at for i in tape.interactions] == [fixed, fixed]


def test_a_request_holding_the_key_replays_when_replay_redacts_the_same_key(
    upstream: tuple[StandinUpstream, str], tmp_path: Path
) -> None:
    _, url = upstream
    path = tmp_path / "t.jsonl"
    leaky = chat(f"my key is {KEY}, keep it safe")
    record(RecordMode(upstream=url, api_key=KEY, tape_path=path), leaky)
    tape = load_tape(path, known_secrets=[KEY])
    assert tape.interactions[0].request.body["messages"][0]["content"] == (
        "my key is [REDACTED:key-in-use], keep it safe"
    )
    replayed = ReplayMode(path, clock=lambda: tape.oldest, known_secrets=[KEY])
    reply = asyncio.run(replayed.complete(leaky))
    assert (reply.status, reply.error) == (200, None)
    assert (
        replayed.seen[0]["body"]["messages"][0]["content"] == "my key is [REDACTED:key-in-use], keep it safe"
    )
    blind = ReplayMode(path, clock=lambda: tape.oldest)  # a replay that does not know the key cannot match it
    assert asyncio.run(blind.complete(leaky)).error_code == "tape_mismatch"


def test_the_tape_names_the_run_it_recorded(upstream: tuple[StandinUpstream, str], tmp_path: Path) -> None:
    _, url = upstream
    path = tmp_path / "t.jsonl"
    run = {"runtime": "reference", "pack": "support_desk", "scenario": None}
    record(RecordMode(upstream=url, api_key=KEY, tape_path=path, lineage=run), chat("hi"))
    lineage = load_tape(path).header.lineage
    assert (lineage.runtime, lineage.pack, lineage.scenario, lineage.source_run) == (
        "reference",
        "support_desk",
        None,
        None,
    )
