"""`wt doctor` end to end against real containers: the reference runtime is healthy (its tools are called
through the runtime itself), and a poison that keeps conversations across reset is not (the leak is named)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.docker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def env(docker_client: Any, base_image: str, run_label: str) -> dict[str, str]:
    return {**os.environ, "WT_BASE_IMAGE": base_image, "WT_SESSION_LABEL": run_label}


def doctor(env: dict[str, str], runtime: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "windtunnel._cli.main", "doctor", "--runtime", runtime],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def steps(output: str) -> dict[str, str]:
    """Each step's line (`ok   tools    ...` / `FAIL canary   ...`) by step name."""
    found = {}
    for line in output.splitlines():
        mark, _, rest = line.partition(" ")
        if mark in ("ok", "FAIL"):
            name, _, detail = rest.strip().partition(" ")
            found[name] = f"{mark} {detail.strip()}"
    return found


def test_the_reference_runtime_is_healthy(env: dict[str, str]) -> None:
    done = doctor(env, "reference")
    assert done.returncode == 0, done.stdout + done.stderr
    found = steps(done.stdout)
    assert list(found) == ["engine", "build", "tools", "reset", "canary"], done.stdout
    assert all(line.startswith("ok ") for line in found.values()), found
    # Every mock of the project's packs got a call from the runtime, not just a listing from Wind Tunnel.
    assert found["tools"].count("called through the runtime") >= 2, found["tools"]
    assert "wt doctor reference: healthy" in done.stdout


def test_a_runtime_that_keeps_conversations_across_reset_is_not_healthy(env: dict[str, str]) -> None:
    done = doctor(env, "reference-poison-keep_conversation_across_reset")
    assert done.returncode == 1, done.stdout + done.stderr
    found = steps(done.stdout)
    assert found["canary"].startswith("FAIL LEAK:"), found
    assert "the seeded session" in found["canary"] and "WT-CANARY-" in found["canary"]
    assert all(found[name].startswith("ok ") for name in ("engine", "build", "tools", "reset")), found
    assert "NOT healthy" in done.stdout and "Traceback" not in done.stdout + done.stderr
