"""`wt gateway` as users run it: help, and bad flag combinations as usage errors (serving: integration test)."""

from __future__ import annotations

import subprocess
import sys


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
    assert "{script,live}" in text
    assert "default 127.0.0.1" in text
    assert "WT_UPSTREAM_API_KEY" in text


def test_live_mode_needs_an_upstream() -> None:
    done = wt("gateway", "serve", "--mode", "live")
    assert done.returncode == 2
    assert "live mode needs --upstream" in done.stderr


def test_script_mode_refuses_an_upstream() -> None:
    done = wt("gateway", "serve", "--upstream", "http://127.0.0.1:9/v1", "--port", "0")
    assert done.returncode == 2
    assert "--upstream applies to live mode only" in done.stderr


def test_unknown_mode_is_a_usage_error() -> None:
    done = wt("gateway", "serve", "--mode", "dream")
    assert done.returncode == 2
    assert "invalid choice" in done.stderr


def test_bare_verb_shows_help() -> None:
    done = wt("gateway")
    assert done.returncode == 2
    assert "serve" in done.stderr
