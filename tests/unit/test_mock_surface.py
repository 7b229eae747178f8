"""What a pack's mock may declare beyond JSON tools: the declarations, their checks, and their evidence in process."""

from __future__ import annotations

import base64
from typing import Any

import anyio
import pytest

from windtunnel._core.agent_runtime import MockServerPlan
from windtunnel._core.mock_steps import subset
from windtunnel._core.mock_surface import fill
from windtunnel._mcp.events import MemoryEventStore
from windtunnel._mcp.inprocess import InProcessMCPHandle
from windtunnel.api import (
    Audio,
    Elicit,
    EmbeddedResource,
    Image,
    Log,
    MockServer,
    Progress,
    Prompt,
    PromptMessage,
    Resource,
    ResourceTemplate,
    Text,
    Tool,
    ToolResult,
)
from windtunnel.errors import PackError

EMPTY: dict[str, Any] = {"type": "object"}
WRONG: Any = "hi"  # a string where a declaration belongs


def test_placeholders_are_filled_from_arguments_and_other_braces_kept() -> None:
    assert fill("hi {who}, {n} of {missing}", {"who": "ada", "n": 3}) == "hi ada, 3 of {missing}"
    assert fill('{"id":"{id}"}', {"id": "7"}) == '{"id":"7"}'


def test_blocks_render_in_wire_shape() -> None:
    assert Image(data=b"\x01", mime_type="image/png").wire({}) == {
        "type": "image",
        "data": base64.b64encode(b"\x01").decode(),
        "mimeType": "image/png",
    }
    assert Audio(data="AQ==", mime_type="audio/wav").wire({})["data"] == "AQ=="
    resource = EmbeddedResource(uri="test://{id}", mime_type="text/plain", text="n{id}").wire({"id": "1"})
    assert resource == {
        "type": "resource",
        "resource": {"uri": "test://1", "mimeType": "text/plain", "text": "n1"},
    }


def test_template_matches_its_uris_only() -> None:
    template = ResourceTemplate(uri_template="test://a/{x}/b", name="t", mime_type="text/plain", text="{x}")
    assert template.match("test://a/42/b") == {"x": "42"}
    assert template.match("test://a/42/c") is None and template.match("test://a/4/2/b") is None


def test_answers_are_matched_as_subsets() -> None:
    assert subset(
        {"action": "accept", "content": {"a": 1}}, {"action": "accept", "content": {"a": 1, "b": 2}}
    )
    assert not subset({"action": "accept"}, {"action": "decline"})
    assert not subset({"content": {"a": 1}}, {"content": None})


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            lambda: Image(data="not base64!", mime_type="image/png"),
            "Image: data is a string that is not base64",
        ),
        (lambda: Resource(uri="u", name="n", mime_type="m"), "Resource 'u': needs text= or blob="),
        (lambda: EmbeddedResource(uri="u", mime_type="m", text="t", blob=b"b"), "needs text= or blob="),
        (
            lambda: ResourceTemplate(uri_template="test://x", name="n", mime_type="m", text="t"),
            "has no {variable}",
        ),
        (
            lambda: ResourceTemplate(
                uri_template="test://{x}", name="n", mime_type="m", text="t", completions={"y": ["1"]}
            ),
            "completes 'y', not a variable of it",
        ),
        (lambda: Prompt(name="p", description="d", messages=[]), "Prompt 'p': has no messages"),
        (lambda: Prompt(name="p", description="d", messages=[WRONG]), "messages[0]: is not a PromptMessage"),
        (lambda: ToolResult([WRONG]), "ToolResult.content[0]: is a str"),
        (lambda: ToolResult([]), "expected a non-empty list of content blocks"),
        (lambda: Log(data="x", level="loud"), "Log.level: is 'loud'"),
        (
            lambda: Tool(name="t", description="d", input_schema=EMPTY, handler=print, steps=[WRONG]),
            "steps[0]: is a str",
        ),
        (
            lambda: Tool(
                name="t",
                description="d",
                input_schema=EMPTY,
                handler=print,
                steps=[Progress(progress=1, delay_s=9)],
            ),
            "delay_s is 9",
        ),
        (
            lambda: Tool(
                name="t", description="d", input_schema=EMPTY, handler=print, output_schema={"type": "string"}
            ),
            "output_schema is not an object schema",
        ),
        (
            lambda: Tool(name="t", description="d", input_schema=EMPTY, handler=print, output_schema=WRONG),
            "output_schema is not an object schema",
        ),
        (
            lambda: MockServer(
                "s",
                [Tool(name="t", description="d", input_schema=EMPTY, handler=print, steps=[Log(data="x")])],
            ),
            "tool 't' declares steps, which a stateless server cannot send",
        ),
        (
            lambda: MockServer("s", [], resources=[WRONG]),
            "MockServer 's': resources must be a list of Resource",
        ),
    ],
)
def test_a_bad_declaration_is_one_pack_error_naming_it(build: Any, message: str) -> None:
    with pytest.raises(PackError) as caught:
        build()
    assert message in caught.value.message and caught.value.hint


def _asking(_state: dict[str, Any], _arguments: dict[str, Any], replies: Any) -> ToolResult:
    return ToolResult([Text(text=f"{len(replies)} {replies[0].answer} {replies[0].error}")])


def test_in_process_a_tool_with_steps_records_them_as_not_sent() -> None:
    asking = Tool(
        name="ask",
        description="d",
        input_schema=EMPTY,
        handler=_asking,
        steps=[Progress(progress=1), Elicit(message="m", schema=EMPTY)],
    )
    handle = InProcessMCPHandle(
        MockServerPlan(pack="p", server="s", factory=lambda: MockServer("s", [asking], sessions=True))
    )
    outcome = handle.call("ask", {})
    assert isinstance(outcome.result, ToolResult) and not outcome.is_error
    assert outcome.result.content[0] == Text(
        text="1 None the tool was called in process, with no MCP client to send to"
    )
    (call,) = handle.calls()
    assert [exchange["delivered"] for exchange in call["exchanges"]] == [False, False]
    assert call["result"] == {"content": [{"type": "text", "text": outcome.result.content[0].text}]}


def test_an_unmet_expectation_stops_the_tool_and_a_plain_call_records_no_exchanges() -> None:
    strict = Tool(
        name="ask",
        description="d",
        input_schema=EMPTY,
        handler=_asking,
        steps=[Elicit(message="m", schema=EMPTY, expect={"action": "accept"})],
    )
    plain = Tool(name="plain", description="d", input_schema=EMPTY, handler=lambda s, a: 1)
    handle = InProcessMCPHandle(
        MockServerPlan(pack="p", server="s", factory=lambda: MockServer("s", [strict, plain], sessions=True))
    )
    outcome = handle.call("ask", {})
    assert outcome.is_error and "elicitation answer was not the one expected" in (outcome.error or "")
    handle.call("plain", {})
    assert "exchanges" not in handle.calls()[1]


def test_prompts_and_logs_set_what_the_server_announces() -> None:
    plain = MockServer("s", [])
    assert not plain.logs and not plain.completes and not plain.sessions
    chatty = Tool(name="t", description="d", input_schema=EMPTY, handler=print, steps=[Log(data="x")])
    prompt = Prompt(name="p", description="d", messages=[PromptMessage(role="user", content=Text(text="t"))])
    assert MockServer("s", [chatty], prompts=[prompt], sessions=True).logs


def test_the_event_store_replays_a_streams_later_events_only() -> None:
    store = MemoryEventStore(max_events=10)
    sent: list[str] = []

    async def run() -> Any:
        first = await store.store_event("a", None)  # a priming event: no message to replay
        await store.store_event("b", {"jsonrpc": "2.0", "method": "x"})  # type: ignore[arg-type]
        await store.store_event("a", {"jsonrpc": "2.0", "method": "y"})  # type: ignore[arg-type]

        async def send(event: Any) -> None:
            sent.append(event.event_id)

        return await store.replay_events_after(first, send), await store.replay_events_after("nope", send)

    assert anyio.run(run) == ("a", None)
    assert sent == ["3"]


def test_a_tool_with_an_output_schema_must_return_structured_content() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    tools = [
        Tool(
            name="ok",
            description="d",
            input_schema=EMPTY,
            handler=lambda s, a: {"n": 1},
            output_schema=schema,
        ),
        Tool(
            name="blocks",
            description="d",
            input_schema=EMPTY,
            handler=lambda s, a: ToolResult([Text(text="1")]),
            output_schema=schema,
        ),
        Tool(
            name="wrong",
            description="d",
            input_schema=EMPTY,
            handler=lambda s, a: {"n": "1"},
            output_schema=schema,
        ),
    ]
    server = MockServer("s", tools)
    assert not server.call("ok", {}).is_error
    assert "returned no structured content object" in (server.call("blocks", {}).error or "")
    assert "breaks its output_schema" in (server.call("wrong", {}).error or "")
