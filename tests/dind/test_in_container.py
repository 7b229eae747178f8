"""Acceptance of the runner-in-container mode against a Docker-in-Docker engine container whose inner
containers this process cannot reach (`nox -s certify_in_container` runs these after the simulation,
reusing its engine image and state volume): a plain `DOCKER_HOST=tcp://127.0.0.1:<port> wt certify`
picks the container mode itself and PASSES; a poison fails the same check it fails on a local engine;
SIGTERM of the host-side process leaves no container or network in either engine."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import pytest

from tests.dind import simulation
from windtunnel._conformance.suite import Suite

pytestmark = pytest.mark.docker

REPO = Path(__file__).resolve().parents[2]
KEY = REPO / "tests" / "fixtures" / "keys" / "test-signer"
POISON = "reference-poison-attach_outside_network"
CERTIFY_TIMEOUT_S = 3600


@pytest.fixture(scope="module")
def engine_host() -> Iterator[str]:
    client = docker.from_env()
    cache = REPO / ".wt-cache" / "dind"
    image = simulation.dind_image(client, cache)
    # The simulation's warm engine state by default (the nox session runs these after it, never beside it).
    state = (
        os.environ.get("WT_DIND_STATE")
        or f"{simulation.STATE_VOLUME_PREFIX}{simulation.wiring().ENGINE_STATE_CACHE}"
    )
    if not client.volumes.list(filters={"name": state}):
        client.volumes.create(state, labels=simulation.LABELS)
    with simulation.engine(client, image, state) as (_network, port):
        yield f"tcp://127.0.0.1:{port}"
    client.close()


def _env(engine: str) -> dict[str, str]:
    return {**os.environ, "DOCKER_HOST": engine, "WT_CACHE_DIR": str(REPO / ".wt-cache" / "dind")}


def _certify(engine: str, out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [
        sys.executable,
        "-m",
        "windtunnel._cli.main",
        "certify",
        "--out",
        str(out),
        "--key",
        f"{KEY}.pem",
    ]
    return subprocess.run(
        [*command, *args],
        cwd=REPO,
        env=_env(engine),
        capture_output=True,
        text=True,
        timeout=CERTIFY_TIMEOUT_S,
        check=False,
    )


def _statuses(out: Path) -> dict[str, str]:
    checks = json.loads((out / "checks.json").read_text(encoding="utf-8"))["checks"]
    return {check["id"]: check["status"] for check in checks}


def _ours(client: Any, label: str = "windtunnel.run") -> list[str]:
    """Containers and networks carrying `label` (`key` or `key=value`)."""
    containers = [
        c.name for c in client.containers.list(all=True, filters={"label": label}, ignore_removed=True)
    ]
    return containers + [n.name for n in client.networks.list(filters={"label": label})]


def test_a_remote_engine_is_certified_from_a_runner_container_and_passes(
    engine_host: str, tmp_path: Path
) -> None:
    done = _certify(engine_host, tmp_path / "bundle")
    assert "executor container:" in done.stderr, done.stderr[-3000:]
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    statuses = _statuses(tmp_path / "bundle")
    for check in ("reference/conformance/recovery", "reference/conformance/egress_closed"):
        assert statuses[check] == "passed"
    tapes = {k: v for k, v in statuses.items() if "/tapes/" in k}
    assert tapes and set(tapes.values()) == {"passed"}, tapes
    run = json.loads((tmp_path / "bundle" / "run.json").read_text(encoding="utf-8"))
    assert run["host"]["executor"] == "container" and run["host"]["engine"].startswith("docker ")
    verified = subprocess.run(
        [
            sys.executable,
            "-m",
            "windtunnel._cli.main",
            "verify",
            str(tmp_path / "bundle"),
            "--key",
            f"{KEY}.pub.pem",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_a_poison_fails_the_check_it_fails_on_a_local_engine(engine_host: str, tmp_path: Path) -> None:
    (named,) = Suite.load(REPO / "conformance").caught_by[POISON]
    done = _certify(engine_host, tmp_path / "bundle", "--runtime", POISON, "--fail-fast")
    assert done.returncode == 1, (done.stdout + done.stderr)[-4000:]
    statuses = _statuses(tmp_path / "bundle")
    failed = {k for k, v in statuses.items() if k.startswith(f"{POISON}/conformance/") and v == "failed"}
    assert failed == {f"{POISON}/conformance/{named}"}
    assert statuses[f"harness/conformance/poison-caught/{POISON}"] == "passed"


def test_sigterm_stops_the_runner_and_leaves_nothing_in_either_engine(
    engine_host: str, tmp_path: Path
) -> None:
    inner = docker.DockerClient(base_url=engine_host)
    # The engine's state is kept between runs: what an earlier run left there (one killed with SIGKILL
    # leaves its runner and its run) is not this run's. This run must remove all it starts.
    earlier = set(_ours(inner))
    command = [sys.executable, "-m", "windtunnel._cli.main", "certify", "--out", str(tmp_path / "bundle")]
    process = subprocess.Popen(
        command, cwd=REPO, env=_env(engine_host), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    started = threading.Event()
    lines: list[str] = []

    def drain() -> None:  # read to the end: a full pipe would block the process we are stopping
        assert process.stderr is not None
        for line in process.stderr:
            lines.append(line)
            if ": conformance" in line:  # the runner is inside the engine and has started containers
                started.set()

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        assert started.wait(timeout=CERTIFY_TIMEOUT_S), "".join(lines[-40:])
        time.sleep(3)
        assert set(_ours(inner)) - earlier, "the run had started no container in the engine"
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        reader.join(timeout=30)
        if process.stderr is not None:
            process.stderr.close()
    local = docker.from_env()
    try:
        assert code == 128 + signal.SIGTERM, "".join(lines[-40:])
        said = "".join(lines[-40:])
        assert set(_ours(inner)) - earlier == set(), (
            said
        )  # the runner, every container and network of its run
        assert _ours(local, f"windtunnel.owner.pid={process.pid}") == [], said
    finally:
        inner.close()
        local.close()
