"""Scripted tapes (windtunnel._tapes.scripted): the recorder marks a tape from the scripted upstream, such a
tape is exempt from the age limit only while its answers are its scenario's golden decisions, a live tape
keeps the 30-day rule, and the committed tapes stay valid on 2027-02-01 and after."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from windtunnel._chat.mode import ChatRequest
from windtunnel._gateway.script import ScriptMode
from windtunnel._packs.loader import load_pack
from windtunnel._packs.pack import Pack
from windtunnel._scenario.model import Scenario
from windtunnel._tapes.builder import TapeBuilder
from windtunnel._tapes.lifecycle import find_tapes, verify_tape, verify_tapes
from windtunnel._tapes.model import RecordedResponse, Tape
from windtunnel._tapes.policy import SCRIPTED_UPSTREAM, enforce_fresh, is_stale
from windtunnel._tapes.scripted import golden_case, scripted_problems
from windtunnel._tapes.store import write_tape
from windtunnel._wire.openai_chat_stream import chunks_from_completion

REPO = Path(__file__).resolve().parents[2]
RECORDED = datetime(2026, 12, 1, tzinfo=UTC)
CI_DAY = datetime(2027, 2, 1, tzinfo=UTC)
"""The day the acceptance sets the clock to: the committed tapes were recorded in December 2026."""


@pytest.fixture(scope="module")
def pack() -> Pack:
    return load_pack(str(REPO / "scenarios" / "support_desk"))


def scenario_of(pack: Pack, name: str) -> Scenario:
    return next(scenario for scenario in pack.scenarios if scenario.name == name)


def recorded(scenario: Scenario, *, upstream: str = SCRIPTED_UPSTREAM, stream: bool = False) -> Tape:
    """What the record gateway writes when the real script mode (the scripted upstream) answers each call."""
    case = golden_case(scenario)
    mode = ScriptMode()
    mode.store.install(case.name, case.decisions)
    builder = TapeBuilder("t", upstream=upstream, clock=lambda: RECORDED, lineage={"scenario": scenario.name})
    for turn in range(len(case.decisions)):
        body = {"model": "wt-scripted", "messages": [{"role": "user", "content": f"turn {turn}"}]}
        reply = asyncio.run(mode.complete(ChatRequest(method="POST", path="/v1/chat/completions", body=body)))
        assert reply.completion is not None
        response = (
            RecordedResponse(status=200, events=chunks_from_completion(reply.completion, include_usage=True))
            if stream
            else RecordedResponse(status=200, body=dict(reply.completion))
        )
        builder.add("POST", "/v1/chat/completions", body, response)
    return builder.build()


@pytest.mark.parametrize("stream", [False, True])
def test_a_tape_from_the_scripted_upstream_is_marked_and_its_mark_holds(pack: Pack, stream: bool) -> None:
    scenario = scenario_of(pack, "refund_after_clarifying")
    tape = recorded(scenario, stream=stream)
    assert tape.header.lineage.scripted
    assert scripted_problems(tape, scenario) == []
    years_later = datetime(2036, 1, 1, tzinfo=UTC)
    assert not is_stale(tape, lambda: years_later)
    assert enforce_fresh(tape, certification=True, clock=lambda: years_later) is None


def test_a_live_tape_is_not_marked_and_keeps_the_age_limit(pack: Pack) -> None:
    scenario = scenario_of(pack, "refund_after_clarifying")
    tape = recorded(scenario, upstream="https://api.example.test/v1")
    assert not tape.header.lineage.scripted and scripted_problems(tape, scenario) == []
    assert is_stale(tape, lambda: RECORDED + timedelta(days=31))
    assert not is_stale(tape, lambda: RECORDED + timedelta(days=29))


def forge(tape: Tape, **lineage: object) -> Tape:
    header = tape.header.model_copy(update={"lineage": tape.header.lineage.model_copy(update=lineage)})
    return Tape(header=header, interactions=tape.interactions, path=tape.path)


def test_a_live_tape_claiming_the_mark_fails_the_check_against_its_scenario(pack: Pack) -> None:
    scenario = scenario_of(pack, "refund_after_clarifying")
    live = recorded(scenario_of(pack, "refund_damaged_item"), upstream="https://api.example.test/v1")
    claimed = forge(live, scripted=True)
    assert (
        "it was recorded from https://api.example.test/v1, not the scripted upstream"
        in (scripted_problems(claimed, scenario)[0])
    )
    renamed = forge(live, scripted=True, upstream=SCRIPTED_UPSTREAM)  # the URL forged too
    problems = scripted_problems(renamed, scenario)
    assert problems and "is marked scripted (exempt from the age limit), but" in problems[0]
    assert "it was not recorded from" in problems[0]


def test_an_answer_that_differs_from_the_script_is_named(pack: Pack) -> None:
    scenario = scenario_of(pack, "refund_after_clarifying")
    tape = recorded(scenario)
    first = tape.interactions[0]
    body = dict(first.response.body)
    choice = dict(body["choices"][0])
    choice["message"] = {**choice["message"], "content": "a live model's own words", "tool_calls": None}
    body["choices"] = [choice]
    edited = first.model_copy(update={"response": RecordedResponse(status=200, body=body)})
    tampered = Tape(header=tape.header, interactions=(edited, *tape.interactions[1:]))
    (problem,) = scripted_problems(tampered, scenario)
    assert "answer seq 0 is not decision 0 of scenario 'refund_after_clarifying'" in problem


def test_a_scripted_tape_checked_through_its_pack_and_one_given_by_path(pack: Pack, tmp_path: Path) -> None:
    scenario = scenario_of(pack, "refund_after_clarifying")
    path = tmp_path / "t.jsonl"
    write_tape(forge(recorded(scenario_of(pack, "refund_damaged_item")), scenario=scenario.name), path)
    from windtunnel._tapes.lifecycle import TapeFile

    through_pack = verify_tape(TapeFile(path, pack.name, "reference", pack), clock=lambda: CI_DAY)
    assert any("is marked scripted" in problem for problem in through_pack.problems)
    by_path = verify_tape(TapeFile(path), clock=lambda: CI_DAY)
    assert by_path.ok and any("checked against its scenario only when" in w for w in by_path.warnings)


@pytest.mark.parametrize(
    "clock", [CI_DAY, datetime(2030, 6, 1, tzinfo=UTC)], ids=["2027-02-01", "2030-06-01"]
)
def test_every_committed_tape_is_scripted_and_verifies_on_a_later_day(clock: datetime) -> None:
    packs = [load_pack(str(REPO / "scenarios" / name)) for name in ("support_desk", "artifacts")]
    checks = verify_tapes(find_tapes(packs), clock=lambda: clock)
    # five per runtime with tapes: reference, openai-agents(-chat), pydantic-ai, langgraph, codex, claude-agent-sdk
    assert len(checks) == 35
    for check in checks:
        assert check.tape is not None and check.tape.header.lineage.scripted, check.file.path
        assert check.ok and not check.stale and check.expires_at is None, (check.file.path, check.problems)
