"""Faults of the machine under a real `wt certify`: the engine going away mid-run, a full disk and a read-only
file system under --out, and a base image that cannot be had. Each is one line naming it, exit 2, no
traceback, and nothing already recorded is lost."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from tests.faults.conftest import left_behind, one_line_error, output, small_project, wait_for, wt_process
from tests.faults.engine_proxy import EngineProxy
from windtunnel._engine.cleanup import sweep_leftovers

pytestmark = [pytest.mark.docker, pytest.mark.slow]

BUILT = Path("evidence") / "reference" / "build" / "build.json"


@pytest.fixture
def proxy() -> Iterator[EngineProxy]:
    directory = Path(tempfile.mkdtemp(prefix="wt-engine-"))  # a short path: Unix socket paths are limited
    engine = EngineProxy(directory / "engine.sock")
    yield engine
    engine.cut()


def mounted(path: Path, options: str) -> Iterator[Path]:
    """A tmpfs at `path` (`options`: its size, ro); skipped where this process may not mount."""
    path.mkdir(parents=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], capture_output=True, check=False
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (root needed): {done.stderr.decode().strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """96 KiB: room for the marker, run.json and the first stages' evidence, not for a whole bundle."""
    yield from mounted(tmp_path / "small", "size=96k")


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    yield from mounted(tmp_path / "ro", "ro,size=64k")


def test_the_engine_gone_mid_certify_is_one_line_and_exit_2_keeping_the_evidence(
    proxy: EngineProxy, docker_client: docker.DockerClient, fault_env: dict[str, str], tmp_path: Path
) -> None:
    project, out = small_project(tmp_path / "project"), tmp_path / "out"
    env = {**fault_env, "DOCKER_HOST": proxy.docker_host}
    process = wt_process(["certify", "--out", str(out)], env, project)
    wait_for(
        lambda: (out / BUILT).is_file() and bool(left_behind(docker_client, fault_env)[0]),
        process,
        600,
        project,
    )
    proxy.cut()
    assert process.wait(timeout=300) == 2, output(project)
    _, stderr = output(project)
    one_line_error(stderr, "wt: EngineUnavailableError: the Docker engine stopped answering during the run")
    assert f"stopped: what was recorded so far stays in {out}, unsigned" in stderr
    assert json.loads((out / BUILT).read_text())["images"]  # recorded before the engine went: kept whole
    assert not (out / "MANIFEST.sha256").exists()
    # Its containers are on the real engine, labelled with the dead owner's pid: the next sweep takes them.
    sweep_leftovers(docker_client)
    assert left_behind(docker_client, fault_env) == ([], [])


def test_no_engine_at_all_is_one_line_and_exit_2_in_every_verb(
    fault_env: dict[str, str], tmp_path: Path
) -> None:
    env = {**fault_env, "DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock"}
    for args in (
        ["certify", "--out", str(tmp_path / "out")],
        ["run", "--runtime", "reference"],
        ["images", "sweep"],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "windtunnel._cli.main", *args],
            env=env,
            cwd=small_project(tmp_path / "project"),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 2, (args, done.stderr)
        one_line_error(done.stderr, "wt: EngineUnavailableError: no Docker engine answered at unix://")


def test_a_full_disk_under_out_is_one_line_and_exit_2_keeping_what_was_written(
    small_disk: Path, docker_client: docker.DockerClient, fault_env: dict[str, str], tmp_path: Path
) -> None:
    project, out = small_project(tmp_path / "project"), small_disk / "out"
    process = wt_process(["certify", "--out", str(out)], fault_env, project)
    assert process.wait(timeout=900) == 2, output(project)
    _, stderr = output(project)
    one_line_error(stderr, f"wt: error: cannot write {out}/")
    assert "the disk is full (No space left on device)" in stderr
    written = [path for path in out.rglob("*.json") if not path.name.startswith(".")]
    assert len(written) >= 3  # the marker, run.json and evidence made it before the disk filled
    for path in written:
        json.loads(path.read_text())  # every file written is whole: written atomically, none half
    assert not list(out.rglob("*.tmp"))  # no temporary file left behind
    assert left_behind(docker_client, fault_env) == ([], [])


@pytest.mark.parametrize("where", ["inside", "itself"])
def test_a_read_only_out_is_one_line_and_exit_2_before_anything_starts(
    where: str, read_only: Path, docker_client: docker.DockerClient, fault_env: dict[str, str], tmp_path: Path
) -> None:
    out = read_only / "out" if where == "inside" else read_only
    done = subprocess.run(
        [sys.executable, "-m", "windtunnel._cli.main", "certify", "--out", str(out)],
        env=fault_env,
        cwd=small_project(tmp_path / "project"),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    one_line_error(done.stderr, "Read-only file system")
    assert left_behind(docker_client, fault_env) == ([], [])


def test_a_base_image_that_cannot_be_bootstrapped_is_one_line_and_exit_2(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root gets past the root check to debootstrap itself")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "windtunnel._cli.main",
            "images",
            "bootstrap",
            "--suite",
            "no-such-suite",
            "--mirror",
            "http://127.0.0.1:9/debian",  # nothing listens there: no Debian mirror is reachable
            "--tag",
            "windtunnel/never-made:fault-test",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    one_line_error(done.stderr, "wt: BaseImageError: debootstrap of no-such-suite failed")
