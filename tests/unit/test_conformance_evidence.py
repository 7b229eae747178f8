"""Reading check evidence: whose fault a failed run is, and whether tool results pair with their calls."""

from __future__ import annotations

from typing import Any

import pytest

from windtunnel._conformance.evidence import raise_for_run_error, tool_id_problems
from windtunnel._conformance.model import CheckFailed
from windtunnel._trace.models import ErrorKind, Trace, TraceError
from windtunnel._trace.shapes import offered_tool_names, said
from windtunnel.errors import HarnessError


def chat_items(messages: list[Any]) -> list[Any]:
    """A chat conversation as the checks read it from the gateway log."""
    return said({"messages": messages})


def _assistant(*ids: str) -> dict[str, Any]:
    calls = [{"id": i, "type": "function", "function": {"name": "lookup", "arguments": "{}"}} for i in ids]
    return {"role": "assistant", "content": None, "tool_calls": calls}


def _tool(call_id: str | None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "tool", "content": "{}"}
    if call_id is not None:
        message["tool_call_id"] = call_id
    return message


USER = {"role": "user", "content": "go"}


def test_paired_results_have_no_problem() -> None:
    messages = [USER, _assistant("a", "b"), _tool("b"), _tool("a"), _assistant("c"), _tool("c")]
    assert tool_id_problems(chat_items(messages)) == []


@pytest.mark.parametrize(
    ("messages", "found"),
    [
        ([USER, _assistant("a"), _tool(None)], "answers call id None"),
        ([USER, _assistant("a"), _tool("z")], "answers call id 'z'"),
        ([USER, _assistant("a", "b"), _tool("a")], "call 'b'"),
        ([USER, _assistant("a"), _tool("a"), _tool("a")], "a second tool result"),
        ([USER, _tool("a")], "did not call"),
        ([USER, _assistant("a"), USER, _tool("a")], "call 'a'"),
        ([USER, {"role": "assistant", "tool_calls": [{"function": {"name": "x"}}]}], "without an id"),
    ],
)
def test_unpaired_results_are_named(messages: list[dict[str, Any]], found: str) -> None:
    problems = tool_id_problems(chat_items(messages))
    assert problems and any(found in problem for problem in problems), problems


def _trace(kind: ErrorKind | None, cause: str | None = None) -> Trace:
    error = TraceError(kind=kind, message="it broke", cause=cause) if kind else None
    return Trace(
        run_id="r",
        scenario="s",
        pack=None,
        runtime="rt",
        agent_id="a",
        variant_id="v",
        session_id="x",
        started_at="now",
        error=error,
    )


@pytest.mark.parametrize("kind", [ErrorKind.SETUP, ErrorKind.MCP_EVIDENCE, ErrorKind.PROBE_CAPTURE])
def test_wind_tunnels_own_failures_are_harness_errors(kind: ErrorKind) -> None:
    with pytest.raises(HarnessError, match=r"Wind Tunnel's .* step failed: it broke"):
        raise_for_run_error(_trace(kind))


def test_runtime_failures_and_failed_wipes_count_against_the_runtime() -> None:
    with pytest.raises(CheckFailed, match="runtime"):
        raise_for_run_error(_trace(ErrorKind.RUNTIME))
    with pytest.raises(CheckFailed, match="setup"):
        raise_for_run_error(_trace(ErrorKind.SETUP, cause="ResetFailedError"))


def test_integrity_errors_and_clean_runs_are_left_to_the_check() -> None:
    raise_for_run_error(_trace(ErrorKind.INTEGRITY))
    raise_for_run_error(_trace(None))


def test_message_text_and_offered_tools() -> None:
    parts = {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
    assert [item.text for item in said({"messages": [parts, {"role": "user", "content": None}]})] == [
        "a\nb",
        "",
    ]
    request = {"tools": [{"type": "function", "function": {"name": "lookup"}}, {"type": "other"}]}
    assert offered_tool_names(request) == ["lookup"]
