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


def test_no_match_or_several_name_the_offered_tools() -> None:
    with pytest.raises(ToolNameError, match=r"did not offer .*mcp__notes__lookup, mcp__notes__store"):
        resolve("delete", OFFERED)
    with pytest.raises(ToolNameError, match=r"several offered tools .*mcp__a__read, mcp__b__read"):
        resolve("read", ["mcp__a__read", "mcp__b__read"])


def test_bare_strips_only_the_mcp_qualifier() -> None:
    assert bare("mcp__notes__lookup") == "lookup"
    assert bare("mcp__notes__deep__name") == "deep__name"
    assert bare("lookup") == "lookup"
    assert bare("my__tool") == "my__tool"
