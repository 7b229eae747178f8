"""The mock `nox -s mcp_conformance` serves: the tools the official suite calls by name, as a pack declares them.

The suite's tools/call scenarios call fixed tool names (the "everything server" of its README). These are
ordinary pack tools served by the ordinary mock (`wt mcp serve`), so the suite exercises exactly the code
every pack's mock runs: tools/list relays each input schema untouched, a result is JSON text with
structuredContent, a ToolError is an isError result, and a name that is not here is JSON-RPC -32602.
"""

from __future__ import annotations

from typing import Any

from windtunnel.api import MockServer, Pack, Tool, ToolError

NO_ARGUMENTS: dict[str, Any] = {"type": "object", "properties": {}}
# The scenario json-schema-2020-12 checks that $schema, $defs and additionalProperties reach the client.
SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
    "additionalProperties": False,
}


def _simple_text(_state: dict[str, Any], _arguments: dict[str, Any]) -> str:
    return "This is a simple text response for testing."


def _error(_state: dict[str, Any], _arguments: dict[str, Any]) -> None:
    raise ToolError("This tool intentionally returns an error for testing")


def _echo(_state: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    return {"received": arguments}


def everything_server() -> MockServer:
    return MockServer(
        "everything",
        [
            Tool(
                name="test_simple_text",
                description="Returns a simple text.",
                input_schema=NO_ARGUMENTS,
                handler=_simple_text,
            ),
            Tool(
                name="test_error_handling",
                description="Always fails with a tool error.",
                input_schema=NO_ARGUMENTS,
                handler=_error,
            ),
            Tool(
                name="json_schema_2020_12_tool",
                description="Tool with JSON Schema 2020-12 features",
                input_schema=SCHEMA_2020_12,
                handler=_echo,
            ),
        ],
    )


PACK = Pack(name="mcp-conformance", scenarios=[], mcp_servers={"everything": everything_server})
