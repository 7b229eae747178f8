"""The conformance kit's own pack: a small notes service whose calls and arguments the checks inspect."""

from __future__ import annotations

import time
from typing import Any

# Inside the library, the kit's pack imports the private modules a pack author reaches through
# windtunnel.api: nothing inside src imports the public doors (docs/design.md, "Layers").
from windtunnel._core.mock_kit import InvalidParams, MockServer, Tool, ToolError
from windtunnel._core.mock_surface import Text, ToolResult
from windtunnel._packs.kitpack.documents import SIZES, document
from windtunnel._packs.pack import Pack, mock_state_probe
from windtunnel._scenario.model import Scenario


def _lookup(state: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    if arguments["key"] not in state["notes"]:
        raise ToolError(f"no note {arguments['key']}")
    return {"key": arguments["key"], "value": state["notes"][arguments["key"]]}


def _store(state: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    state["notes"][arguments["key"]] = arguments["value"]
    return {"stored": arguments["key"]}


def _echo(state: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    state["echoes"] += 1
    return {"echo": arguments}


def _strict(_state: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    # Refuses every request as invalid: the tool_errors check's JSON-RPC error (-32602).
    raise InvalidParams(f"strict refuses {sorted(arguments)}: the request is invalid")


def _document(_state: dict[str, Any], arguments: dict[str, Any]) -> ToolResult:
    # One text block, no structured content: the text is what a runtime must hand the model, byte for byte.
    return ToolResult(content=[Text(text=document(arguments["name"]))])


PAUSE_CAP_S = 10.0


def _pause(_state: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    # Holds the call (not the mock: the tool is blocking=True) while the recovery check kills the runtime.
    seconds = min(float(arguments.get("seconds", 1.0)), PAUSE_CAP_S)
    time.sleep(max(seconds, 0.0))
    return {"paused": seconds}


def notes_server() -> MockServer:
    key = {"type": "string"}
    return MockServer(
        "notes",
        [
            Tool(
                name="lookup",
                description="Read a note by key.",
                input_schema={"type": "object", "properties": {"key": key}, "required": ["key"]},
                handler=_lookup,
            ),
            Tool(
                name="store",
                description="Write a note under a key.",
                input_schema={
                    "type": "object",
                    "properties": {"key": key, "value": {}},
                    "required": ["key", "value"],
                },
                handler=_store,
            ),
            Tool(
                name="echo",
                description="Echo the arguments back.",
                input_schema={"type": "object"},
                handler=_echo,
            ),
            Tool(
                name="strict",
                description="Check a request; answers a JSON-RPC error for an invalid one.",
                input_schema={"type": "object"},
                handler=_strict,
            ),
            Tool(
                name="read_document",
                description="Read a long document by name.",
                input_schema={
                    "type": "object",
                    "properties": {"name": {"type": "string", "enum": sorted(SIZES)}},
                    "required": ["name"],
                },
                handler=_document,
            ),
            Tool(
                name="pause",
                description="Wait a few seconds, then answer.",
                input_schema={"type": "object", "properties": {"seconds": {"type": "number"}}},
                handler=_pause,
                blocking=True,
            ),
        ],
        {"notes": {"alpha": "first note"}, "echoes": 0},
    )


PACK = Pack(
    name="wt-conformance",
    scenarios=[
        Scenario(
            name="two_step",
            prompt="Copy note alpha into note beta.",
            target_facts=[["copied"]],
            requires_tool_use=True,
            must_call=["lookup", "store"],
        ),
    ],
    mcp_servers={"notes": notes_server},
    state_probe_factory=mock_state_probe,
)
