"""`wt doctor`'s tools step: every mock of a pack lists its tools, and the runtime itself can call them.

A reference-capable runtime gets a scripted model reply that calls one tool of every mock (arguments made
from the tool's input schema); each mock must then have received that call, which proves the runtime's
tool wiring end to end. A runtime without the inference seam would need a live model to call anything,
so its tools are only listed from Wind Tunnel's side, and the step says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from windtunnel._core.abilities import ToolListingMCPHandle
from windtunnel._core.agent_runtime import (
    AgentConfig,
    AgentRuntime,
    MCPHandle,
    RecordingMCPHandle,
    ReferenceCapableAgentRuntime,
)
from windtunnel._core.reference import ReferenceCase, ReferenceDecision, ReferenceToolCall
from windtunnel._packs.pack import Pack
from windtunnel._runner.lifecycle import provisioned, started_mcps, with_mcp_specs
from windtunnel.errors import WindTunnelError

CALLED = "Every tool answered."
PLACEHOLDERS: Mapping[str, Any] = {
    "string": "wt-doctor",
    "integer": 1,
    "number": 1,
    "boolean": False,
    "array": [],
    "object": {},
}


def tools_step(runtime: AgentRuntime, packs: Sequence[Pack]) -> list[str]:
    lines = []
    for pack in packs:
        with started_mcps(runtime, pack.plans()) as mcps:
            listed = {handle.name: _listed(handle) for handle in mcps}
            for server, tools in listed.items():
                if not tools:
                    raise WindTunnelError(
                        f"{pack.name}/{server} lists no tools", hint="check the pack's mcp_servers"
                    )
            if isinstance(runtime, ReferenceCapableAgentRuntime) and mcps:
                lines += _called_through(runtime, pack, mcps, listed)
            else:
                lines += [
                    f"{pack.name}/{server}: {', '.join(t['name'] for t in tools)} (listed by Wind Tunnel; calling "
                    "them through the runtime needs a live model)"
                    for server, tools in listed.items()
                ]
    return lines or ["no pack declares MCP mocks"]


def _listed(handle: MCPHandle) -> list[dict[str, Any]]:
    """The mock's tools, asked of the mock itself when it can say, else over MCP at the agent's URL."""
    if isinstance(handle, ToolListingMCPHandle):
        found = list(handle.tools())
    else:
        from windtunnel._mcp.client import list_tools

        found = list_tools(handle.url)
    return sorted(found, key=lambda tool: str(tool["name"]))


def _called_through(
    runtime: ReferenceCapableAgentRuntime,
    pack: Pack,
    mcps: Sequence[MCPHandle],
    listed: Mapping[str, list[dict[str, Any]]],
) -> list[str]:
    """One scripted model call asks for the first tool of every mock; each mock must receive its call."""
    chosen = {server: tools[0] for server, tools in listed.items()}
    calls = tuple(ReferenceToolCall(t["name"], sample_arguments(_schema(t))) for t in chosen.values())
    case = ReferenceCase(
        name="doctor-tools",
        kind="golden",
        decisions=(ReferenceDecision(tool_calls=calls), ReferenceDecision(content=CALLED)),
    )
    config = with_mcp_specs(AgentConfig(), mcps)
    with provisioned(runtime, config, mcps, runtime_name="doctor", case=case) as handle:
        handle.reset_state()
        handle.send([{"role": "user", "content": "Call each tool once."}], "wt-doctor-tools")
    lines = []
    for mcp in mcps:
        tool = chosen[mcp.name]["name"]
        received = [c.get("name") for c in _calls(mcp)]
        if tool not in received:
            raise WindTunnelError(
                f"{pack.name}/{mcp.name}: the model asked the runtime to call {tool!r}, but the mock received "
                f"{received or 'no call'}",
                hint="the runtime does not reach this MCP server: check how it mounts WT_MCP_SERVERS",
            )
        lines.append(
            f"{pack.name}/{mcp.name}: {tool} called through the runtime ({len(listed[mcp.name])} listed)"
        )
    return lines


def _schema(tool: Mapping[str, Any]) -> Mapping[str, Any]:
    schema = tool.get("inputSchema") or tool.get("input_schema") or {}
    return schema if isinstance(schema, Mapping) else {}


def _calls(mcp: MCPHandle) -> list[dict[str, Any]]:
    return list(mcp.calls()) if isinstance(mcp, RecordingMCPHandle) else []


def sample_arguments(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments that satisfy a simple JSON schema's required properties (first enum value, else a
    placeholder of the property's type), so SDKs that validate arguments still send the call."""
    properties = schema.get("properties") or {}
    required = [name for name in schema.get("required") or [] if isinstance(name, str)]
    return {name: _value(properties.get(name) or {}) for name in required}


def _value(schema: Mapping[str, Any]) -> Any:
    if schema.get("enum"):
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "object":
        return sample_arguments(schema)
    return PLACEHOLDERS.get(str(kind), "wt-doctor")
