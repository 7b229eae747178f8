"""The mcp_client checks' own pack: a media service whose tool results hold content beyond text.

Every result is fixed data (docs/conformance.md, "MCP client"): what a runtime's MCP client must hand the
model is known byte for byte before the call, so a check compares it with what the model was sent.
"""

from __future__ import annotations

import base64
from typing import Any

# Inside the library, the pack imports the private modules a pack author reaches through windtunnel.api.
from windtunnel._core.mock_kit import MockServer, Tool
from windtunnel._core.mock_surface import EmbeddedResource, Image, Text, ToolResult
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


def _snapshot(_state: dict[str, Any], _arguments: dict[str, Any]) -> ToolResult:
    return ToolResult(content=[Image(data=PNG, mime_type=PNG_TYPE)])


def _chart(_state: dict[str, Any], _arguments: dict[str, Any]) -> ToolResult:
    return ToolResult(content=[Text(text=CAPTION), Image(data=PNG, mime_type=PNG_TYPE), Text(text=SOURCE)])


def _handbook(_state: dict[str, Any], _arguments: dict[str, Any]) -> ToolResult:
    return ToolResult(
        content=[EmbeddedResource(uri=RESOURCE_URI, mime_type=RESOURCE_TYPE, text=RESOURCE_TEXT)]
    )


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
        ],
        {},
    )


# No scenario: the mcp_client checks script their own single calls (windtunnel._conformance.checks_mcp_client).
PACK = Pack(name="wt-mcp-client", scenarios=[], mcp_servers={"media": media_server})
