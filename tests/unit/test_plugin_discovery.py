"""Entry-point discovery, proven with a real third-party package installed by the test."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "tests" / "fixtures" / "fake_plugin_pkg"


def test_installed_package_registers_runtime_and_pack(tmp_path: Path) -> None:
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(target),
            str(PACKAGE),
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    env = {
        **os.environ,
        "PYTHONPATH": str(target),
        "WT_RUNS_DIR": str(tmp_path / "runs"),
        "WT_LOCK_DIR": str(tmp_path / "locks"),
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "windtunnel._cli.main",
            "run",
            "--runtime",
            "fake_echo",
            "--pack",
            "fake_pack",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "fake_pack/echo_hello[0]" in done.stdout
    missing = subprocess.run(
        [
            sys.executable,
            "-m",
            "windtunnel._cli.main",
            "run",
            "--runtime",
            "fake_echo",
            "--pack",
            "fake_pack",
        ],
        cwd=tmp_path,
        env={**env, "PYTHONPATH": ""},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert missing.returncode == 2 and "no runtime named 'fake_echo'" in missing.stderr
    assert "registered runtimes: http_inject, in_memory" in missing.stderr
