"""Tool names: a script names a tool as the pack does; a harness offers it qualified. Resolve, and map back.

Claude Code offers an MCP tool `lookup` of server `notes` as `mcp__notes__lookup`; Codex offers it inside a
namespace `mcp__notes`. A decision's bare name resolves to the one offered tool that is it: an exact match
first, else the one whose qualified name ends in `__<name>`. None or several is a ToolNameError naming
the offered tools (a case that names a tool the harness did not offer is a case bug, not a model decision).
"""

from __future__ import annotations

from collections.abc import Sequence

QUALIFIER = "__"
"""Claude Code's (and Codex's namespace) separator: mcp__<server>__<tool>."""


class ToolNameError(ValueError):
    """A scripted tool name that no offered tool, or more than one, answers to."""


def resolve(name: str, offered: Sequence[str]) -> str:
    """The offered (qualified) name the script's `name` stands for."""
    if name in offered or not offered:
        # No tools offered: the harness keeps tools elsewhere (or the case is text-only); emit as scripted.
        return name
    matches = [tool for tool in offered if tool.endswith(QUALIFIER + name)]
    if len(matches) == 1:
        return matches[0]
    listed = ", ".join(offered)
    if not matches:
        raise ToolNameError(
            f"the script calls tool {name!r}, which the request did not offer (offered: {listed})"
        )
    raise ToolNameError(
        f"the script calls tool {name!r}, which matches several offered tools ({', '.join(matches)}); "
        "name it qualified in the script"
    )


def bare(name: str) -> str:
    """The mock's own name of a tool as a model emitted it: mcp__notes__lookup -> lookup."""
    if name.startswith("mcp" + QUALIFIER) and name.count(QUALIFIER) >= 2:
        return name.split(QUALIFIER, 2)[2]
    return name
