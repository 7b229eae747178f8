"""--profile is a filter, the help says so, and this test pins the words to the behaviour (docs/tapes.md, "Profiles")."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from windtunnel._packs.pack import Pack
from windtunnel._scenario.model import Scenario
from windtunnel._tapes.profiles import PROFILE_HELP, profile_filter, skipped_by_profile
from windtunnel.errors import SelectionError


def pack(name: str, *profiles: str) -> Pack:
    scenario = Scenario(name="s", prompt="hi", target_facts=[["x"]])
    return Pack(name=name, scenarios=[scenario], profiles=profiles)


def write_pack(root: Path, name: str, *profiles: str) -> Path:
    directory = root / name
    (directory / "tapes").mkdir(parents=True)
    (directory / "pack.py").write_text(
        "from windtunnel.api import Pack, Scenario\n"
        f"PACK = Pack(name={name!r}, scenarios=[Scenario(name='s', prompt='hi', target_facts=[['x']])], "
        f"profiles={list(profiles)!r})\n",
        encoding="utf-8",
    )
    return directory


def wt(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run `wt` as users do; CI is unset unless given."""
    environment = {key: value for key, value in os.environ.items() if key != "CI"} | env
    return subprocess.run(
        [sys.executable, "-m", "windtunnel._cli.main", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=environment,
    )


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_the_help_states_filter_semantics_in_every_tapes_verb() -> None:
    for verb in ("list", "verify", "rerecord"):
        done = wt("tapes", verb, "--help")
        assert done.returncode == 0, done.stderr
        assert flat(PROFILE_HELP) in flat(done.stdout), verb
    statement = flat(PROFILE_HELP)
    assert statement.startswith(
        "a filter on packs, not an override: select only the packs whose Pack.profiles"
    )
    assert "the others are skipped and listed on stderr" in statement
    assert "if no selected pack declares it, the command fails" in statement
    assert "It never changes where model traffic comes from" in statement
    assert "Without --profile no pack is filtered out" in statement
    assert "where model traffic comes from:" not in statement  # the old first clause read like an override


def test_only_packs_declaring_the_profile_are_selected_the_rest_are_skipped() -> None:
    live_only, recordable = pack("live_only", "live"), pack("recordable", "live", "record", "replay")
    packs = [live_only, recordable]
    assert profile_filter(packs, "record") == [recordable]
    assert skipped_by_profile(packs, "record") == [live_only]
    assert profile_filter(packs, "live") == packs


def test_without_a_profile_no_pack_is_filtered_out() -> None:
    packs = [pack("a", "live"), pack("b", "replay")]
    assert profile_filter(packs, None) == packs
    assert skipped_by_profile(packs, None) == []


def test_a_profile_no_pack_declares_fails_and_names_what_each_declares() -> None:
    with pytest.raises(SelectionError) as caught:
        profile_filter([pack("a", "live"), pack("b", "live", "replay")], "record")
    message = str(caught.value)
    assert "is a filter" in message
    assert "a: live; b: live, replay" in message


def test_the_cli_filters_exactly_as_the_help_says(tmp_path: Path) -> None:
    live_only = write_pack(tmp_path, "live_only", "live")
    recordable = write_pack(tmp_path, "recordable", "record", "replay")
    (live_only / "tapes" / "x.jsonl").write_text("not a tape\n", encoding="utf-8")
    (recordable / "tapes" / "y.jsonl").write_text("not a tape\n", encoding="utf-8")
    argv = ["tapes", "list", "--pack", str(live_only), "--pack", str(recordable)]

    filtered = wt(*argv, "--profile", "record")
    assert filtered.returncode == 0, filtered.stderr
    assert "y.jsonl" in filtered.stdout and "x.jsonl" not in filtered.stdout
    assert "skipped pack live_only: it does not declare profile record" in filtered.stderr

    everything = wt(*argv)
    assert everything.returncode == 0, everything.stderr
    assert "x.jsonl" in everything.stdout and "y.jsonl" in everything.stdout

    nothing = wt("tapes", "list", "--pack", str(live_only), "--profile", "record")
    assert nothing.returncode == 2
    assert "selects no pack" in nothing.stderr
