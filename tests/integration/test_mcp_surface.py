"""The whole MCP surface a pack can opt in to, served for real: the official mcp client over HTTP against a
loopback mock, with what the mock recorded read back over its admin routes."""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any

import anyio
import httpx
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.mcp_conformance.session import ACCEPT, INITIALIZE
from windtunnel._core.agent_runtime import MockServerPlan
from windtunnel._mcp.loopback import LoopbackMCP, start_loopback, stop_loopback
from windtunnel.api import (
    Audio,
    CloseStream,
    Elicit,
    EmbeddedResource,
    Image,
    Log,
    MockServer,
    Progress,
    Prompt,
    PromptArgument,
    PromptMessage,
    Reply,
    Resource,
    ResourceLink,
    ResourceTemplate,
    Sample,
    Text,
    Tool,
    ToolResult,
)

PNG = b"\x89PNG\r\n\x1a\nnot-a-real-image"
WAV = b"RIFF\x00\x00\x00\x00WAVEfmt "
EMPTY: dict[str, Any] = {"type": "object", "properties": {}}
NAMED = {"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]}
FORM = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
OUTPUT = {"type": "object", "properties": {"total": {"type": "number"}}, "required": ["total"]}


def _blocks(*blocks: Any) -> Callable[[dict[str, Any], dict[str, Any]], ToolResult]:
    return lambda _state, _arguments: ToolResult(list(blocks))


def _answered(_state: dict[str, Any], arguments: dict[str, Any], replies: Sequence[Reply]) -> dict[str, Any]:
    return {"who": arguments.get("who"), "replies": [reply.answer for reply in replies]}


def _tool(name: str, handler: Any, *, schema: dict[str, Any] = EMPTY, **more: Any) -> Tool:
    return Tool(name=name, description=name, input_schema=schema, handler=handler, **more)


def gallery() -> MockServer:
    """A mock declaring every kind of thing a pack can opt in to."""
    link = ResourceLink(uri="test://docs/1", name="doc one", mime_type="text/plain")
    embedded = EmbeddedResource(uri="test://docs/1", mime_type="text/plain", text="the first doc")
    return MockServer(
        "gallery",
        [
            _tool("image", _blocks(Image(data=PNG, mime_type="image/png"))),
            _tool("audio", _blocks(Audio(data=WAV, mime_type="audio/wav"))),
            _tool("embedded", _blocks(embedded)),
            _tool("link", _blocks(link)),
            _tool("mixed", _blocks(Text(text="see:"), Image(data=PNG, mime_type="image/png"), link)),
            _tool("total", lambda s, a: {"total": 3}, output_schema=OUTPUT),
            _tool("wrong_total", lambda s, a: {"total": "three"}, output_schema=OUTPUT),
            _tool(
                "slow",
                lambda s, a: "done",
                steps=[Progress(progress=1, total=2), Progress(progress=2, total=2)],
            ),
            _tool(
                "chatty",
                lambda s, a: "done",
                schema=NAMED,
                steps=[
                    Log(data="hello {who}", level="info"),
                    Log(data={"n": 1}, level="warning", logger="g"),
                ],
            ),
            _tool(
                "ask",
                _answered,
                schema=NAMED,
                steps=[Elicit(message="What about {who}?", schema=FORM, expect={"action": "accept"})],
            ),
            _tool(
                "ask_briefly",
                _answered,
                schema=NAMED,
                steps=[Elicit(message="Quick, {who}?", schema=FORM, timeout_s=0.3)],
            ),
            _tool("muse", _answered, schema=NAMED, steps=[Sample(prompt="A poem on {who}", max_tokens=20)]),
            _tool("hang_up", lambda s, a: "after the reconnect", steps=[CloseStream(), Progress(progress=1)]),
        ],
        resources=[
            Resource(uri="test://docs/1", name="doc one", mime_type="text/plain", text="the first doc"),
            Resource(uri="test://logo", name="logo", mime_type="image/png", blob=PNG),
        ],
        resource_templates=[
            ResourceTemplate(
                uri_template="test://items/{id}",
                name="item",
                mime_type="text/plain",
                text="item {id}",
                completions={"id": ["apple", "apricot", "banana"]},
            )
        ],
        prompts=[
            Prompt(
                name="greet",
                description="Greet someone.",
                arguments=[PromptArgument(name="who", required=True, completions=["ada", "alan", "grace"])],
                messages=[
                    PromptMessage(role="user", content=Text(text="Say hello to {who}.")),
                    PromptMessage(role="user", content=Image(data=PNG, mime_type="image/png")),
                ],
            )
        ],
        sessions=True,
    )


def tools_only() -> MockServer:
    return MockServer("plain", [_tool("echo", lambda s, a: {"echo": a})])


@pytest.fixture(scope="module")
def mocks() -> Iterator[dict[str, LoopbackMCP]]:
    plans = [
        MockServerPlan(pack="surface", server="gallery", factory=gallery),
        MockServerPlan(pack="surface", server="plain", factory=tools_only),
    ]
    started = start_loopback(plans)
    try:
        yield {handle.name: handle for handle in started}
    finally:
        stop_loopback(started)


@pytest.fixture
def mock(mocks: dict[str, LoopbackMCP]) -> LoopbackMCP:
    mocks["gallery"].reset()
    return mocks["gallery"]


def session(url: str, work: Callable[[Client], Awaitable[Any]], **callbacks: Any) -> Any:
    """Run `work` in a 2025-11-25 session (the handshake era, which has requests to the client)."""

    async def run() -> Any:
        with anyio.fail_after(30):
            async with Client(url, mode="legacy", cache=None, **callbacks) as client:
                return await work(client)

    return anyio.run(run)


@pytest.mark.parametrize(
    ("tool", "kinds"),
    [
        ("image", ["image"]),
        ("audio", ["audio"]),
        ("embedded", ["resource"]),
        ("link", ["resource_link"]),
        ("mixed", ["text", "image", "resource_link"]),
    ],
)
def test_each_content_kind_reaches_the_client_as_declared(
    mock: LoopbackMCP, tool: str, kinds: list[str]
) -> None:
    result = session(mock.url, lambda c: c.call_tool(tool, {}))
    assert [block.type for block in result.content] == kinds
    assert not result.is_error and result.structured_content is None
    (call,) = mock.calls()
    assert [block["type"] for block in call["result"]["content"]] == kinds  # the evidence holds what was sent
    if tool == "image":
        assert base64.b64decode(result.content[0].data) == PNG and result.content[0].mime_type == "image/png"


def test_structured_output_is_listed_and_checked(mock: LoopbackMCP) -> None:
    listed = {tool["name"]: tool for tool in mock.tools()}
    assert listed["total"]["outputSchema"] == OUTPUT and "outputSchema" not in listed["image"]
    assert session(mock.url, lambda c: c.call_tool("total", {})).structured_content == {"total": 3}
    wrong = session(mock.url, lambda c: c.call_tool("wrong_total", {}))
    assert wrong.is_error and "breaks its output_schema" in wrong.content[0].text


def test_progress_notifications_reach_the_callers_progress_token(mock: LoopbackMCP) -> None:
    seen: list[tuple[float, float | None]] = []

    async def progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total))

    result = session(mock.url, lambda c: c.call_tool("slow", {}, progress_callback=progress))
    assert result.content[0].text == '"done"' and seen == [(1, 2), (2, 2)]
    session(mock.url, lambda c: c.call_tool("slow", {}))  # no token: nothing is sent, and the log says why
    with_token, without = mock.calls()
    assert [e["delivered"] for e in with_token["exchanges"]] == [True, True]
    assert with_token["exchanges"][0]["sent"]["progress"] == 1
    assert [e["reason"] for e in without["exchanges"]] == ["the request carried no progress token"] * 2


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")  # set_logging_level
def test_log_messages_respect_the_level_the_client_set(mock: LoopbackMCP) -> None:
    logged: list[types.LoggingMessageNotificationParams] = []

    async def log(params: types.LoggingMessageNotificationParams) -> None:
        logged.append(params)

    async def work(client: Client) -> None:
        await client.call_tool("chatty", {"who": "ada"})
        await client.set_logging_level("warning")
        await client.call_tool("chatty", {"who": "ada"})

    session(mock.url, work, logging_callback=log)
    assert [(p.level, p.data) for p in logged] == [
        ("info", "hello ada"),
        ("warning", {"n": 1}),
        ("warning", {"n": 1}),
    ]
    first, second = mock.calls()
    assert [e["delivered"] for e in second["exchanges"]] == [False, True]
    assert mock.requests()[0]["method"] == "logging/setLevel"
    assert first["exchanges"][0]["sent"] == {"level": "info", "data": "hello ada"}


def test_an_elicitation_is_answered_recorded_and_held_to_its_script(mock: LoopbackMCP) -> None:
    asked: list[types.ElicitRequestParams] = []

    def answering(action: str) -> Any:
        async def elicit(_ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
            asked.append(params)
            content = {"answer": "yes"} if action == "accept" else None
            return types.ElicitResult(action=action, content=content)  # type: ignore[arg-type]

        return elicit

    accepted = session(
        mock.url, lambda c: c.call_tool("ask", {"who": "ada"}), elicitation_callback=answering("accept")
    )
    assert accepted.structured_content == {
        "who": "ada",
        "replies": [{"action": "accept", "content": {"answer": "yes"}}],
    }
    assert asked[0].message == "What about ada?"
    declined = session(
        mock.url, lambda c: c.call_tool("ask", {"who": "bo"}), elicitation_callback=answering("decline")
    )
    assert declined.is_error and "elicitation answer was not the one expected" in declined.content[0].text
    refused = session(
        mock.url, lambda c: c.call_tool("ask", {"who": "cy"})
    )  # no callback: the client refuses
    assert refused.is_error
    first, second, third = (call["exchanges"][0] for call in mock.calls())
    assert first["kind"] == "elicitation" and first["met"] and first["answer"]["action"] == "accept"
    assert first["sent"]["requestedSchema"] == FORM
    assert not second["met"] and second["expected"] == {"action": "accept"}
    assert third["answer"] is None and third["error"].startswith("JSON-RPC error")


def test_an_unanswered_request_times_out_and_the_call_still_ends(mock: LoopbackMCP) -> None:
    async def dawdle(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        await anyio.sleep(3)
        return types.ElicitResult(action="accept", content={"answer": "too late"})

    result = session(
        mock.url, lambda c: c.call_tool("ask_briefly", {"who": "ada"}), elicitation_callback=dawdle
    )
    assert result.structured_content == {"who": "ada", "replies": [None]}  # no expectation: the tool goes on
    (exchange,) = mock.calls()[0]["exchanges"]
    assert exchange["answer"] is None and "timed out" in exchange["error"] and exchange["seconds"] < 2


def test_a_sampling_request_carries_the_prompt_and_the_answer_reaches_the_handler(mock: LoopbackMCP) -> None:
    async def sample(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        assert params.messages[0].content.text == "A poem on ada"  # type: ignore[union-attr]
        return types.CreateMessageResult(role="assistant", content=types.TextContent(text="roses"), model="m")

    result = session(mock.url, lambda c: c.call_tool("muse", {"who": "ada"}), sampling_callback=sample)
    assert result.structured_content is not None
    assert result.structured_content["replies"][0]["content"]["text"] == "roses"
    (call,) = mock.calls()
    assert call["exchanges"][0]["sent"]["maxTokens"] == 20 and call["exchanges"][0]["met"]


def test_a_closed_stream_is_resumed_and_the_result_still_arrives(mock: LoopbackMCP) -> None:
    result = session(mock.url, lambda c: c.call_tool("hang_up", {}))
    assert result.content[0].text == '"after the reconnect"'
    (call,) = mock.calls()
    assert call["exchanges"][0] == {**call["exchanges"][0], "kind": "close_stream", "delivered": True}


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")  # subscribe_resource
def test_resources_templates_and_reads_are_served_and_recorded(mock: LoopbackMCP) -> None:
    async def work(client: Client) -> Any:
        listed = await client.list_resources()
        templates = await client.list_resource_templates()
        text = await client.read_resource("test://docs/1")
        blob = await client.read_resource("test://logo")
        item = await client.read_resource("test://items/42")
        await client.subscribe_resource("test://docs/1")
        with pytest.raises(MCPError, match="no resource 'test://nope'"):
            await client.read_resource("test://nope")
        return listed, templates, text, blob, item

    listed, templates, text, blob, item = session(mock.url, work)
    assert [r.uri for r in listed.resources] == ["test://docs/1", "test://logo"]
    assert templates.resource_templates[0].uri_template == "test://items/{id}"
    assert text.contents[0].text == "the first doc"
    assert base64.b64decode(blob.contents[0].blob) == PNG
    assert item.contents[0].text == "item 42"
    methods = [(r["method"], r["error"]) for r in mock.requests()]
    assert methods[-2][0] == "resources/subscribe" and methods[-1][0] == "resources/read"
    assert "no resource" in (methods[-1][1] or "")


def test_prompts_and_completions_are_served_and_recorded(mock: LoopbackMCP) -> None:
    async def work(client: Client) -> Any:
        listed = await client.list_prompts()
        got = await client.get_prompt("greet", {"who": "ada"})
        names = await client.complete(types.PromptReference(name="greet"), {"name": "who", "value": "a"})
        ids = await client.complete(
            types.ResourceTemplateReference(uri="test://items/{id}"), {"name": "id", "value": "ap"}
        )
        return listed, got, names, ids

    listed, got, names, ids = session(mock.url, work)
    assert listed.prompts[0].name == "greet" and listed.prompts[0].arguments[0].required
    assert got.messages[0].content.text == "Say hello to ada." and got.messages[1].content.type == "image"
    assert names.completion.values == ["ada", "alan"] and ids.completion.values == ["apple", "apricot"]
    assert [r["method"] for r in mock.requests()][-3:] == [
        "prompts/get",
        "completion/complete",
        "completion/complete",
    ]


def test_a_session_mock_announces_what_it_serves_and_a_tools_only_mock_stays_as_it_was(
    mocks: dict[str, LoopbackMCP],
) -> None:
    rich = httpx.post(mocks["gallery"].url, json=INITIALIZE, headers=ACCEPT, timeout=10)
    plain = httpx.post(mocks["plain"].url, json=INITIALIZE, headers=ACCEPT, timeout=10)
    assert rich.headers["content-type"].startswith("text/event-stream") and rich.headers["mcp-session-id"]
    assert "mcp-session-id" not in plain.headers and plain.headers["content-type"] == "application/json"
    assert set(plain.json()["result"]["capabilities"]) == {"tools"}
    assert '"resources"' in rich.text and '"prompts"' in rich.text and '"logging"' in rich.text


def test_a_2026_client_gets_the_requests_in_one_round_and_its_retry_is_the_recorded_call(
    mock: LoopbackMCP,
) -> None:
    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"answer": "per request"})

    logged: list[types.LoggingMessageNotificationParams] = []

    async def log(params: types.LoggingMessageNotificationParams) -> None:
        logged.append(params)

    async def run() -> Any:
        # auto: the SDK's client picks the 2026-07-28 per-request transport, which has no back channel
        async with Client(mock.url, cache=None, elicitation_callback=elicit, logging_callback=log) as client:
            asked = await client.call_tool("ask", {"who": "ada"})
            await client.call_tool("chatty", {"who": "ada"})  # no log level opted in: nothing is sent
            return asked

    result = anyio.run(run)
    assert not result.is_error
    assert result.structured_content == {
        "who": "ada",
        "replies": [{"action": "accept", "content": {"answer": "per request"}}],
    }
    assert logged == []
    asked, chatty = mock.calls()  # the first round is not a call: only the retry that ran the tool is
    assert (
        asked["exchanges"][0]["answer"]["content"] == {"answer": "per request"}
        and asked["exchanges"][0]["met"]
    )
    assert {e["reason"] for e in chatty["exchanges"]} == {
        "the request did not opt in to log messages of this level"
    }
    (first_round,) = [r for r in mock.requests() if r["method"] == "tools/call"]
    assert first_round["answer"]["resultType"] == "input_required"
    assert first_round["answer"]["inputRequests"]["step-0"]["method"] == "elicitation/create"
