"""`wt gateway` as users run it: help, and bad flag combinations as usage errors (serving: integration test)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def wt(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "windtunnel._cli.main", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={"PATH": "/usr/bin:/bin"},
    )


def test_serve_help_states_modes_and_defaults() -> None:
    done = wt("gateway", "serve", "--help")
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert "{script,live,record,replay}" in text
    assert "default 127.0.0.1" in text
    assert "WT_UPSTREAM_API_KEY" in text


def test_live_mode_needs_an_upstream() -> None:
    done = wt("gateway", "serve", "--mode", "live")
    assert done.returncode == 2
    assert "live mode needs --upstream" in done.stderr


def test_script_mode_refuses_an_upstream() -> None:
    done = wt("gateway", "serve", "--upstream", "http://127.0.0.1:9/v1", "--port", "0")
    assert done.returncode == 2
    assert "--upstream does not apply to script mode: script mode never calls a model" in done.stderr


def test_replay_mode_needs_a_tape_and_refuses_an_upstream() -> None:
    done = wt("gateway", "serve", "--mode", "replay")
    assert done.returncode == 2
    assert "replay mode needs --tape" in done.stderr
    done = wt(
        "gateway", "serve", "--mode", "replay", "--tape", "t.jsonl", "--upstream", "http://127.0.0.1:9/v1"
    )
    assert done.returncode == 2
    assert "--upstream does not apply to replay mode" in done.stderr


def test_replay_of_a_missing_tape_fails_closed_before_serving(tmp_path: Path) -> None:
    done = wt("gateway", "serve", "--mode", "replay", "--tape", str(tmp_path / "none.jsonl"), "--port", "0")
    assert done.returncode != 0
    assert f"no tape at {tmp_path / 'none.jsonl'}" in done.stderr
    assert "model gateway" not in done.stderr  # it never announced an address


def test_record_mode_needs_an_upstream_and_a_tape_out() -> None:
    done = wt("gateway", "serve", "--mode", "record", "--tape-out", "t.jsonl")
    assert done.returncode == 2
    assert "record mode needs --upstream" in done.stderr
    done = wt("gateway", "serve", "--mode", "record", "--upstream", "http://127.0.0.1:9/v1")
    assert done.returncode == 2
    assert "record mode needs --tape-out" in done.stderr


def test_a_flag_of_another_mode_is_refused() -> None:
    done = wt("gateway", "serve", "--mode", "script", "--tape", "t.jsonl")
    assert done.returncode == 2
    assert "--tape applies to replay mode only" in done.stderr
    done = wt("gateway", "serve", "--mode", "replay", "--tape", "t.jsonl", "--tape-out", "o.jsonl")
    assert done.returncode == 2
    assert "--tape-out applies to record mode only" in done.stderr


def test_unknown_mode_is_a_usage_error() -> None:
    done = wt("gateway", "serve", "--mode", "dream")
    assert done.returncode == 2
    assert "invalid choice" in done.stderr


def test_bare_verb_shows_help() -> None:
    done = wt("gateway")
    assert done.returncode == 2
    assert "serve" in done.stderr


def test_help_names_the_key_file_and_the_exit_codes() -> None:
    text = " ".join(wt("gateway", "serve", "--help").stdout.split())
    assert "--upstream-key-file PATH" in text and "WT_UPSTREAM_KEY_FILE" in text
    assert "Exit 0 when it stopped cleanly, 1 when the tape failed at shutdown" in text
    assert "--pack NAME" in text and "refuses a score of another" in text


def test_a_key_file_is_refused_in_script_mode_and_must_be_readable(tmp_path: Path) -> None:
    done = wt("gateway", "serve", "--upstream-key-file", str(tmp_path / "k"), "--port", "0")
    assert done.returncode == 2
    assert "--upstream-key-file does not apply to script mode" in done.stderr
    missing = tmp_path / "missing"
    done = wt(
        "gateway", "serve", "--mode", "live", "--upstream", "http://127.0.0.1:9/v1",
        "--upstream-key-file", str(missing), "--port", "0",
    )  # fmt: skip
    assert done.returncode == 2
    assert f"cannot read the upstream key file {missing}" in done.stderr
    assert "model gateway" not in done.stderr  # it never started


def test_lineage_flags_belong_to_record_mode() -> None:
    done = wt("gateway", "serve", "--mode", "replay", "--tape", "t.jsonl", "--scenario", "s")
    assert done.returncode == 2
    assert "--scenario applies to record mode only" in done.stderr
