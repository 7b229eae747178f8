"""Tool names: a script names a tool as the pack does; a harness offers it qualified. Resolve, and map back.

Claude Code offers an MCP tool `lookup` of server `notes` as `mcp__notes__lookup`; Codex offers it inside a
namespace `mcp__notes`. A decision's bare name resolves to the one offered tool that is it: an exact match
first, else the one whose qualified name ends in `__<name>`. Several is a ToolNameError naming them and the
fix. None goes out as scripted: that is a model inventing a tool, which cases script on purpose (the
runtime must feed an "unknown tool" error back, and the trace lists the call under unknown_tool_calls), so
it cannot be refused; the gateway's log names what was offered, and the three views flag the call.
"""

from __future__ import annotations

from collections.abc import Sequence

QUALIFIER = "__"
"""Claude Code's (and Codex's namespace) separator: mcp__<server>__<tool>."""


class ToolNameError(ValueError):
    """A scripted tool name that more than one offered tool answers to."""


def resolve(name: str, offered: Sequence[str]) -> str:
    """The offered (qualified) name the script's `name` stands for; `name` itself when none is."""
    if name in offered:
        return name
    matches = [tool for tool in offered if tool.endswith(QUALIFIER + name)]
    if len(matches) > 1:
        raise ToolNameError(
            f"the script calls tool {name!r}, which matches several offered tools ({', '.join(matches)}; "
            f"offered: {', '.join(offered)}): name it qualified in the script, e.g. {matches[0]!r}"
        )
    # One match is the tool; none is a tool the model invents (see the module docstring).
    return matches[0] if matches else name


def bare(name: str) -> str:
    """The mock's own name of a tool as a model emitted it: mcp__notes__lookup -> lookup."""
    if name.startswith("mcp" + QUALIFIER) and name.count(QUALIFIER) >= 2:
        return name.split(QUALIFIER, 2)[2]
    return name
