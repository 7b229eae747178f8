"""A scripted tool name resolves to the one offered tool it stands for, and maps back to the mock's name."""

from __future__ import annotations

import pytest

from windtunnel._wire.tools import ToolNameError, bare, resolve

OFFERED = ["mcp__notes__lookup", "mcp__notes__store", "mcp__files__read"]


def test_an_exact_or_uniquely_qualified_name_resolves() -> None:
    assert resolve("lookup", OFFERED) == "mcp__notes__lookup"
    assert resolve("mcp__files__read", OFFERED) == "mcp__files__read"
    assert resolve("lookup", ["lookup", "mcp__notes__lookup"]) == "lookup", "an exact match wins"
    assert resolve("lookup", []) == "lookup", "nothing offered: the name goes out as scripted"


def test_several_matches_name_the_offered_tools() -> None:
    with pytest.raises(ToolNameError, match=r"several offered tools \(mcp__a__read, mcp__b__read; offered: "):
        resolve("read", ["mcp__a__read", "mcp__b__read", "mcp__a__write"])


def test_an_invented_tool_goes_out_as_scripted() -> None:
    """A case may script a tool nobody offered: the model invents it, and the runtime must cope."""
    assert resolve("teleport", OFFERED) == "teleport"


def test_bare_strips_only_the_mcp_qualifier() -> None:
    assert bare("mcp__notes__lookup") == "lookup"
    assert bare("mcp__notes__deep__name") == "deep__name"
    assert bare("lookup") == "lookup"
    assert bare("my__tool") == "my__tool"
