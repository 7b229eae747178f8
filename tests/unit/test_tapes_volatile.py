"""Volatile-field rule sets (windtunnel._tapes.volatile): what v2 removes (the date a harness stamps into a
line naming today's date, a tool-timing line's number, Responses input item ids) and v3 (the OS version a
harness puts in its environment context), what they keep, v1 left as it was, and replay hashing live
requests with the rule set its tape names."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from windtunnel._tapes.builder import TapeBuilder
from windtunnel._tapes.errors import TapeMismatch
from windtunnel._tapes.fingerprint import VOLATILE_RULES, fingerprint, request_parts
from windtunnel._tapes.model import RecordedResponse, Tape
from windtunnel._tapes.replay import ReplayMode
from windtunnel._tapes.store import load_tape
from windtunnel._tapes.volatile import V1, V2, V3, normalised

UPSTREAM = "http://127.0.0.1:9/v1"
RECORDED = datetime(2030, 6, 1, tzinfo=UTC)
MESSAGES, RESPONSES = "/v1/messages", "/v1/responses"


def claude_body(day: str, kernel: str = "6.18.44-fc-v1272") -> dict[str, Any]:
    """A Messages request the way Claude Code sends its environment context: a date line among others."""
    context = (
        f"Working directory: /tmp/w\n - OS Version: Linux {kernel}\nToday's date is {day}.\n"
        "The order was placed on 2026-11-25."
    )
    return {
        "model": "m",
        "system": [{"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.332"}],
        "messages": [
            {"role": "user", "content": "refund B-2001"},
            {"role": "system", "content": context},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_1", "name": "t", "input": {}}],
            },
        ],
    }


def codex_body(day: str, seconds: str, ids: tuple[str, str] = ("msg_a", "fco_a")) -> dict[str, Any]:
    """A Responses request the way Codex sends it: per-run item ids, a current_date tag, a timed result."""
    context = f"<environment_context>\n  <current_date>{day}</current_date>\n</environment_context>"
    output = f'Wall time: {seconds} seconds\nOutput:\n{{"ordered_on":"2026-11-25","took":"0.5 seconds"}}'
    return {
        "model": "m",
        "input": [
            {
                "type": "message",
                "id": ids[0],
                "role": "user",
                "content": [{"type": "input_text", "text": context}],
            },
            {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "t", "arguments": "{}"},
            {"type": "function_call_output", "id": ids[1], "call_id": "call_1", "output": output},
        ],
    }


def key(path: str, body: dict[str, Any], rules: str = VOLATILE_RULES) -> str:
    return fingerprint(request_parts("POST", UPSTREAM, path, body, rules=rules))


def test_v3_is_what_new_tapes_are_hashed_with() -> None:
    assert VOLATILE_RULES == V3


def test_v3_masks_the_os_version_a_harness_names_and_v2_does_not() -> None:
    assert key(MESSAGES, claude_body("d", "6.18.44-fc-v1272")) == key(MESSAGES, claude_body("d", "6.1.0-28"))
    text = normalised(claude_body("d"))["messages"][1]["content"]
    assert " - OS Version: <os>\n" in text and "Working directory: /tmp/w" in text
    assert key(MESSAGES, claude_body("d", "a"), V2) != key(MESSAGES, claude_body("d", "b"), V2)
    assert normalised({"instructions": "Our OS version is the one you asked about"}) == {
        "instructions": "Our OS version is the one you asked about"  # no colon: not a version line
    }


def test_v2_masks_the_date_a_harness_stamps_and_keeps_every_other_date() -> None:
    assert key(MESSAGES, claude_body("2026-12-06")) == key(MESSAGES, claude_body("2027-02-01"))
    text = normalised(claude_body("2026-12-06"))["messages"][1]["content"]
    assert "Today's date is <date>." in text and "placed on 2026-11-25" in text  # scenario data stays
    assert key(RESPONSES, codex_body("2026-12-06", "0.0249")) == key(
        RESPONSES, codex_body("2030-01-01", "1.5")
    )
    item = normalised(codex_body("2026-12-06", "0.0249"))["input"][0]
    assert "<current_date><date></current_date>" in item["content"][0]["text"]


def test_v2_masks_only_a_tool_timing_lines_number() -> None:
    output = normalised(codex_body("2026-12-06", "0.0249"))["input"][2]["output"]
    assert output.startswith("Wall time: <n> seconds\nOutput:\n")
    assert '"took":"0.5 seconds"' in output  # a timing inside the result is the result's
    for line, masked in [
        ("Elapsed: 12 ms", "Elapsed: <n> ms"),
        ("Duration: 1.5 s", "Duration: <n> s"),
        ("Elapsed time: 3 seconds", "Elapsed time: <n> seconds"),
        ("Wall time: 3 apples", "Wall time: 3 apples"),  # not a timing
    ]:
        assert normalised({"instructions": line}) == {"instructions": masked}


def test_v2_drops_the_ids_of_responses_input_items_and_keeps_call_ids_and_tool_use_ids() -> None:
    assert key(RESPONSES, codex_body("d", "1", ("msg_a", "fco_a"))) == key(
        RESPONSES, codex_body("d", "1", ("msg_b", "fco_b"))
    )
    items = normalised(codex_body("d", "1"))["input"]
    assert all("id" not in item for item in items) and items[2]["call_id"] == "call_1"
    other = codex_body("d", "1")
    other["input"][2]["call_id"] = "call_2"  # a result handed to another call is another request
    assert key(RESPONSES, other) != key(RESPONSES, codex_body("d", "1"))
    assert normalised(claude_body("d"))["messages"][2]["content"][0]["id"] == "toolu_1"


def test_v1_is_unchanged_dates_timings_and_ids_count() -> None:
    assert key(MESSAGES, claude_body("2026-12-06"), V1) != key(MESSAGES, claude_body("2027-02-01"), V1)
    assert key(RESPONSES, codex_body("d", "1"), V1) != key(RESPONSES, codex_body("d", "2"), V1)
    kept = normalised(claude_body("2026-12-06"), V1)
    assert kept["system"][0]["text"] == "" and "Today's date is 2026-12-06." in kept["messages"][1]["content"]


def tape(path: str, body: dict[str, Any], rules: str | None = None) -> Tape:
    builder = TapeBuilder("t", upstream=UPSTREAM, clock=lambda: RECORDED)
    builder.add("POST", path, body, RecordedResponse(status=200, body={"id": "r", "model": "m"}))
    built = builder.build()
    if rules is None:
        return built
    return Tape(
        header=built.header.model_copy(update={"volatile_rules": rules}), interactions=built.interactions
    )


def test_replay_hashes_a_live_request_with_the_rule_set_its_tape_names() -> None:
    recorded = tape(MESSAGES, claude_body("2026-12-06"))
    assert recorded.header.volatile_rules == V3
    ReplayMode(recorded, clock=lambda: RECORDED).match("POST", MESSAGES, claude_body("2027-02-01"))
    # A tape recorded under v1 whose request v1 and v2 store alike (no ids, dates or timings) is hashed
    # with v1 on replay: the same request with per-run item ids does not match it, as it never did under v1.
    live = codex_body("d", "1")
    live["input"][2]["output"] = "ok"
    bare = {**live, "input": [{k: v for k, v in item.items() if k != "id"} for item in live["input"]]}
    ReplayMode(tape(RESPONSES, bare, rules=V1), clock=lambda: RECORDED).match("POST", RESPONSES, bare)
    with pytest.raises(TapeMismatch):
        ReplayMode(tape(RESPONSES, bare, rules=V1), clock=lambda: RECORDED).match("POST", RESPONSES, live)
    ReplayMode(tape(RESPONSES, bare), clock=lambda: RECORDED).match("POST", RESPONSES, live)


REPO = Path(__file__).resolve().parents[2]
HARNESS_TAPES = sorted(
    path
    for runtime in ("claude-agent-sdk", "codex")
    for path in REPO.glob(f"scenarios/*/tapes/{runtime}/*.jsonl")
)


@pytest.mark.parametrize("path", HARNESS_TAPES, ids=lambda path: path.name.split("-")[0])
def test_a_committed_harness_tape_matches_its_requests_sent_on_another_day(path: Path) -> None:
    """The committed Claude Code and Codex tapes hold the stamped date (and Claude Code's OS version) masked:
    the same requests sent on another day and machine, with other timings and item ids, hash to the recorded
    fingerprints."""
    recorded = load_tape(path)
    dated = 0
    for interaction in recorded.interactions:
        request = interaction.request.model_dump(mode="json")
        text = json.dumps(request["body"])
        dated += "<date>" in text
        assert "OS Version: <os>" in text or "OS Version" not in text, "a machine's kernel in a tape"
        later = json.loads(
            text.replace("<date>", "2031-01-02")
            .replace("Wall time: <n>", "Wall time: 0.5")
            .replace("OS Version: <os>", "OS Version: Linux 7.0.1-other")
        )
        if isinstance(later.get("input"), list):
            later["input"] = [{**item, "id": f"msg_{n}"} for n, item in enumerate(later["input"])]
        parts = request_parts(
            "POST", request["upstream"], request["path"], later, rules=recorded.header.volatile_rules or V2
        )
        assert fingerprint(parts) == fingerprint(request), interaction.seq
    assert dated, "each harness stamps today's date into its prompt"
