"""The Claude Code CLI a turn runs, and its start probe (no claude_agent_sdk import: the probe and its tests
need only the CLI)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from windtunnel_inject import Settings, SettingsError

from ca_runtime.quiet import QUIET, STDERR_LINES

CLI_VARIABLE = "CLAUDE_CLI"
"""Names the Claude Code CLI to run; unset, the one bundled in the claude-agent-sdk wheel (as the SDK does)."""
STARTUP_TIMEOUT_S = 30.0


def claude_cli(settings: Settings) -> str:
    """The CLI every turn runs: CLAUDE_CLI, else the SDK's bundled one, else `claude` on PATH (the SDK's order)."""
    given = settings.env.get(CLI_VARIABLE, "").strip()
    if given:
        return given
    spec = importlib.util.find_spec("claude_agent_sdk")  # found, not imported: no SDK import for a probe
    package = Path(spec.origin).parent if spec is not None and spec.origin else None
    bundled = package / "_bundled" / "claude" if package is not None else Path("/nonexistent")
    return str(bundled) if bundled.is_file() else shutil.which("claude") or "claude"


def check_cli(binary: str) -> str:
    """`claude --version` (about 0.1 s), so a CLI that cannot start fails the ready stage with its own last
    lines instead of every turn. Run with the turns' QUIET settings and a throwaway HOME and config directory:
    the probe contacts nothing and leaves nothing behind."""
    with tempfile.TemporaryDirectory(prefix="wt-claude-probe-") as home:
        env = {**os.environ, **QUIET, "HOME": home, "CLAUDE_CONFIG_DIR": home}
        try:
            done = subprocess.run(
                [binary, "--version"],
                capture_output=True,
                text=True,
                timeout=STARTUP_TIMEOUT_S,
                env=env,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SettingsError(
                f"the Claude Code CLI {binary!r} cannot start: {exc}; set {CLI_VARIABLE} to it"
            ) from exc
    if done.returncode != 0:
        said = " | ".join(line.strip() for line in (done.stdout + done.stderr).splitlines()[-STDERR_LINES:])
        raise SettingsError(f"the Claude Code CLI {binary!r} exited {done.returncode}: {said}")
    return done.stdout.strip()
