"""The mcp_client checks' own pack: a media service whose tool results hold content beyond text.

Every result is fixed data (docs/conformance.md, "MCP client"): what a runtime's MCP client must hand the
model is known byte for byte before the call, so a check compares it with what the model was sent.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any

# Inside the library, the pack imports the private modules a pack author reaches through windtunnel.api.
from windtunnel._core.mock_kit import MockServer, Tool
from windtunnel._core.mock_steps import Elicit, Log, Progress, Reply, Sample
from windtunnel._core.mock_surface import (
    Audio,
    EmbeddedResource,
    Image,
    Resource,
    ResourceLink,
    Text,
    ToolResult,
)
from windtunnel._packs.pack import Pack

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
"""A 1x1 PNG: small enough for any log, and a real image any model API accepts."""
PNG_TYPE = "image/png"
CAPTION = "Refunds by week, chart follows:"
SOURCE = "Source: wt-kit ledger, «week 48» ✓"
RESOURCE_URI = "wt://kit/handbook.md"
RESOURCE_TYPE = "text/markdown"
RESOURCE_TEXT = '# Refund handbook\n\n\t"Refunds" over 100 € need a second approval.\nÜbergabe: ✓\n'
"""Quotes, a tab, newlines and multi-byte UTF-8: a runtime that hands the model the block's JSON escapes them."""
WAV = (
    b"RIFF"
    + (44 - 8 + 4).to_bytes(4, "little")
    + b"WAVEfmt "
    + (16).to_bytes(4, "little")
    + (1).to_bytes(2, "little")
    + (1).to_bytes(2, "little")
    + (8000).to_bytes(4, "little")
    + (16000).to_bytes(4, "little")
    + (2).to_bytes(2, "little")
    + (16).to_bytes(2, "little")
    + b"data"
    + (4).to_bytes(4, "little")
    + b"\x00\x00\x10\x00"
)
"""Two samples of 16-bit mono PCM at 8 kHz: a real, tiny WAV file."""
WAV_TYPE = "audio/wav"
LINK_URI = "wt://kit/ledgers/week-48.csv"
LINK_NAME = "refund-ledger-week-48"
EXPORT_TEXT = 'Export done: 3 ledgers, «48» rows ✓\n\t"closed": true'
"""The export tool's result, served after its progress and log notifications: byte for byte what the model
must be sent (quotes, a tab and multi-byte UTF-8, as in RESOURCE_TEXT)."""
EXPORT_STEPS = (
    Log(data="export started: ledger 1 of 3", level="info", logger="wt-kit-export"),
    Progress(progress=1, total=3, message="ledger 1 of 3", delay_s=0.2),
    Log(data="export slow: ledger 2 of 3", level="warning", logger="wt-kit-export", delay_s=0.2),
    Progress(progress=3, total=3, message="ledgers done", delay_s=0.2),
)
ASK_TIMEOUT_S = 8.0
"""How long the mock waits for the client to answer an elicitation or sampling request: far inside any
turn deadline, so a client that leaves it unanswered is seen as hanging within the check's seconds."""
APPROVAL_SCHEMA = {
    "type": "object",
    "properties": {"approve": {"type": "boolean", "description": "Approve the refund?"}},
    "required": ["approve"],
}
POLICY_URI = "wt://kit/refund-policy.md"
POLICY_TEXT = "# Refund policy\n\nRefunds within «30 days» need no approval ✓\n"
"""The media server's one resource (resources/list, resources/read): what a runtime that puts a server's
resources in the model's context must send it, byte for byte."""
SAMPLING_PROMPT = "Summarise in one line: refunds rose 4% in week 48."


def _asked(kind: str, replies: Sequence[Reply]) -> ToolResult:
    """The asking tools' result: what the client answered (or why it did not), as the model's text."""
    reply = replies[0] if replies else None
    if reply is None or reply.answer is None:
        why = reply.error if reply is not None else "no request was sent"
        return ToolResult(content=[Text(text=f"{kind}: no answer ({why})")])
    return ToolResult(content=[Text(text=f"{kind}: answered {json.dumps(reply.answer, sort_keys=True)}")])


def _snapshot(_state: dict[str, Any], _arguments: dict[str, Any]) -> ToolResult:
    return ToolResult(content=[Image(data=PNG, mime_type=PNG_TYPE)])


def _chart(_state: dict[str, Any], _arguments: dict[str, Any]) -> ToolResult:
    return ToolResult(content=[Text(text=CAPTION), Image(data=PNG, mime_type=PNG_TYPE), Text(text=SOURCE)])


def _handbook(_state: dict[str, Any], _arguments: dict[str, Any]) -> ToolResult:
    return ToolResult(
        content=[EmbeddedResource(uri=RESOURCE_URI, mime_type=RESOURCE_TYPE, text=RESOURCE_TEXT)]
    )


def _recording(_state: dict[str, Any], _arguments: dict[str, Any]) -> ToolResult:
    return ToolResult(content=[Audio(data=WAV, mime_type=WAV_TYPE)])


def _ledger_link(_state: dict[str, Any], _arguments: dict[str, Any]) -> ToolResult:
    link = ResourceLink(uri=LINK_URI, name=LINK_NAME, mime_type="text/csv", description="Week 48's refunds.")
    return ToolResult(content=[link])


def _export(_state: dict[str, Any], _arguments: dict[str, Any]) -> ToolResult:
    return ToolResult(content=[Text(text=EXPORT_TEXT)])


def _approval(_state: dict[str, Any], _arguments: dict[str, Any], replies: Sequence[Reply]) -> ToolResult:
    return _asked("elicitation", replies)


def _digest(_state: dict[str, Any], _arguments: dict[str, Any], replies: Sequence[Reply]) -> ToolResult:
    return _asked("sampling", replies)


def media_server() -> MockServer:
    empty = {"type": "object", "properties": {}}
    return MockServer(
        "media",
        [
            Tool(
                name="snapshot", description="Take a snapshot image.", input_schema=empty, handler=_snapshot
            ),
            Tool(
                name="chart",
                description="Draw the refunds chart, with its caption and source.",
                input_schema=empty,
                handler=_chart,
            ),
            Tool(
                name="handbook",
                description="Read the refund handbook.",
                input_schema=empty,
                handler=_handbook,
            ),
            Tool(
                name="recording",
                description="Play back the refund call recording.",
                input_schema=empty,
                handler=_recording,
            ),
            Tool(
                name="ledger",
                description="Link the week's refund ledger.",
                input_schema=empty,
                handler=_ledger_link,
            ),
            Tool(
                name="export",
                description="Export the refund ledgers (reports progress as it goes).",
                input_schema=empty,
                handler=_export,
                steps=EXPORT_STEPS,
            ),
            Tool(
                name="approval",
                description="Ask the user to approve the refund.",
                input_schema=empty,
                handler=_approval,
                steps=[
                    Elicit(message="Approve the refund?", schema=APPROVAL_SCHEMA, timeout_s=ASK_TIMEOUT_S)
                ],
            ),
            Tool(
                name="digest",
                description="Summarise the refunds (asks the client's model).",
                input_schema=empty,
                handler=_digest,
                steps=[Sample(prompt=SAMPLING_PROMPT, max_tokens=60, timeout_s=ASK_TIMEOUT_S)],
            ),
        ],
        {},
        resources=[
            Resource(uri=POLICY_URI, name="refund-policy", mime_type="text/markdown", text=POLICY_TEXT)
        ],
        # Steps (progress, logs, requests to the client) need sessions: Mcp-Session-Id and SSE responses.
        sessions=True,
    )


# No scenario: the mcp_client checks script their own single calls (windtunnel._conformance.checks_mcp_client).
PACK = Pack(name="wt-mcp-client", scenarios=[], mcp_servers={"media": media_server})
