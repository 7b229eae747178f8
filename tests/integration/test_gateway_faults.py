# ruff: noqa: F811 - the tests take the imported `gateway` fixture as their argument
"""Scripted model faults in every dialect, over real HTTP (uvicorn on 127.0.0.1) and the official SDKs.

Each fault is served natively (the dialect's error envelope, its own stream events broken off), logged with
its kind, and, unlike a refusal, without `x-should-retry: false`: the SDKs' own retry (and `retry-after`) runs.
"""

from __future__ import annotations

import json
import time
from typing import Any

import anthropic
import httpx
import openai
import pytest

from tests.integration.test_gateway_dialects import gateway  # noqa: F401 - its fixture, shared
from windtunnel._core.faults import ModelFault
from windtunnel._core.reference import ReferenceDecision
from windtunnel._gateway.client import GatewayClient

OK = ReferenceDecision(content="recovered")
ROUTES: dict[str, tuple[str, dict[str, Any]]] = {
    "openai-chat": ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}]}),
    "anthropic-messages": (
        "/v1/messages",
        {"max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]},
    ),
    "openai-responses": ("/v1/responses", {"input": "hi"}),
}
TERMINAL = {
    "openai-chat": b"[DONE]",
    "anthropic-messages": b"message_stop",
    "openai-responses": b"response.completed",
}


def post(base: str, wire: str, *, stream: bool = False, timeout: float = 10.0) -> httpx.Response:
    path, body = ROUTES[wire]
    with httpx.Client(timeout=timeout) as client:
        return client.post(f"{base}{path}", json={"model": "wt-model", "stream": stream, **body})


def fault(kind: str, **fields: Any) -> ReferenceDecision:
    return ReferenceDecision(content="a long enough answer to break", fault=ModelFault(kind=kind, **fields))  # type: ignore[arg-type]


@pytest.mark.parametrize("wire", sorted(ROUTES))
@pytest.mark.parametrize(
    ("kind", "status"), [("rate_limited", 429), ("server_error", 500), ("unavailable", 503)]
)
def test_a_status_fault_is_the_dialects_error_without_the_no_retry_header(
    gateway: tuple[str, GatewayClient], wire: str, kind: str, status: int
) -> None:
    base, admin = gateway
    admin.install_script("faults", [fault(kind, retry_after=2), OK])
    answer = post(base, wire)
    assert answer.status_code == status
    assert "x-should-retry" not in answer.headers, "the runtime's retry policy is under test: no veto"
    assert answer.headers["retry-after"] == "2"
    error = answer.json()["error"]
    assert "scripted fault" in error["message"]
    if wire == "anthropic-messages":
        assert answer.json()["type"] == "error" and error["type"].endswith("_error")
    (entry,) = admin.log()
    assert (entry["status"], entry["fault"]["kind"], entry["wire"]) == (status, kind, wire)
    assert entry["error_code"] and entry["response"] is None
    assert post(base, wire).json() != answer.json(), "the fault consumed its decision; the next one answers"


@pytest.mark.parametrize("wire", sorted(ROUTES))
def test_a_cut_stream_ends_without_its_terminal_event(gateway: tuple[str, GatewayClient], wire: str) -> None:
    base, admin = gateway
    admin.install_script("faults", [fault("cut", after_events=2)])
    answer = post(base, wire, stream=True)
    assert answer.status_code == 200
    assert answer.content.count(b"data:") == 2
    assert TERMINAL[wire] not in answer.content
    (entry,) = admin.log()
    assert entry["error_code"] == "fault_cut" and entry["fault"]["after_events"] == 2


@pytest.mark.parametrize("wire", sorted(ROUTES))
def test_a_stalled_stream_trips_the_clients_read_timeout(
    gateway: tuple[str, GatewayClient], wire: str
) -> None:
    base, admin = gateway
    admin.install_script("faults", [fault("stall", after_events=1, seconds=5)])
    started = time.monotonic()
    with pytest.raises(httpx.ReadTimeout):
        post(base, wire, stream=True, timeout=0.5)
    assert time.monotonic() - started < 3
    (entry,) = admin.log()
    assert entry["error_code"] == "fault_stall"


@pytest.mark.parametrize("wire", sorted(ROUTES))
@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_malformed_json_is_served_as_scripted(
    gateway: tuple[str, GatewayClient], wire: str, stream: bool
) -> None:
    base, admin = gateway
    admin.install_script("faults", [fault("malformed", after_events=1)])
    answer = post(base, wire, stream=stream)
    assert answer.status_code == 200
    payload = answer.content if not stream else answer.content.rsplit(b"data: ", 1)[1]
    with pytest.raises(json.JSONDecodeError):
        json.loads(payload)
    assert admin.log()[0]["error_code"] == "fault_malformed"


@pytest.mark.parametrize("wire", sorted(ROUTES))
def test_an_unstreamed_cut_is_half_an_answer(gateway: tuple[str, GatewayClient], wire: str) -> None:
    base, admin = gateway
    admin.install_script("faults", [fault("cut")])
    with pytest.raises(json.JSONDecodeError):
        post(base, wire).json()


@pytest.mark.parametrize("wire", sorted(ROUTES))
def test_a_slow_answer_arrives_whole_after_its_delay(gateway: tuple[str, GatewayClient], wire: str) -> None:
    base, admin = gateway
    admin.install_script("faults", [fault("slow", seconds=0.6)])
    started = time.monotonic()
    answer = post(base, wire)
    assert time.monotonic() - started >= 0.6
    assert "a long enough answer" in answer.text and answer.status_code == 200
    (entry,) = admin.log()
    assert entry["fault"]["kind"] == "slow" and entry["error"] is None and entry["latency_ms"] >= 590
    admin.install_script("faults", [fault("slow", seconds=2)])
    with pytest.raises(httpx.ReadTimeout):
        post(base, wire, timeout=0.5)


def test_the_sdks_retry_a_429_after_its_retry_after(gateway: tuple[str, GatewayClient]) -> None:
    """The SDKs' own policy runs against a scripted 429: one retry, no sooner than retry-after."""
    base, admin = gateway
    chat = openai.OpenAI(base_url=f"{base}/v1", api_key="wt", max_retries=1)
    claude = anthropic.Anthropic(base_url=base, api_key="wt", max_retries=1)
    try:
        admin.install_script("faults", [fault("rate_limited", retry_after=0.5), OK] * 3)
        said = chat.chat.completions.create(model="wt-model", messages=[{"role": "user", "content": "hi"}])
        assert said.choices[0].message.content == "recovered"
        reply = chat.responses.create(model="wt-model", input="hi")
        assert reply.output_text == "recovered"
        message = claude.messages.create(
            model="wt-model", max_tokens=64, messages=[{"role": "user", "content": "hi"}]
        )
        assert message.content[0].type == "text" and message.content[0].text == "recovered"
    finally:
        chat.close()
        claude.close()
    entries = admin.log()
    assert [e["status"] for e in entries] == [429, 200] * 3
    for failed, retried in zip(entries[::2], entries[1::2], strict=True):
        assert retried["at"] - failed["at"] >= 0.45, "the retry waited for retry-after"
