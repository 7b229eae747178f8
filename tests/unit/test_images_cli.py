"""`wt images` and the engine connection: help, and clear errors when a tool or the engine is missing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from windtunnel._engine.base_image import require_bootstrap_tools
from windtunnel._engine.docker_env import docker_client
from windtunnel.errors import EngineUnavailableError, HarnessError


def wt(
    *args: str, env: dict[str, str] | None = None, user: int | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "windtunnel._cli.main", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd="/",
        timeout=60,
        check=False,
    )


def test_images_help_lists_the_actions() -> None:
    result = wt("images", "--help")
    assert result.returncode == 0
    for action in ("bootstrap", "build", "sweep"):
        assert action in result.stdout


def test_bootstrap_help_documents_its_flags() -> None:
    result = wt("images", "bootstrap", "--help")
    assert result.returncode == 0
    for flag in ("--tag", "--suite", "--mirror"):
        assert flag in result.stdout


def test_bootstrap_as_a_normal_user_asks_for_root(monkeypatch: pytest.MonkeyPatch) -> None:
    # Running the CLI as another user would need an interpreter that user can read; the check itself
    # is what the CLI calls first.
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(HarnessError) as caught:
        require_bootstrap_tools()
    assert "needs root (running as uid 1000)" in str(caught.value)
    assert "sudo wt images bootstrap" in str(caught.value)


def test_bootstrap_without_debootstrap_says_how_to_install_it(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root gets past the root check to the debootstrap check")
    result = wt("images", "bootstrap", env={"PATH": str(tmp_path)})
    assert result.returncode == 2  # no base image to be had is a fault of the machine: exit 2 in every verb
    assert "needs debootstrap" in result.stderr
    assert "apt-get install debootstrap" in result.stderr


def test_build_with_a_runtime_dir_lacking_a_dockerfile_is_a_usage_error(tmp_path: Path) -> None:
    result = wt("images", "build", "--runtime", str(tmp_path))
    assert result.returncode == 2
    assert "expected a directory with a runtime.toml or a Dockerfile, found neither" in result.stderr


def test_build_reads_the_runtime_manifest_before_the_engine(tmp_path: Path) -> None:
    # The Dockerfile the manifest names is checked, not DIR/Dockerfile (which exists here as a decoy).
    (tmp_path / "Dockerfile").write_text("FROM scratch\n")
    (tmp_path / "runtime.toml").write_text(
        'name = "mine"\n[image]\nbuild = "."\ndockerfile = "agent.Dockerfile"\n'
    )
    result = wt("images", "build", "--runtime", str(tmp_path), env={"DOCKER_HOST": "tcp://127.0.0.1:9"})
    assert result.returncode == 2
    assert "image.dockerfile names 'agent.Dockerfile', which is not a file" in result.stderr


def test_build_refuses_a_python_driver_runtime(tmp_path: Path) -> None:
    (tmp_path / "runtime.toml").write_text('name = "py"\n[driver]\nplugin = "pkg.mod:plugin"\n')
    result = wt("images", "build", "--runtime", str(tmp_path))
    assert result.returncode == 2
    assert "names a Python driver" in result.stderr


def test_no_engine_names_the_address_and_the_fix(tmp_path: Path) -> None:
    socket = tmp_path / "absent.sock"
    with pytest.raises(EngineUnavailableError) as caught:
        docker_client(base_url=f"unix://{socket}")
    message = str(caught.value)
    assert str(socket) in message
    assert "install and start a Docker engine" in message


def test_docker_host_from_the_given_env_is_what_gets_tried() -> None:
    with pytest.raises(EngineUnavailableError, match=r"tcp://127\.0\.0\.1:9"):
        docker_client(env={"DOCKER_HOST": "tcp://127.0.0.1:9"}, timeout=5)
