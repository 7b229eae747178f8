"""The fault suite: real processes, real containers, real signals, a real engine connection cut, real full and
read-only file systems. It reuses the integration session's fixtures (engine, base image, windtunnel image,
session labels): one warm image set, built once per session and reused by content hash.

`wt` runs as a subprocess here (`wt_process`), as a user or a CI job runs it, so a signal reaches a real
process with its real handlers. Every container a test starts carries its own session label
(WT_SESSION_LABEL), so the test can count what a run left behind and remove it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import docker
import pytest

from tests.integration import conftest as integration
from windtunnel._engine.cleanup import labelled, remove_session
from windtunnel._engine.network import SESSION_LABEL

# The integration session's fixtures, shared: one engine connection and one warm image set per session.
docker_client = integration.docker_client
base_image = integration.base_image
windtunnel_image = integration.windtunnel_image
run_label = integration.run_label
session_labels = integration.session_labels
image_build_times = integration.image_build_times

REPO = Path(__file__).resolve().parents[2]
SMALL_PROJECT = '[tool.windtunnel]\nruntimes = ["reference"]\npacks = ["{pack}"]\nrequirement_set = "3"\n'
"""A project with one small pack: the stages run as in CI, in less time."""


def small_project(root: Path, pack: str = "scenarios/artifacts") -> Path:
    """A project directory whose [tool.windtunnel] names one of this checkout's packs."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(
        SMALL_PROJECT.format(pack=(REPO / pack).as_posix()), encoding="utf-8"
    )
    return root


@pytest.fixture
def fault_env(
    docker_client: docker.DockerClient, base_image: str, tmp_path: Path
) -> Iterator[dict[str, str]]:
    """The environment of a `wt` under test: its own session label and lock directory; whatever it leaves
    behind is removed afterwards (after the test has counted it)."""
    session = f"fault-{uuid.uuid4().hex[:10]}"
    env = {
        **os.environ,
        "WT_BASE_IMAGE": base_image,
        "WT_SESSION_LABEL": session,
        "WT_LOCK_DIR": str(tmp_path / "locks"),
        "PYTHONUNBUFFERED": "1",
    }
    yield env
    remove_session(docker_client, session)


def left_behind(client: docker.DockerClient, env: dict[str, str]) -> tuple[list[str], list[str]]:
    """The names of the containers and networks of this test's session still present."""
    containers, networks = labelled(client, SESSION_LABEL, env["WT_SESSION_LABEL"])
    return [str(c.name) for c in containers], [str(n.name) for n in networks]


def wt_process(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen[bytes]:
    """`wt ARGS` as its own process (stdout and stderr to files in `cwd`, so nothing blocks on a pipe)."""
    with (cwd / "stdout.txt").open("w") as stdout, (cwd / "stderr.txt").open("w") as stderr:
        return subprocess.Popen(  # the child keeps its own copies of the two files
            [sys.executable, "-m", "windtunnel._cli.main", *args],
            cwd=cwd,
            env=env,
            stdout=stdout,
            stderr=stderr,
            # The stop signals as a terminal gives them: a test runner's worker (pytest-xdist) may ignore
            # SIGINT, a job started under nohup ignores SIGHUP, and an ignored signal is inherited and,
            # rightly, respected by wt (a user's `nohup wt certify` means it).
            preexec_fn=_default_stop_signals,  # noqa: PLW1509 - it only resets signal dispositions
        )


def _default_stop_signals() -> None:
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def output(cwd: Path) -> tuple[str, str]:
    return (cwd / "stdout.txt").read_text(), (cwd / "stderr.txt").read_text()


def wait_for(what: Callable[[], bool], process: subprocess.Popen[bytes], timeout: float, cwd: Path) -> None:
    """Until `what()` holds; fails with the process's output if it ends first or time runs out."""
    deadline = time.monotonic() + timeout
    while not what():
        if process.poll() is not None or time.monotonic() > deadline:
            stdout, stderr = output(cwd)
            pytest.fail(f"gave up waiting (exit {process.poll()}):\n{stdout[-2000:]}\n{stderr[-3000:]}")
        time.sleep(0.2)


def one_line_error(stderr: str, expect: str) -> None:
    """No traceback; the last `wt: ` line holds `expect`, followed at most by its `how to fix:` line."""
    assert "Traceback" not in stderr and 'File "' not in stderr, stderr
    lines = stderr.rstrip().splitlines()
    last = max(i for i, line in enumerate(lines) if line.startswith("wt: "))
    assert expect in lines[last], stderr
    assert all(line.startswith("  how to fix: ") for line in lines[last + 1 :]) and len(lines) - last <= 2, (
        stderr
    )
