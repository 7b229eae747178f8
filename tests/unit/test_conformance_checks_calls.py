"""raw_tool_call_shapes' comparison: the reported calls must equal the emitted ones pairwise, in order."""

from __future__ import annotations

import json
from typing import Any

from windtunnel._conformance.checks_calls import RAW_SCRIPT, TRICKY, _first_difference
from windtunnel._wire.openai_chat import decision_message


def _emitted() -> list[dict[str, Any]]:
    """The calls the gateway serves for the kit's script, exactly as it sends them."""
    return [c for decision in RAW_SCRIPT for c in decision_message(decision).get("tool_calls") or []]


def _flat(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"])} for c in calls
    ]


def test_the_script_is_not_alphabetical_and_repeats_tools() -> None:
    names = [c["function"]["name"] for c in _emitted()]
    assert names != sorted(names) and len(set(names)) < len(names)


def test_an_exact_report_in_either_shape_passes() -> None:
    emitted = _emitted()
    assert _first_difference(emitted, _flat(emitted)) is None
    assert _first_difference(emitted, [dict(c) for c in emitted]) is None  # wire shape, text untouched


def test_sorted_dropped_empty_and_rewritten_reports_fail() -> None:
    emitted, flat = _emitted(), _flat(_emitted())
    by_name = sorted(flat, key=lambda c: c["name"])
    assert "reported call 0 is 'echo'" in (_first_difference(emitted, by_name) or "")
    assert "4 tool calls reported for the 5" in (_first_difference(emitted, flat[:-1]) or "")
    assert "0 tool calls reported" in (_first_difference(emitted, []) or "")
    reordered = [dict(c) for c in flat]
    reordered[1] = {"name": "echo", "arguments": dict(sorted(TRICKY.items()))}
    assert "reported call 1 (echo) has arguments" in (_first_difference(emitted, reordered) or "")
    respaced = [dict(c) for c in emitted]  # the same JSON spelled with other spacing is the same call
    function = dict(respaced[2]["function"], arguments='{"key":"alpha"}')
    respaced[2] = {**respaced[2], "function": function}
    assert _first_difference(emitted, respaced) is None
