"""The pieces of the engine-agnostic executor that need no engine: the routing decision of the reachability
probe, its fallback evidence, WT_PREBUILT_IMAGES, what the runner container gets of the project, the
runner's flags, docker contexts. The probe and the runner container themselves run in
tests/integration/test_executor_modes.py and `nox -s certify_in_container`."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from windtunnel._engine import reach
from windtunnel._engine.docker_env import context_host
from windtunnel._engine.prebuilt import ENV_VAR, encode, prebuilt_for
from windtunnel._engine.runner_peer import RUNNER_ENV
from windtunnel._pipeline.executor_mode import choose, runner_flags
from windtunnel._pipeline.in_container import _inside, project_archive
from windtunnel.errors import ConfigFileError, EngineUnavailableError

ROUTES = """Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0
docker0\t000011AC\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0
eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0
"""


@pytest.mark.parametrize(
    ("address", "direct"),
    [("172.17.0.5", True), ("192.0.2.9", True), ("172.18.0.2", False), ("10.1.2.3", False)],
)
def test_only_a_directly_connected_route_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, address: str, direct: bool
) -> None:
    routes = tmp_path / "route"
    routes.write_text(ROUTES)
    monkeypatch.setattr(reach, "ROUTES", routes)
    assert reach.directly_routed(address) is direct  # the default route (via a gateway) never counts


def test_without_a_routing_table_nothing_is_direct(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reach, "ROUTES", tmp_path / "missing")
    assert reach.directly_routed("172.17.0.5") is False


@pytest.mark.parametrize(
    ("host", "routable"),
    [
        ("tcp://10.0.0.1:2375", False),
        ("ssh://u@h", False),
        ("unix:///var/run/docker.sock", True),
        (None, True),
    ],
)
def test_the_fallback_evidence_is_the_engines_address(host: str | None, routable: bool) -> None:
    found = reach.by_address(host, "the probe container could not run")
    assert found.routable is routable and "could not run" in found.evidence


def test_prebuilt_images_are_read_by_runtime_and_a_bad_entry_names_the_variable() -> None:
    images = {
        "reference": {
            "windtunnel": "sha256:a",
            "runtime": "sha256:b",
            "netguard": "windtunnel/netguard:1",
            "digests": {"windtunnel": "a"},
        }
    }
    env = {ENV_VAR: encode(images)}
    assert prebuilt_for(env, "reference") == images["reference"]
    assert prebuilt_for({}, "reference") is None
    assert prebuilt_for(env, "other") is None  # not ready on the host side: the runner tries it itself
    with pytest.raises(ConfigFileError, match=ENV_VAR):
        prebuilt_for({ENV_VAR: "[1, 2]"}, "x")
    failed = {
        "x": {"failed": "the image of runtime 'x' did not build: step 2", "hint": None, "log_tail": ["E"]}
    }
    assert prebuilt_for({ENV_VAR: encode(failed)}, "x") == failed["x"]
    with pytest.raises(ConfigFileError, match="image ids must be strings"):
        prebuilt_for(
            {ENV_VAR: encode({"x": {"windtunnel": 1, "runtime": "b", "netguard": "n", "digests": {}}})}, "x"
        )
    with pytest.raises(ConfigFileError, match="netguard"):  # the runner never builds the fence's image
        prebuilt_for({ENV_VAR: encode({"x": {"windtunnel": "a", "runtime": "b", "digests": {}}})}, "x")


def test_the_runner_gets_the_project_without_caches_vcs_or_run_output(tmp_path: Path) -> None:
    root = tmp_path / "project"
    for name in ("pyproject.toml", "src/p/a.py", "runtimes/r/.dockerignore", "runtimes/r/runtime.toml"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x")
    for name in (".git/HEAD", ".venv/bin/python", "src/p/__pycache__/a.pyc", "out/run.json", "mine/b.txt"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x")
    names = {n for n in _names(project_archive(root, skip=root / "mine")) if "." in Path(n).name}
    assert names == {
        "work/pyproject.toml",
        "work/src/p/a.py",
        "work/runtimes/r/.dockerignore",  # a build context's own ignore file is part of it
        "work/runtimes/r/runtime.toml",
    }
    assert "wt/source/pyproject.toml" in _names(project_archive(root, target="/wt/source"))


def _names(data: bytes) -> list[str]:
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        return archive.getnames()


def test_a_runtime_named_by_a_path_under_the_project_keeps_its_place(tmp_path: Path) -> None:
    assert _inside(str(tmp_path / "runtimes" / "mine"), tmp_path) == "/work/runtimes/mine"
    assert _inside("reference", tmp_path) == "reference"
    assert _inside("registry.example/agent:1", tmp_path) == "registry.example/agent:1"


def test_the_runner_repeats_fail_fast_tiers_no_cache_and_the_view() -> None:
    assert runner_flags(True, ["smoke", "quarantined"]) == [
        "--plain",
        "--fail-fast",
        "--tier",
        "smoke",
        "--tier",
        "quarantined",
    ]
    assert runner_flags(False, None) == ["--plain"]
    assert runner_flags(False, None, no_cache=True) == ["--plain", "--no-cache"]
    assert runner_flags(False, None, json=True) == ["--json"]


def test_a_process_in_the_runner_container_is_always_host() -> None:
    """Decided from the environment the CLI's settings read, never the process's own."""
    from windtunnel._drivers.container_plugin import DriverSettings

    driver = DriverSettings.from_env({})
    assert choose("container", lambda _line: None, {RUNNER_ENV: "wt-runner-x"}, driver) == "host"
    assert choose("container", lambda _line: None, {}, driver) == "container"
    assert choose("host", lambda _line: None, {}, driver) == "host"


def test_an_unknown_docker_context_is_one_clear_error() -> None:
    assert context_host({}) is None or isinstance(context_host({}), str)
    assert context_host({"DOCKER_CONTEXT": "default"}) is None
    with pytest.raises(EngineUnavailableError, match="does not exist"):
        context_host({"DOCKER_CONTEXT": "no-such-context"})


def test_a_runtime_that_did_not_build_on_the_host_side_fails_its_build_in_the_runner() -> None:
    from windtunnel._drivers.container_plugin import DriverSettings, RuntimeBuildError, _prebuilt

    failed = {
        "failed": "the image of runtime 'x' did not build: step 2/3",
        "hint": "fix it",
        "log_tail": ["E: x"],
    }
    settings = DriverSettings.from_env({ENV_VAR: encode({"x": failed})})  # as the runner's settings read it
    with pytest.raises(RuntimeBuildError, match="did not build: step 2/3") as caught:
        _prebuilt(None, "x", settings)  # no engine is asked: nothing is built or looked up
    assert caught.value.context == {"runtime": "x", "log_tail": ["E: x"]}
    assert _prebuilt(None, "y", settings) is None  # not named: the runner tries it itself
