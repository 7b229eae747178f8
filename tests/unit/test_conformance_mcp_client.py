"""The mcp_client checks' judgements, `[mcp]` in runtime.toml, and the reference runtime's content blocks.

The checks themselves run in containers (conformance/, `-k mcp_client`); here each judgement is fed the
native shapes a model call of each wire carries, right and wrong.
"""

from __future__ import annotations

import base64
import importlib
import json
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from tests.unit.test_runtimes_manifest import refusal, runtime
from windtunnel._conformance.checks_mcp_client import (
    PNG_B64,
    declared,
    image_problem,
    native_images,
    visible_text,
)
from windtunnel._conformance.model import OptionalAbsent
from windtunnel._conformance.subject import Subject
from windtunnel._packs.mediapack.pack import CAPTION, PNG, PNG_TYPE, RESOURCE_TEXT, RESOURCE_URI
from windtunnel._runtimes.manifest import load_manifest
from windtunnel._runtimes.mcp_client import McpClientPolicy
from windtunnel._wire.dialect import Said

REFERENCE = Path(__file__).resolve().parents[2] / "runtimes" / "reference"
DATA_URL = f"data:{PNG_TYPE};base64,{PNG_B64}"
NATIVE = {
    "chat": {"type": "image_url", "image_url": {"url": DATA_URL}},
    "messages": {"type": "image", "source": {"type": "base64", "media_type": PNG_TYPE, "data": PNG_B64}},
    "responses": {"type": "input_image", "image_url": DATA_URL},
}


def _subject(wire: str, image: str = "native", content: frozenset[str] = frozenset({"image"})) -> Subject:
    return Subject(name="r", runtime=object(), wire=wire, mcp=McpClientPolicy(content=content, image=image))  # type: ignore[arg-type]


def _tool(content: Any) -> Said:
    native = {"type": "tool_result", "tool_use_id": "t1", "content": content}
    return Said(role="tool", text="", answers="t1", native=native)


@pytest.mark.parametrize("wire", sorted(NATIVE))
def test_an_image_is_read_only_in_its_own_wires_spelling(wire: str) -> None:
    conversation = [{"role": "user", "content": [NATIVE[wire]]}]
    assert native_images(conversation, wire) == [(PNG_TYPE, PNG)]
    for other in set(NATIVE) - {wire}:
        assert native_images(conversation, other) == []


def test_a_native_image_in_the_tool_result_holds_and_its_base64_is_not_visible_text() -> None:
    item = _tool([{"type": "text", "text": CAPTION}, NATIVE["messages"]])
    assert visible_text(item) == CAPTION
    request = {"messages": [{"role": "user", "content": [item.native]}]}
    assert image_problem(_subject("messages"), item, request) is None


def test_native_declared_but_no_image_sent_fails_naming_the_note_declaration() -> None:
    item = _tool(f"[image {PNG_TYPE}]")
    problem = image_problem(_subject("chat"), item, {"messages": [item.native]})
    assert problem is not None and 'image = "note"' in problem and "image_url" in problem


@pytest.mark.parametrize(
    ("sent", "fails"),
    [
        (f"[image {PNG_TYPE}, 70 bytes]", None),
        (json.dumps({"type": "image", "data": PNG_B64, "mimeType": PNG_TYPE}), "base64"),
        ("", "dropped"),
        ("the tool answered", "dropped"),
    ],
)
def test_the_note_names_the_image_and_never_carries_its_base64(sent: str, fails: str | None) -> None:
    item = Said(role="tool", text=sent, answers="c1", native={"role": "tool", "content": sent})
    problem = image_problem(_subject("chat", image="note"), item, {"messages": [item.native]})
    assert (problem is None) if fails is None else (problem is not None and fails in problem)


def test_a_note_outside_the_texts_around_it_fails() -> None:
    sent = f"{CAPTION}\nlater\n[image {PNG_TYPE}]"
    item = Said(role="tool", text=sent, answers="c1", native={"role": "tool", "content": sent})
    assert image_problem(_subject("chat", image="note"), item, {}, between=(0, len(CAPTION) + 2)) is not None


def test_an_undeclared_content_type_is_info() -> None:
    with pytest.raises(OptionalAbsent, match="declares no resource content"):
        declared(_subject("chat"), "resource")
    declared(_subject("chat"), "image")  # declared: measured


def test_mcp_table_is_read_and_a_variant_inherits_it(tmp_path: Path) -> None:
    assert load_manifest(runtime(tmp_path, "a", 'name = "a"\n')).mcp == McpClientPolicy()
    base = runtime(tmp_path, "r", 'name = "r"\n[mcp]\ncontent = ["image", "resource"]\nimage = "note"\n')
    assert load_manifest(base).mcp == McpClientPolicy(content=frozenset({"image", "resource"}), image="note")
    variant = base / "poison" / "v"
    variant.mkdir(parents=True)
    (variant / "runtime.toml").write_text('name = "r-v"\nextends = "../.."\n[mcp]\ncontent = ["image"]\n')
    assert load_manifest(variant).mcp == McpClientPolicy(content=frozenset({"image"}), image="note")


BAD_TABLES = {
    'content = ["imgae"]': "did you mean 'image'",
    'image = "inline"': "mcp.image",
    "contents = []": "contents",
}


def test_a_bad_mcp_table_is_one_line_naming_the_key(tmp_path: Path) -> None:
    for number, (table, named) in enumerate(BAD_TABLES.items()):
        assert named in refusal(tmp_path / str(number), f"[mcp]\n{table}")


def _tools_module() -> Any:
    if str(REFERENCE) not in sys.path:
        sys.path.insert(0, str(REFERENCE))
    return importlib.import_module("reference_agent.tools"), importlib.import_module(
        "reference_agent.settings"
    )


def _result(*blocks: Any) -> types.CallToolResult:
    return types.CallToolResult(content=list(blocks))


IMAGE = types.ImageContent(type="image", data=base64.b64encode(PNG).decode(), mime_type=PNG_TYPE)
RESOURCE = types.EmbeddedResource(
    type="resource",
    resource=types.TextResourceContents(uri=RESOURCE_URI, mime_type="text/markdown", text=RESOURCE_TEXT),
)


def test_the_reference_sends_a_note_for_an_image_and_a_resources_uri_and_text() -> None:
    tools, _settings = _tools_module()
    text = tools.result_text(_result(types.TextContent(type="text", text=CAPTION), IMAGE, RESOURCE))
    assert text.startswith(f"{CAPTION}\n[image {PNG_TYPE}, {len(PNG)} bytes")
    assert f"[resource {RESOURCE_URI} (text/markdown)]\n{RESOURCE_TEXT}" in text and PNG_B64 not in text


def test_the_reference_poisons_mishandle_the_blocks() -> None:
    tools, settings = _tools_module()
    fault = settings.Fault
    as_json = tools.result_text(_result(IMAGE, RESOURCE), fault.CONTENT_AS_JSON)
    assert PNG_B64 in as_json and RESOURCE_TEXT not in as_json
    assert tools.result_text(_result(IMAGE, RESOURCE), fault.DROP_NON_TEXT_CONTENT) == ""
