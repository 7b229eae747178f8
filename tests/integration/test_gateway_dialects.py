"""Every dialect of the gateway, driven by the official SDKs over real HTTP on 127.0.0.1 (uvicorn).

The `anthropic` SDK speaks Anthropic Messages to the root URL (it appends /v1/messages itself), the `openai`
SDK speaks Responses to /v1: a tool-call turn plain and streamed, tool arguments holding non-ASCII text,
usage, refusals in each dialect's own envelope (logged, no decision consumed, not retried), side traffic
that never consumes a decision, count_tokens, HEAD / and the refused WebSocket upgrade.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest

from windtunnel._chat.mode import ChatRequest, ModeReply
from windtunnel._core.reference import ReferenceDecision, ReferenceToolCall
from windtunnel._gateway.app import create_app
from windtunnel._gateway.client import GatewayClient
from windtunnel._gateway.script import ScriptMode
from windtunnel._net.server_thread import ServerThread

ARGS = {"key": "café ☕ Zürich — 東京", "note": "naïve “quotes” " * 3}
LOOKUP = ReferenceToolCall("lookup", ARGS)
TURN = (ReferenceDecision(tool_calls=(LOOKUP,)), ReferenceDecision(content="Gefunden: café ☕ in 東京."))
SCHEMA = {"type": "object", "properties": {"key": {"type": "string"}, "note": {"type": "string"}}}
CLAUDE_TOOLS: list[Any] = [
    {"name": "mcp__notes__lookup", "description": "Read a note", "input_schema": SCHEMA},
    {"name": "mcp__notes__store", "description": "Write a note", "input_schema": SCHEMA},
]
CODEX_TOOLS: list[Any] = [
    {
        "type": "namespace",
        "name": "mcp__notes",
        "description": "notes server",
        "tools": [{"type": "function", "name": "lookup", "parameters": SCHEMA, "strict": False}],
    }
]
AGENTS_TOOLS: list[Any] = [{"type": "function", "name": "lookup", "parameters": SCHEMA, "strict": False}]


@pytest.fixture
def gateway() -> Iterator[tuple[str, GatewayClient]]:
    with (
        ServerThread(create_app(ScriptMode(), models=["wt-model"])) as server,
        GatewayClient(server.url) as admin,
    ):
        yield server.url, admin


_opened: list[anthropic.Anthropic | openai.OpenAI] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while _opened:
        _opened.pop().close()


def claude(base: str, session: str, **options: Any) -> anthropic.Anthropic:
    """The Anthropic SDK at the gateway's root URL: it appends /v1/messages itself."""
    client = anthropic.Anthropic(
        base_url=base, api_key="wt-gateway", default_headers={"X-WT-Session": session}, **options
    )
    _opened.append(client)
    return client


def responses(base: str, session: str, **options: Any) -> openai.OpenAI:
    client = openai.OpenAI(
        base_url=f"{base}/v1", api_key="wt-gateway", default_headers={"X-WT-Session": session}, **options
    )
    _opened.append(client)
    return client


def served(admin: GatewayClient, session: str) -> int:
    return int(admin.scripts()["sessions"][session]["served"])


# -- Anthropic Messages ------------------------------------------------------------------------------------
def claude_turn(client: anthropic.Anthropic, *, stream: bool) -> tuple[Any, Any]:
    messages: list[Any] = [{"role": "user", "content": "Lies die Notiz café."}]
    ask: dict[str, Any] = {
        "model": "wt-model",
        "max_tokens": 256,
        "system": "Du bist ein Agent.",
        "tools": CLAUDE_TOOLS,
    }
    if stream:
        with client.beta.messages.stream(messages=messages, betas=["claude-code-20250219"], **ask) as events:
            first = events.get_final_message()
    else:
        first = client.messages.create(messages=messages, **ask)
    use = first.content[0]
    assert use.type == "tool_use"
    messages += [
        {"role": "assistant", "content": [block.model_dump(exclude_none=True) for block in first.content]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "note: ☕"}]},
    ]
    if stream:
        with client.messages.stream(messages=messages, **ask) as events:
            final = events.get_final_message()
    else:
        final = client.messages.create(messages=messages, **ask)
    return first, final


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_an_anthropic_tool_call_turn(gateway: tuple[str, GatewayClient], stream: bool) -> None:
    base, admin = gateway
    admin.install_script("claude", TURN, session="c")
    first, final = claude_turn(claude(base, "c"), stream=stream)
    use = first.content[0]
    assert (use.type, use.name, use.input) == ("tool_use", "mcp__notes__lookup", ARGS), (
        "the bare scripted name resolves to the qualified tool Claude Code offered"
    )
    assert first.stop_reason == "tool_use"
    assert first.usage.input_tokens > 0 and first.usage.output_tokens > 0
    assert first.usage.cache_creation_input_tokens == 0 and first.usage.cache_read_input_tokens == 0
    assert final.stop_reason == "end_turn"
    assert [block.text for block in final.content] == [TURN[1].content]
    entries = admin.log()
    assert [e["wire"] for e in entries] == ["anthropic-messages"] * 2
    assert entries[0]["extra"]["system"] == "Du bist ein Agent."
    assert entries[0]["response"]["content"][0]["input"] == ARGS
    result = entries[1]["messages"][2]["content"][0]
    assert result["tool_use_id"] == use.id, "the log keeps the native tool_result block"
    assert all(e["stream"] is stream and e["usage_sent"] for e in entries)


def test_anthropic_streams_are_named_events_without_done(gateway: tuple[str, GatewayClient]) -> None:
    base, admin = gateway
    admin.install_script("claude", TURN[:1], session="c")
    body = {"model": "wt-model", "max_tokens": 64, "stream": True, "tools": CLAUDE_TOOLS}
    body["messages"] = [{"role": "user", "content": "go"}]
    reply = httpx.post(
        f"{base}/v1/messages?beta=true",
        json=body,
        headers={"x-wt-session": "c", "anthropic-version": "2099-01-01"},
    )
    frames = [f for f in reply.text.split("\n\n") if f]
    names = [f.split("\n")[0].removeprefix("event: ") for f in frames]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    assert {"content_block_start", "content_block_delta", "content_block_stop"} <= set(names)
    assert "[DONE]" not in reply.text
    deltas = [
        json.loads(f.split("data: ", 1)[1])["delta"]
        for f in frames
        if f.startswith("event: content_block_delta")
    ]
    assert len(deltas) > 1 and all(d["type"] == "input_json_delta" for d in deltas)
    assert json.loads("".join(d["partial_json"] for d in deltas)) == ARGS


def test_an_anthropic_bad_body_is_a_native_400_logged_without_a_decision(
    gateway: tuple[str, GatewayClient],
) -> None:
    base, admin = gateway
    admin.install_script("claude", TURN, session="c")
    client = claude(base, "c")
    with pytest.raises(anthropic.BadRequestError) as refused:
        client.messages.create(model="wt-model", max_tokens=64, messages=[{"role": "robot", "content": "hi"}])  # type: ignore[misc, list-item]
    assert refused.value.status_code == 400
    assert refused.value.body["error"]["type"] == "invalid_request_error"  # type: ignore[index]
    assert "messages[0].role" in refused.value.message
    assert refused.value.response.headers["x-should-retry"] == "false"
    raw = httpx.post(
        f"{base}/v1/messages", json={"model": "wt-model", "messages": []}, headers={"x-wt-session": "c"}
    )
    assert (
        raw.status_code == 400
        and raw.json()["type"] == "error"
        and "max_tokens" in raw.json()["error"]["message"]
    )
    entries = admin.log()
    assert [(e["status"], e["error_code"], e["wire"]) for e in entries] == [
        (400, "invalid_request", "anthropic-messages")
    ] * 2
    assert served(admin, "c") == 0, "a refused body consumes no scripted decision"


def test_side_calls_and_count_tokens_never_consume_a_decision(gateway: tuple[str, GatewayClient]) -> None:
    base, admin = gateway
    admin.install_script("claude", TURN, session="c")
    assert admin.set_side_models(["wt-side"]) == ["wt-side"]
    client = claude(base, "c")
    quota = client.messages.create(
        model="wt-side", max_tokens=1, messages=[{"role": "user", "content": "quota"}]
    )
    with client.messages.stream(
        model="wt-side", max_tokens=32, messages=[{"role": "user", "content": "title?"}]
    ) as events:
        title = events.get_final_message()
    counted = client.messages.count_tokens(
        model="wt-model", messages=[{"role": "user", "content": "x" * 400}], tools=CLAUDE_TOOLS
    )
    assert quota.content[0].type == "text" and title.content[0].type == "text"
    assert counted.input_tokens > 100
    assert served(admin, "c") == 0
    first, _ = claude_turn(client, stream=False)
    use = first.content[0]
    assert use.type == "tool_use" and use.name == "mcp__notes__lookup", (
        "the turn still gets its first decision"
    )
    sides = [e["side"] for e in admin.log()]
    assert sides == ["side model wt-side", "side model wt-side", "count_tokens", None, None]


class Broken:
    """A mode whose every answer fails: the gateway's 500 must not be retried by the SDKs."""

    name = "script"

    async def complete(self, request: ChatRequest) -> ModeReply:
        raise RuntimeError("broken on purpose")

    async def aclose(self) -> None:
        return None


def test_no_sdk_retries_a_gateway_refusal() -> None:
    with (
        ServerThread(create_app(Broken(), models=["wt-model"])) as server,
        GatewayClient(server.url) as admin,
    ):
        with pytest.raises(anthropic.InternalServerError):
            claude(server.url, "c", max_retries=2).messages.create(
                model="wt-model", max_tokens=8, messages=[{"role": "user", "content": "hi"}]
            )
        with pytest.raises(openai.InternalServerError):
            responses(server.url, "c", max_retries=2).responses.create(model="wt-model", input="hi")
        assert len(admin.log()) == 2, "each SDK asked once: x-should-retry: false is honoured"


def test_models_are_listed_in_each_clients_shape(gateway: tuple[str, GatewayClient]) -> None:
    base, _admin = gateway
    assert [m.id for m in claude(base, "c").models.list()] == ["wt-model"]
    assert claude(base, "c").models.retrieve("wt-model").display_name == "wt-model"
    with pytest.raises(anthropic.NotFoundError):
        claude(base, "c").models.retrieve("other")
    assert [m.id for m in responses(base, "r").models.list()] == ["wt-model"]


def test_preflights_are_answered(gateway: tuple[str, GatewayClient]) -> None:
    base, admin = gateway
    assert httpx.head(f"{base}/").status_code == 200
    assert httpx.head(f"{base}/api/hello").status_code == 200
    assert admin.log() == [], "a preflight is not a model call"


# -- OpenAI Responses --------------------------------------------------------------------------------------
def responses_turn(client: openai.OpenAI, tools: list[Any], *, stream: bool) -> tuple[Any, Any]:
    ask: dict[str, Any] = {"model": "wt-model", "instructions": "Sei ein Agent.", "tools": tools}
    items: list[Any] = [{"role": "user", "content": "Lies die Notiz café."}]
    if stream:
        with client.responses.stream(input=items, **ask) as events:
            first = events.get_final_response()
    else:
        first = client.responses.create(input=items, **ask)
    call = first.output[0]
    assert call.type == "function_call"
    items += [
        call.model_dump(exclude_none=True),
        {"type": "function_call_output", "call_id": call.call_id, "output": "note: ☕"},
    ]
    if stream:
        with client.responses.stream(input=items, **ask) as events:
            final = events.get_final_response()
    else:
        final = client.responses.create(input=items, **ask)
    return first, final


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_a_responses_tool_call_turn(gateway: tuple[str, GatewayClient], stream: bool) -> None:
    base, admin = gateway
    admin.install_script("agents", TURN, session="r")
    first, final = responses_turn(responses(base, "r"), AGENTS_TOOLS, stream=stream)
    call = first.output[0]
    assert (call.type, call.name, json.loads(call.arguments)) == ("function_call", "lookup", ARGS)
    assert call.call_id.startswith("call_wt")
    assert (
        first.usage is not None
        and first.usage.input_tokens > 0
        and first.usage.total_tokens > first.usage.input_tokens
    )
    assert final.output_text == TURN[1].content
    entries = admin.log()
    assert [e["wire"] for e in entries] == ["openai-responses"] * 2
    assert entries[0]["extra"]["instructions"] == "Sei ein Agent."
    assert entries[1]["messages"][2] == {
        "type": "function_call_output",
        "call_id": call.call_id,
        "output": "note: ☕",
    }


def test_responses_streams_carry_the_documented_events(gateway: tuple[str, GatewayClient]) -> None:
    base, admin = gateway
    admin.install_script(
        "agents", (ReferenceDecision(content="hallo ☕", tool_calls=(LOOKUP,)),), session="r"
    )
    with responses(base, "r").responses.create(
        model="wt-model", input="go", tools=AGENTS_TOOLS, stream=True
    ) as events:
        kinds = [event.type for event in events]
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    for kind in (
        "response.output_item.added",
        "response.output_text.delta",
        "response.function_call_arguments.delta",
        "response.output_item.done",
    ):
        assert kind in kinds


def test_codex_namespaced_tools_get_namespaced_calls(gateway: tuple[str, GatewayClient]) -> None:
    base, admin = gateway
    admin.install_script("codex", TURN, session="x")
    _first, final = responses_turn(responses(base, "x"), CODEX_TOOLS, stream=True)
    raw = admin.log()[0]["response"]["output"][0]
    assert (raw["name"], raw["namespace"]) == ("lookup", "mcp__notes")
    assert final.output_text == TURN[1].content


def test_previous_response_id_is_recalled_or_refused(gateway: tuple[str, GatewayClient]) -> None:
    base, admin = gateway
    admin.install_script("agents", TURN, session="r")
    client = responses(base, "r")
    first = client.responses.create(model="wt-model", input="Lies café.", tools=AGENTS_TOOLS)
    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(model="wt-model", previous_response_id="resp_unknown", input="again")
    assert refused.value.param == "previous_response_id" and "resp_unknown" in refused.value.message
    assert served(admin, "r") == 1, "a refused request consumes no decision"
    call = first.output[0]
    assert call.type == "function_call"
    output = {"type": "function_call_output", "call_id": call.call_id, "output": "☕"}
    final = client.responses.create(model="wt-model", previous_response_id=first.id, input=[output])  # type: ignore[list-item]
    assert final.output_text == TURN[1].content
    history = admin.log()[-1]["history"]
    assert [item.get("type", "message") for item in history] == ["message", "function_call"]


def test_a_responses_bad_body_is_a_native_400(gateway: tuple[str, GatewayClient]) -> None:
    base, admin = gateway
    admin.install_script("agents", TURN, session="r")
    with pytest.raises(openai.BadRequestError) as refused:
        responses(base, "r").responses.create(model="wt-model", input="hi", temperature=7)
    assert refused.value.param == "temperature" and refused.value.code == "invalid_request"
    assert refused.value.response.headers["x-should-retry"] == "false"
    assert served(admin, "r") == 0 and admin.log()[0]["status"] == 400


def test_a_websocket_upgrade_on_responses_is_refused(gateway: tuple[str, GatewayClient]) -> None:
    base, _admin = gateway
    upgrade = {"connection": "Upgrade", "upgrade": "websocket", "sec-websocket-version": "13"}
    upgrade["sec-websocket-key"] = "dGhlIHNhbXBsZSBub25jZQ=="
    reply = httpx.get(f"{base}/v1/responses", headers=upgrade)
    assert reply.status_code in (403, 405) and reply.status_code != 101
    if reply.status_code == 405:
        assert "HTTP POST" in reply.json()["error"]["message"]
        assert reply.headers["x-should-retry"] == "false"


def test_a_tool_name_several_offered_tools_answer_is_refused_naming_them(
    gateway: tuple[str, GatewayClient],
) -> None:
    base, admin = gateway
    twice: Any = [*CLAUDE_TOOLS, {"name": "mcp__files__lookup", "input_schema": SCHEMA}]
    admin.install_script("claude", TURN, session="c")
    with pytest.raises(anthropic.UnprocessableEntityError) as refused:
        claude(base, "c").messages.create(
            model="wt-model", max_tokens=8, tools=twice, messages=[{"role": "user", "content": "x"}]
        )
    assert "'lookup'" in refused.value.message
    assert "mcp__notes__lookup, mcp__files__lookup" in refused.value.message
    assert admin.log()[0]["error_code"] == "tool_not_offered"


def test_an_invented_tool_reaches_the_harness_as_scripted(gateway: tuple[str, GatewayClient]) -> None:
    base, admin = gateway
    invented = ReferenceDecision(tool_calls=(ReferenceToolCall("teleport", {"to": "Mond"}),))
    admin.install_script("agents", (invented,), session="r")
    response = responses(base, "r").responses.create(model="wt-model", input="x", tools=CODEX_TOOLS)
    call = response.output[0]
    assert call.type == "function_call" and call.name == "teleport" and call.namespace is None


def test_malformed_bodies_get_each_dialects_envelope_and_consume_nothing(
    gateway: tuple[str, GatewayClient],
) -> None:
    base, admin = gateway
    admin.install_script("any", TURN, session="s")
    headers = {"x-wt-session": "s", "content-type": "application/json"}
    messages = httpx.post(f"{base}/v1/messages", content=b"{not json", headers=headers)
    responses_ = httpx.post(f"{base}/v1/responses", content=b"[1, 2]", headers=headers)
    counted = httpx.post(f"{base}/v1/messages/count_tokens", json={"model": "wt-model"}, headers=headers)
    missing = httpx.post(f"{base}/v1/messages/nothing", json={}, headers=headers)
    assert messages.status_code == 400 and messages.json()["error"]["type"] == "invalid_request_error"
    assert "not JSON" in messages.json()["error"]["message"]
    assert responses_.status_code == 400 and "JSON object" in responses_.json()["error"]["message"]
    assert counted.status_code == 400 and "messages" in counted.json()["error"]["message"]
    assert missing.status_code == 404 and missing.json()["type"] == "error"
    for reply in (messages, responses_, counted, missing):
        assert reply.headers["x-should-retry"] == "false"
    assert [e["status"] for e in admin.log()] == [400, 400, 400]
    assert served(admin, "s") == 0
