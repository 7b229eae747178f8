"""Tapes as gateway modes over HTTP: record through the gateway, replay through it, refusals as OpenAI errors.

Real servers on 127.0.0.1: the gateway app (windtunnel._gateway.app) and the stand-in OpenAI-compatible
upstream (tests/standin_upstream.py), each in a ServerThread.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx

from tests.standin_upstream import StandinUpstream
from windtunnel._gateway.app import create_app
from windtunnel._net.server_thread import ServerThread
from windtunnel._tapes.record import RecordMode
from windtunnel._tapes.replay import ReplayMode
from windtunnel._tapes.store import load_tape

KEY = "gateway-test-key-123456"
TOOLS = [{"type": "function", "function": {"name": "lookup_order", "parameters": {"type": "object"}}}]
BODIES: list[dict[str, Any]] = [
    {"model": "small", "messages": [{"role": "user", "content": "find A-1"}], "tools": TOOLS},
    {"model": "small", "messages": [{"role": "user", "content": "stream it"}], "stream": True},
    {"model": "small", "messages": [{"role": "user", "content": "find A-1"}], "tools": TOOLS},
]


def post_all(url: str, bodies: list[dict[str, Any]]) -> list[tuple[int, Any]]:
    """Each answer as (status, JSON body or list of SSE data objects)."""
    answers: list[tuple[int, Any]] = []
    with httpx.Client(base_url=url, timeout=30) as client:
        for body in bodies:
            reply = client.post(
                "/v1/chat/completions", json=body, headers={"authorization": "Bearer runtime"}
            )
            if reply.headers.get("content-type", "").startswith("text/event-stream"):
                data = [line[6:] for line in reply.text.splitlines() if line.startswith("data: ")]
                answers.append((reply.status_code, [json.loads(d) for d in data if d != "[DONE]"]))
            else:
                answers.append((reply.status_code, reply.json()))
    return answers


def test_record_then_replay_through_the_gateway_gives_the_runtime_the_same_answers(tmp_path: Path) -> None:
    standin = StandinUpstream(api_key=KEY)
    path = tmp_path / "tapes" / "support.jsonl"
    with ServerThread(standin.app) as upstream:
        record = RecordMode(upstream=f"{upstream.url}/v1", api_key=KEY, tape_path=path)
        with ServerThread(create_app(record, models=["small"])) as gateway:
            recorded = post_all(gateway.url, BODIES)
    # Stopping the gateway closed the mode, which wrote the tape.
    tape = load_tape(path, known_secrets=[KEY])
    assert len(tape.interactions) == 3
    assert all(received["headers"]["authorization"] == f"Bearer {KEY}" for received in standin.received)
    assert KEY not in path.read_text(encoding="utf-8")

    replay = ReplayMode(path, strict=True, clock=lambda: tape.oldest + timedelta(hours=1))
    with ServerThread(create_app(replay, models=["small"])) as gateway:
        replayed = post_all(gateway.url, BODIES)
    assert [status for status, _ in replayed] == [200, 200, 200]
    assert replayed == recorded
    assert replay.unused().ok


def test_a_request_the_tape_cannot_answer_is_an_openai_error_naming_the_cause(tmp_path: Path) -> None:
    standin = StandinUpstream()
    path = tmp_path / "t.jsonl"
    with ServerThread(standin.app) as upstream:
        record = RecordMode(upstream=f"{upstream.url}/v1", api_key=None, tape_path=path)
        with ServerThread(create_app(record, models=["small"])) as gateway:
            post_all(gateway.url, BODIES[:1])
    tape = load_tape(path)
    replay = ReplayMode(path, clock=lambda: tape.oldest)
    changed = {**BODIES[0], "temperature": 0.9}
    with ServerThread(create_app(replay, models=["small"])) as gateway:
        (mismatch,) = post_all(gateway.url, [changed])
        post_all(gateway.url, BODIES[:1])
        (exhausted,) = post_all(gateway.url, BODIES[:1])
    status, body = mismatch
    assert status == 400
    assert body["error"]["code"] == "tape_mismatch"
    assert "/body/temperature: recorded (absent), requested 0.9" in body["error"]["message"]
    assert "wt tapes rerecord --tape" in body["error"]["message"]
    assert exhausted[1]["error"]["code"] == "tape_exhausted"
    assert "recorded 1, requested 2" in exhausted[1]["error"]["message"]
