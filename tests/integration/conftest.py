"""Session fixtures for tests that start real containers: engine, base image, windtunnel image, labels.

Everything a test starts carries the session's labels (`session_labels`); when the session ends every
container and network with the session label is removed, and leftovers of dead earlier sessions are
swept when it starts. Tests that use these fixtures carry `@pytest.mark.docker`.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from windtunnel._engine.base_image import DEFAULT_BASE_IMAGE, ensure_base_image
from windtunnel._engine.cleanup import labelled, remove_session, sweep_leftovers
from windtunnel._engine.docker_env import docker_client as connect
from windtunnel._engine.images import BuiltImage, build_windtunnel_image
from windtunnel._engine.network import SESSION_LABEL, run_labels
from windtunnel.errors import EngineUnavailableError

REPO = Path(__file__).resolve().parents[2]

BUILD_TIMES: dict[str, float] = {}
"""Seconds each session fixture took to produce its image; printed in the terminal summary."""


@pytest.fixture(scope="session")
def run_label() -> str:
    """Unique per test session; the value of `windtunnel.session` (and `windtunnel.run`) on its resources."""
    return f"pytest-{uuid.uuid4().hex[:10]}"


@pytest.fixture(scope="session")
def session_labels(run_label: str) -> dict[str, str]:
    """Labels for anything a test starts: run and session = run_label, owner = this pytest process."""
    return run_labels(run_label, session=run_label)


@pytest.fixture(scope="session")
def docker_client(run_label: str) -> Iterator[docker.DockerClient]:
    """The engine. Without one the tests fail under CI (CI starts its own) and skip elsewhere.

    Sweeps leftovers of dead runs first; at session end removes every container and network carrying
    the session label, and fails if any survive.
    """
    try:
        client = connect()
    except EngineUnavailableError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI must provide a Docker engine: {exc}")
        pytest.skip(f"no Docker engine: {exc}")
    swept = sweep_leftovers(client)
    if swept:
        print(f"\nswept leftovers of dead runs: {swept}")
    yield client
    removed = remove_session(client, run_label)
    if removed:
        print(f"\nremoved at session end: {removed}")
    containers, networks = labelled(client, SESSION_LABEL, run_label)
    client.close()
    assert not containers, f"containers outlived the session: {containers}"
    assert not networks, f"networks outlived the session: {networks}"


@pytest.fixture(scope="session")
def base_image(docker_client: docker.DockerClient) -> str:
    """BASE_IMAGE ($WT_BASE_IMAGE or python:3.12-slim): local, pulled, or bootstrapped from Debian."""
    started = time.monotonic()
    reference = ensure_base_image(docker_client, os.environ.get("WT_BASE_IMAGE") or DEFAULT_BASE_IMAGE)
    BUILD_TIMES["base image"] = time.monotonic() - started
    return reference


@pytest.fixture(scope="session")
def windtunnel_image(docker_client: docker.DockerClient, base_image: str) -> BuiltImage:
    """The gateway/mocks image built from this checkout, once per session (reused when unchanged)."""
    started = time.monotonic()
    built = build_windtunnel_image(docker_client, repo_root=REPO, base_image=base_image)
    BUILD_TIMES["windtunnel image" + (" (reused)" if built.reused else "")] = time.monotonic() - started
    return built


@pytest.fixture(scope="session")
def image_build_times() -> dict[str, float]:
    """Where tests record how long image steps took; printed in the terminal summary."""
    return BUILD_TIMES


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if BUILD_TIMES:
        terminalreporter.write_sep("-", "image fixtures")
        for name, seconds in BUILD_TIMES.items():
            terminalreporter.write_line(f"{name}: {seconds:.1f} s")
