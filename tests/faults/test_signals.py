"""Stop signals to a real `wt` process with real containers: SIGTERM, SIGHUP and SIGINT run the same cleanup
(containers, networks, the --out lock), keep the evidence written so far (unsigned), exit 143, 129 or 130
with one line and no traceback; a second signal exits at once, and what it cut short goes with the next
run's sweep. Each run is stopped as soon as it has containers up: the point is the cleanup, not the run."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import docker
import pytest

from tests.faults.conftest import (
    REPO,
    left_behind,
    one_line_error,
    output,
    small_project,
    wait_for,
    wt_process,
)
from windtunnel._engine.cleanup import sweep_leftovers
from windtunnel._locks import held_lock

pytestmark = [pytest.mark.docker, pytest.mark.slow]

BUILT = Path("evidence") / "reference" / "build" / "build.json"


def containers_up(client: docker.DockerClient, env: dict[str, str]) -> bool:
    return bool(left_behind(client, env)[0])


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_stop_signal_mid_certify_leaves_nothing_running_and_keeps_the_evidence(
    sig: signal.Signals, docker_client: docker.DockerClient, fault_env: dict[str, str], tmp_path: Path
) -> None:
    project, out = small_project(tmp_path / "project"), tmp_path / "out"
    process = wt_process(["certify", "--out", str(out)], fault_env, project)
    wait_for(
        lambda: (out / BUILT).is_file() and containers_up(docker_client, fault_env), process, 600, project
    )
    process.send_signal(sig)
    assert process.wait(timeout=180) == 128 + sig, output(project)
    _, stderr = output(project)
    one_line_error(stderr, f"wt: interrupted by {sig.name}: stopped after the cleanup (exit {128 + sig})")
    assert f"stopped: what was recorded so far stays in {out}, unsigned" in stderr
    assert left_behind(docker_client, fault_env) == ([], [])  # 0 containers, 0 networks of the run
    assert json.loads((out / BUILT).read_text())["images"]  # what was recorded is kept, whole
    assert (out / "run.json").is_file()  # still marked a bundle: the next run may replace it
    assert not (out / "MANIFEST.sha256").exists() and not out.with_name("out.tar.gz").exists()  # unsigned
    lock = out.with_name(".out.wt-lock")
    with held_lock(lock, owner="test") as holder:
        assert holder is None  # the --out lock went with the process


def test_sigint_mid_run_cleans_up_like_the_others(
    docker_client: docker.DockerClient, fault_env: dict[str, str], tmp_path: Path
) -> None:
    args = ["run", "--runtime", "reference", "--pack", str(REPO / "scenarios" / "artifacts")]
    process = wt_process([*args, "--runs-dir", str(tmp_path / "runs")], fault_env, tmp_path)
    wait_for(lambda: containers_up(docker_client, fault_env), process, 600, tmp_path)
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=180) == 130, output(tmp_path)
    one_line_error(output(tmp_path)[1], "wt: interrupted by SIGINT: stopped after the cleanup (exit 130)")
    assert left_behind(docker_client, fault_env) == ([], [])


@pytest.mark.parametrize(
    "args",
    [
        ["selftest", "--runtime", "reference", "--pack", "scenarios/artifacts"],
        ["doctor", "--runtime", "reference", "--pack", "scenarios/artifacts"],
        ["prove", "--runtime", "reference", "--pack", "scenarios/artifacts"],
        [
            "tapes",
            "record",
            "--runtime",
            "reference",
            "--pack",
            "scenarios/artifacts",
            "--scripted-upstream",
            "--no-promote",
        ],
    ],
    ids=["selftest", "doctor", "prove", "tapes-record"],
)
def test_every_verb_that_starts_containers_cleans_up_on_sigterm(
    args: list[str], docker_client: docker.DockerClient, fault_env: dict[str, str], tmp_path: Path
) -> None:
    project = small_project(tmp_path / "project")
    env = {**fault_env, "WT_RUNS_DIR": str(tmp_path / "runs")}
    process = wt_process([a.replace("scenarios/", f"{REPO}/scenarios/") for a in args], env, project)
    wait_for(lambda: containers_up(docker_client, fault_env), process, 600, project)
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=180) == 143, output(project)
    one_line_error(output(project)[1], "wt: interrupted by SIGTERM")
    assert left_behind(docker_client, fault_env) == ([], [])


def test_a_second_signal_exits_at_once_and_the_next_sweep_removes_what_was_left(
    docker_client: docker.DockerClient, fault_env: dict[str, str], tmp_path: Path
) -> None:
    project, out = small_project(tmp_path / "project"), tmp_path / "out"
    process = wt_process(["certify", "--out", str(out)], fault_env, project)
    wait_for(
        lambda: (out / BUILT).is_file() and containers_up(docker_client, fault_env), process, 600, project
    )
    process.send_signal(signal.SIGTERM)
    # Signals that arrive before Python runs the handler of the first merge into one, so ask again until one
    # lands while the cleanup (post_run, close, removals) runs.
    deadline = time.monotonic() + 30
    while process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
        process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 143, output(project)
    _, stderr = output(project)
    assert "Traceback" not in stderr, stderr
    assert stderr.rstrip().splitlines()[-1].startswith("wt: SIGTERM again: exiting now (exit 143)"), stderr
    # Cut short, so containers may be left; they carry the dead owner's pid, so the next sweep takes them.
    sweep_leftovers(docker_client)
    assert left_behind(docker_client, fault_env) == ([], [])
    assert (out / BUILT).is_file()
