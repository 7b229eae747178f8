"""The claude-agent-sdk runtime's start probe without a container: the Claude Code CLI it runs is the one
the SDK bundles (or CLAUDE_CLI), and a CLI that cannot start is refused with its own last lines before any
turn."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from windtunnel_inject import SettingsError

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ca_runtime.cli import CLI_VARIABLE, check_cli, claude_cli


class _Settings:
    def __init__(self, env: dict[str, str]) -> None:
        self.env = env


def test_the_bundled_cli_starts_and_names_its_version() -> None:
    # Where the SDK is installed (its container, which also runs this probe at every start; a dev venv).
    pytest.importorskip("claude_agent_sdk")
    cli = claude_cli(_Settings({}))  # type: ignore[arg-type]
    assert Path(cli).parts[-2:] == ("_bundled", "claude"), cli
    assert "(Claude Code)" in check_cli(cli)


def test_claude_cli_names_the_cli_to_run(tmp_path: Path) -> None:
    assert claude_cli(_Settings({CLI_VARIABLE: str(tmp_path / "claude")})) == str(tmp_path / "claude")  # type: ignore[arg-type]


def test_a_cli_that_cannot_start_is_refused_with_its_own_last_lines(tmp_path: Path) -> None:
    broken = tmp_path / "claude"
    broken.write_text("#!/bin/sh\necho 'error while loading shared libraries: libfoo.so' >&2\nexit 127\n")
    broken.chmod(0o755)
    with pytest.raises(SettingsError, match=r"exited 127: error while loading shared libraries: libfoo\.so"):
        check_cli(str(broken))
    with pytest.raises(SettingsError, match=rf"cannot start: .*; set {CLI_VARIABLE} to it"):
        check_cli(str(tmp_path / "missing"))


def test_the_probe_leaves_nothing_in_home_and_sees_the_quiet_settings(tmp_path: Path) -> None:
    spy = tmp_path / "claude"
    seen = tmp_path / "seen"
    spy.write_text(f'#!/bin/sh\nenv > {seen}\necho "9.9.9 (Claude Code)"\n')
    spy.chmod(0o755)
    assert check_cli(str(spy)) == "9.9.9 (Claude Code)"
    env = dict(line.split("=", 1) for line in seen.read_text().splitlines() if "=" in line)
    assert env["DISABLE_TELEMETRY"] == "1"
    assert env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
    assert env["CLAUDE_CONFIG_DIR"] == env["HOME"]
    assert not Path(env["HOME"]).exists()
