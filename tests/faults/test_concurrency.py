"""Concurrency on one engine: two certifies of different runtimes at once each certify their own runtimes and
sign their own bundle (neither sweeps, counts or removes the other's containers; the reference control is
shared through the machine-wide lock), and a third certify into a --out in use is refused at once, naming
the holder's pid, with both bundles intact."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import docker
import pytest

from tests.faults.conftest import left_behind, one_line_error, output, small_project, wait_for, wt_process

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.certify]

POISON = "reference-poison-reset_noop"
"""A known-broken variant: its certify ends FAILED (exit 1) with a signed bundle, the reference PASSED."""


def verify(bundle: Path, stdout: str) -> subprocess.CompletedProcess[str]:
    (fingerprint,) = re.findall(r"^signer: (SHA256:[0-9a-f]{64})$", stdout, re.MULTILINE)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "windtunnel._cli.main",
            "verify",
            str(bundle),
            "--key-fingerprint",
            fingerprint,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_two_certifies_at_once_on_one_engine_and_a_third_into_an_out_in_use(
    docker_client: docker.DockerClient, fault_env: dict[str, str], tmp_path: Path
) -> None:
    first_dir, second_dir, third_dir = (small_project(tmp_path / name) for name in ("a", "b", "c"))
    first_out, second_out = tmp_path / "out-a", tmp_path / "out-b"
    first = wt_process(["certify", "--out", str(first_out)], fault_env, first_dir)
    # --fail-fast: the poison stops at its failing stage (conformance); the reference runs every stage
    second = wt_process(
        ["certify", "--out", str(second_out), "--runtime", POISON, "--fail-fast"], fault_env, second_dir
    )
    wait_for((first_out / ".windtunnel-bundle.json").is_file, first, 300, first_dir)
    third = wt_process(["certify", "--out", str(first_out)], fault_env, third_dir)
    assert third.wait(timeout=120) == 2
    one_line_error(
        output(third_dir)[1], f"--out {first_out} is in use by another wt certify (pid {first.pid})"
    )
    assert first.wait(timeout=2400) == 0, output(first_dir)
    assert second.wait(timeout=2400) == 1, output(second_dir)  # the poison FAILED, and nothing else
    first_stdout, second_stdout = output(first_dir)[0], output(second_dir)[0]
    assert "verdict: PASSED" in first_stdout
    assert re.search(r"^reference .* PASSED$", second_stdout, re.MULTILINE), second_stdout
    assert re.search(rf"^{POISON} .* FAILED$", second_stdout, re.MULTILINE), second_stdout
    for stdout in (first_stdout, second_stdout):  # neither saw (nor removed) the other's containers
        assert "harness: passed   harness/publish/no-container-left-behind" in stdout
    for bundle, stdout in ((first_out, first_stdout), (second_out, second_stdout)):
        done = verify(bundle, stdout)
        assert done.returncode == 0, done.stdout + done.stderr
    assert left_behind(docker_client, fault_env) == ([], [])
