"""`wt tapes record` without containers: which scenarios it picks, and a refresh superseding older golden tapes.

Recording through a runtime runs real containers: tests/integration/test_tapes_containers.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from windtunnel._gateway.upstream_key import KEY_PATH
from windtunnel._packs.loader import load_pack
from windtunnel._tape_runs.containers import (
    agent_config,
    record_spec,
    replay_spec,
)
from windtunnel._tape_runs.recording import selected_scenarios
from windtunnel._tapes.promotion import supersede
from windtunnel._tapes.scripted import golden_case
from windtunnel.errors import SelectionError, UsageError
from windtunnel.spi import AgentConfig

REPO = Path(__file__).resolve().parents[2]
DIGEST_A, DIGEST_B = "a" * 64, "b" * 64


def test_a_refresh_removes_older_golden_tapes_of_the_same_name_only(tmp_path: Path) -> None:
    names = [f"p.s.r-{DIGEST_A}.jsonl", f"p.s.r-{DIGEST_B}.jsonl", f"p.s2.r-{DIGEST_A}.jsonl", "notes.jsonl"]
    for name in names:
        (tmp_path / name).write_text("{}\n", encoding="utf-8")
    removed = supersede(tmp_path, tmp_path / names[1])
    assert removed == (tmp_path / names[0],)
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(names[1:])


def test_scenarios_are_picked_by_name_or_glob_and_nothing_matching_is_an_error() -> None:
    pack = load_pack(str(REPO / "scenarios" / "support_desk"))
    picked = selected_scenarios([pack], ["refund_*"])
    assert [scenario.name for _, scenario in picked] == ["refund_damaged_item", "refund_after_clarifying"]
    assert len(selected_scenarios([pack], [])) == len(pack.scenarios)
    with pytest.raises(SelectionError, match="matches no scenario") as caught:
        selected_scenarios([pack], ["nope"])
    assert "support_desk/refuse_outside_window" in str(caught.value)


def test_the_scripted_upstream_answers_with_the_first_golden_case() -> None:
    pack = load_pack(str(REPO / "scenarios" / "support_desk"))
    scenario = pack.scenarios[0]
    assert golden_case(scenario).name == "refund-the-mug"
    bare = type(scenario)(name="bare", prompt="hi")
    with pytest.raises(UsageError, match="no golden reference case"):
        golden_case(bare)


def test_record_and_replay_gateways_copy_their_tapes_in_and_out_as_they_need(tmp_path: Path) -> None:
    tape = tmp_path / "t-x.jsonl"
    replay = replay_spec(tape)
    assert (replay.mode, replay.extra_args) == ("replay", ("--tape", "/wt/tapes/t-x.jsonl"))
    assert replay.files == {"/wt/tapes/t-x.jsonl": tape.resolve()} and not replay.outputs
    assert not replay.needs_egress
    run = {"runtime": "reference", "pack": "p", "scenario": "s"}
    scripted = record_spec("http://scripted-upstream:8000/v1", tmp_path / "o", "n", key=None, lineage=run)
    assert scripted.outputs == {"/wt/tapes": (tmp_path / "o").resolve()}
    assert "--tape-out" in scripted.extra_args and "/wt/tapes/n.jsonl" in scripted.extra_args
    assert " ".join(scripted.extra_args).endswith("--runtime reference --pack p --scenario s")
    assert not scripted.needs_egress and not scripted.env and not scripted.files and not scripted.secrets
    key = "k" * 20
    live = record_spec("https://api.example.com/v1", tmp_path / "o", "n", key=key, lineage=run)
    assert live.needs_egress and not live.env  # the key is never container env (docker inspect shows env)
    assert not live.files and live.secrets == {KEY_PATH: key + "\n"}  # a file put in, no host bind mount
    assert live.extra_args[-2:] == ("--upstream-key-file", KEY_PATH)
    assert key not in " ".join(live.extra_args) and key not in repr(live)  # never a command line, never shown


def test_a_tape_run_asks_for_the_default_model_unless_another_was_recorded() -> None:
    pack = load_pack(str(REPO / "scenarios" / "support_desk"))
    scenario = pack.scenarios[0]
    assert agent_config(pack, scenario, None).model is None
    assert agent_config(pack, scenario, "wt-scripted").model is None
    config = agent_config(pack, scenario, "llama3")
    assert config.model is not None and config.model.name == "llama3"
    assert config.system_prompt == AgentConfig(system_prompt=pack.agent.system_prompt).system_prompt
