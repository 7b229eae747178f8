"""The codex runtime without a container: a CLI that cannot start is refused with its own last lines, and
`codex exec --json` events (as Codex 0.171.0 printed them in a trial against the gateway) become the turn."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from windtunnel_inject import SettingsError, TurnFailed

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cx_runtime.agent import check_cli, read_events

TOOL = {"id": "item_1", "type": "mcp_tool_call", "server": "orders", "tool": "lookup_order"}
TRIAL = [
    {"type": "thread.started", "thread_id": "01a24826-d75d-7ce3-8292-512e5a50c117"},
    {
        "type": "item.completed",
        "item": {"id": "item_0", "type": "error", "message": "Model metadata not found"},
    },
    {"type": "turn.started"},
    {"type": "item.started", "item": {**TOOL, "arguments": {"order_id": "A-1042"}, "status": "in_progress"}},
    {"type": "item.completed", "item": {**TOOL, "arguments": {"order_id": "A-1042"}, "status": "completed"}},
    {
        "type": "item.completed",
        "item": {"id": "item_2", "type": "agent_message", "text": "Your mug shipped."},
    },
    {
        "type": "turn.completed",
        "usage": {"input_tokens": 20906, "cached_input_tokens": 0, "output_tokens": 91},
    },
]


def lines(events: list[dict[str, object]]) -> list[str]:
    return [json.dumps(event) for event in events]


def test_a_cli_that_cannot_start_is_refused_with_its_own_last_lines(tmp_path: Path) -> None:
    broken = tmp_path / "codex"
    broken.write_text("#!/bin/sh\necho 'error while loading shared libraries: libfoo.so' >&2\nexit 127\n")
    broken.chmod(0o755)
    with pytest.raises(SettingsError, match=r"exited 127: error while loading shared libraries: libfoo\.so"):
        check_cli(str(broken))
    with pytest.raises(SettingsError, match=r"cannot start"):
        check_cli(str(tmp_path / "missing"))


def test_the_trial_events_become_the_turn_the_model_made() -> None:
    turn, thread_id = read_events([*lines(TRIAL), "a plain line Codex printed"], 0, "")
    assert thread_id == "01a24826-d75d-7ce3-8292-512e5a50c117"
    assert turn.content == "Your mug shipped."
    assert turn.tool_calls == [{"name": "lookup_order", "arguments": {"order_id": "A-1042"}}]
    assert turn.usage is not None
    assert (turn.usage["input_tokens"], turn.usage["output_tokens"]) == (20906, 91)


def test_a_failed_turn_says_the_gateways_words_once() -> None:
    said = "unexpected status 422: script exhausted"
    failed = [
        *TRIAL[:3],
        {"type": "error", "message": said},
        {"type": "turn.failed", "error": {"message": said}},
    ]
    with pytest.raises(TurnFailed) as caught:
        read_events(lines(failed), 1, "")
    assert str(caught.value) == said


def test_an_exit_without_a_finished_turn_fails_with_the_clis_last_lines() -> None:
    with pytest.raises(TurnFailed, match=r"codex exited 2 without finishing the turn: .*bad config"):
        read_events(lines(TRIAL[:3]), 2, "loading config\nbad config key")
