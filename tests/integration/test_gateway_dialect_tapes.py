"""Tapes and live mode in every dialect, through the stand-in upstream, driven by the official SDKs.

A gateway in record mode proxies the anthropic SDK's Messages calls and the openai SDK's Responses calls
(plain and streamed) to the stand-in upstream on 127.0.0.1 and writes a tape; a replay gateway answers the
same calls from it with the same answers, and a request with one field changed is refused naming it.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from tests.standin_upstream import StandinUpstream
from windtunnel._gateway.app import create_app
from windtunnel._gateway.client import GatewayClient
from windtunnel._gateway.live import LiveMode
from windtunnel._net.server_thread import ServerThread
from windtunnel._tapes.fingerprint import VOLATILE_RULES
from windtunnel._tapes.record import RecordMode
from windtunnel._tapes.replay import ReplayMode
from windtunnel._tapes.store import load_tape

KEY = "wt-test-upstream-key-0123456789abcdef"
SCHEMA = {"type": "object", "properties": {"echo": {"type": "string"}}}


def claude_calls(url: str, *, system: str = "Sei knapp.") -> list[Any]:
    with anthropic.Anthropic(base_url=url, api_key="wt-gateway", max_retries=0) as client:
        tools: Any = [{"name": "mcp__notes__lookup", "input_schema": SCHEMA}]
        # Claude Code marks prompt-cache breakpoints; the volatile rules keep them out of the fingerprint.
        cached: Any = [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]
        ask: dict[str, Any] = {"model": "wt-model", "max_tokens": 64, "system": cached, "tools": tools}
        first = client.messages.create(messages=[{"role": "user", "content": "Notiz café ☕"}], **ask)
        with client.messages.stream(
            messages=[{"role": "user", "content": "nur Text"}], **{**ask, "tools": []}
        ) as s:
            second = s.get_final_message()
    return [first.model_dump(), second.model_dump()]


def responses_calls(url: str, *, instructions: str = "Sei knapp.") -> list[Any]:
    with openai.OpenAI(base_url=f"{url}/v1", api_key="wt-gateway", max_retries=0) as client:
        tools: Any = [
            {
                "type": "namespace",
                "name": "mcp__notes",
                "tools": [{"type": "function", "name": "lookup", "parameters": SCHEMA}],
            }
        ]
        ask: dict[str, Any] = {"model": "wt-model", "instructions": instructions}
        first = client.responses.create(input="Notiz café ☕", tools=tools, **ask)
        with client.responses.stream(input="nur Text", **ask) as s:
            second = s.get_final_response()
    return [first.model_dump(), second.model_dump()]


@pytest.mark.parametrize(
    ("calls", "field", "changed"),
    [
        (claude_calls, "/body/system", {"system": "Sei ausführlich."}),
        (responses_calls, "/body/instructions", {"instructions": "Sei ausführlich."}),
    ],
    ids=["anthropic-messages", "openai-responses"],
)
def test_record_then_replay_in_each_dialect(
    tmp_path: Path, calls: Any, field: str, changed: dict[str, str]
) -> None:
    standin = StandinUpstream(api_key=KEY)
    path = tmp_path / "dialect.jsonl"
    with ServerThread(standin.app) as upstream:
        record = RecordMode(upstream=f"{upstream.url}/v1", api_key=KEY, tape_path=path)
        with ServerThread(create_app(record, models=["wt-model"])) as gateway:
            recorded = calls(gateway.url)
    tape = load_tape(path, known_secrets=[KEY])
    assert len(tape.interactions) == 2 and tape.header.volatile_rules == VOLATILE_RULES
    assert KEY not in path.read_text(encoding="utf-8")
    assert tape.interactions[1].response.events, "the streamed call is kept as its native events"
    sent = standin.received[0]["headers"]
    assert KEY in (sent.get("x-api-key", "") + sent.get("authorization", ""))
    first = tape.interactions[0].request.body
    assert "cache_control" not in str(first), "volatile markers are normalised before hashing"

    replay = ReplayMode(path, strict=True, clock=lambda: tape.oldest + timedelta(hours=1))
    with ServerThread(create_app(replay, models=["wt-model"])) as gateway:
        assert calls(gateway.url) == recorded
        with pytest.raises((anthropic.BadRequestError, openai.BadRequestError)) as refused:
            calls(gateway.url, **changed)
    error = refused.value
    assert isinstance(error, anthropic.BadRequestError | openai.BadRequestError) and error.status_code == 400
    assert field in error.message, "the replay names the one field that changed"


@pytest.mark.parametrize(
    "calls", [claude_calls, responses_calls], ids=["anthropic-messages", "openai-responses"]
)
def test_live_mode_proxies_each_dialect_streams_included(calls: Any) -> None:
    """A stream without [DONE] ends when the upstream closes it; the log keeps the native answer."""
    standin = StandinUpstream(api_key=KEY)
    with ServerThread(standin.app) as upstream:
        live = LiveMode(f"{upstream.url}/v1", api_key=KEY)
        with (
            ServerThread(create_app(live, models=["wt-model"])) as gateway,
            GatewayClient(gateway.url) as admin,
        ):
            answers = calls(gateway.url)
            entries = admin.log()
    assert [e["status"] for e in entries] == [200, 200] and [e["error"] for e in entries] == [None, None]
    assert [e["stream"] for e in entries] == [False, True]
    assert entries[1]["usage_sent"] and entries[1]["response"]["model"] == "wt-model-standin-0001"
    assert answers[1]["model"] == "wt-model-standin-0001"
