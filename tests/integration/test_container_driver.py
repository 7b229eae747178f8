"""The container driver with real containers: a runtime that serves only Contract C's two routes, one that
crashes at start, images from the manifest's Dockerfile and requirements, and the sweep of dead runs.

Nothing here is mocked: the gateway and the mocks run in containers from this checkout's image. Every
container carries this session's label (WT_SESSION_LABEL) and the session fixture fails if one survives.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import httpx
import pytest
from docker.errors import NotFound

from windtunnel._config import load_settings
from windtunnel._core.vocabulary import Verdict
from windtunnel._drivers.container_plugin import ContainerRuntimePlugin, DriverSettings, prepare_images
from windtunnel._engine.cleanup import labelled, remove_run
from windtunnel._engine.images import runtime_image_tag
from windtunnel._engine.network import RUN_LABEL, create_run_network, run_labels
from windtunnel._packs.loader import load_pack
from windtunnel._packs.selection import Selection, select
from windtunnel._runtimes.manifest import load_manifest
from windtunnel._runtimes.resolve import resolve_runtime
from windtunnel._selftest.engine import SelftestOptions, run_selftest
from windtunnel.api import ReferenceCase, ReferenceDecision, Scenario, run_reference_case
from windtunnel.errors import RuntimeUnavailableError
from windtunnel.spi import AgentConfig

pytestmark = [pytest.mark.docker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
RUNTIMES = REPO / "tests" / "fixtures" / "runtimes"


@pytest.fixture(scope="module")
def driver_env(docker_client: docker.DockerClient, base_image: str, run_label: str) -> dict[str, str]:
    return {**os.environ, "WT_BASE_IMAGE": base_image, "WT_SESSION_LABEL": run_label}


@pytest.fixture(scope="module")
def two_routes(driver_env: dict[str, str]) -> Iterator[Any]:
    runtime = ContainerRuntimePlugin(load_manifest(RUNTIMES / "two_routes"), env=driver_env).build(
        "two-routes", "t", None
    )
    yield runtime
    runtime.close()


ECHO = Scenario(
    name="echo_once",
    prompt="Say hello to the harness.",
    target_facts=[["hello, harness"]],
    reference_cases=[
        ReferenceCase(name="greets", kind="golden", decisions=(ReferenceDecision(content="hello, harness"),))
    ],
)


def test_a_runtime_serving_only_inject_and_reset_becomes_ready_and_runs_a_turn(
    two_routes: Any, tmp_path: Path
) -> None:
    result = run_reference_case(
        two_routes, ECHO, "greets", AgentConfig(), runtime_name="two-routes", out_dir=tmp_path
    )
    assert result.trace.error is None, result.trace.error
    assert result.score.passed and result.trace.final_content == "hello, harness"
    (request,) = result.trace.model_requests or []
    assert request["messages"][-1] == {"role": "user", "content": "Say hello to the harness."}
    assert len(list(tmp_path.rglob("*.trace.json"))) == 1


def test_the_two_route_runtime_really_has_no_health_route(two_routes: Any) -> None:
    handle = two_routes.provision(AgentConfig(), [])
    try:  # http.server answers 501 to any GET: the driver found it ready all the same
        assert httpx.get(f"http://{handle.container.ip}:8647/wt/health", timeout=5).status_code == 501
    finally:
        handle.teardown()


def test_a_send_after_teardown_says_the_handle_was_torn_down(two_routes: Any) -> None:
    handle = two_routes.provision(AgentConfig(), [])
    handle.teardown()
    started = time.monotonic()
    with pytest.raises(RuntimeUnavailableError) as raised:
        handle.send([{"role": "user", "content": "Still there?"}], "s")
    assert "the handle was torn down" in raised.value.message
    assert "mid-turn" not in raised.value.message  # its removal was the teardown, not a death
    assert time.monotonic() - started < 1.0  # no waiting on the engine for a death that did not happen


def test_a_runtime_that_crashes_at_start_is_error_setup_with_its_trace(
    driver_env: dict[str, str], tmp_path: Path
) -> None:
    directory = RUNTIMES / "misbehaving" / "crash"
    described = resolve_runtime(str(directory), load_settings(REPO))
    plugin = ContainerRuntimePlugin(load_manifest(directory), env=driver_env)
    pack = load_pack(str(REPO / "scenarios" / "artifacts"))
    chosen = [item for item in select([pack], Selection()) if item.scenario.name == "artifact_guard"]
    started = time.monotonic()
    report = run_selftest(
        dataclasses.replace(described, plugin=plugin),
        chosen,
        SelftestOptions(out_root=tmp_path, lock_dir=tmp_path / "locks"),
    )
    assert time.monotonic() - started < 120  # each case fails at once, not after the 60 s start deadline
    assert report.cases and all(
        (c.verdict, c.subkind and c.subkind.value, c.harness_fault) == (Verdict.ERROR, "setup", False)
        for c in report.cases
    ), [c.detail for c in report.cases]
    assert all("container exited" in c.detail and "crashing at start" in c.detail for c in report.cases)
    assert len(list(report.out_dir.rglob("*.trace.json"))) == len(report.cases)
    assert len(list(report.out_dir.rglob("*.score.json"))) == len(report.cases)


def test_the_image_is_built_from_the_manifests_dockerfile_and_requirements(
    docker_client: docker.DockerClient, driver_env: dict[str, str], tmp_path: Path
) -> None:
    directory = tmp_path / "alt"
    files = {
        "runtime.toml": 'name = "Alt-Runtime"\n[image]\nbuild = "."\ndockerfile = "docker/Alt.Dockerfile"\n'
        'requirements = "deps/prod.txt"\n',
        "Dockerfile": "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nRUN false\n",  # the decoy: building it fails
        "deps/prod.txt": "rfc8785\n",
        "docker/Alt.Dockerfile": "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nRUN python3 -m venv /opt/venv\n"
        "COPY wheels /wheels\n"
        "RUN /opt/venv/bin/pip install --no-index --find-links /wheels -r /wheels/requirements.txt\n"
        'CMD ["/opt/venv/bin/python", "-c", "import rfc8785; print(rfc8785.dumps({\\"b\\": 1, \\"a\\": 2}).decode())"]\n',
    }
    for name, text in files.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text(text)
    images = prepare_images(docker_client, load_manifest(directory), DriverSettings.from_env(driver_env))
    tag = runtime_image_tag("Alt-Runtime")
    try:
        assert tag.startswith("windtunnel/runtime-alt-runtime-")
        # Containers start from the image id the build produced (a shared engine may move the tag meanwhile).
        assert images.runtime == docker_client.images.get(tag).id and images.runtime.startswith("sha256:")
        output = docker_client.containers.run(images.runtime, remove=True, network_mode="none")
        assert bytes(output).decode().strip() == '{"a":2,"b":1}'
    finally:
        with contextlib.suppress(NotFound):
            docker_client.images.remove(tag, force=True)


def test_building_the_plugin_sweeps_dead_runs_and_spares_live_ones(
    docker_client: docker.DockerClient,
    driver_env: dict[str, str],
    base_image: str,
    run_label: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The owner lives while its resources are made: a `wt` beside this test (which sweeps when it starts)
    # must not take them first. It dies just before the build, so the dead owner is this sweep's to find.
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    dead_run, live_run = f"{run_label}-dead-build", f"{run_label}-live-build"
    dead = run_labels(dead_run, session=run_label, pid=child.pid)
    network = docker_client.networks.create(f"wt-{dead_run}", internal=True, labels=dead)
    container = docker_client.containers.run(
        base_image, ["sleep", "60"], detach=True, network=network.name, labels=dead
    )
    live = create_run_network(docker_client, live_run, session=run_label)
    try:
        child.kill()
        child.wait()
        with caplog.at_level(logging.WARNING, logger="windtunnel._drivers.container_plugin"):
            runtime = ContainerRuntimePlugin(load_manifest(RUNTIMES / "two_routes"), env=driver_env).build(
                "t", "t", None
            )
        runtime.close()
        assert labelled(docker_client, RUN_LABEL, dead_run) == ([], [])
        assert [n.name for n in labelled(docker_client, RUN_LABEL, live_run)[1]] == [live.name]
        reported = " ".join(record.getMessage() for record in caplog.records)
        assert container.short_id in reported and network.name in reported and live.name not in reported
    finally:
        child.kill()
        child.wait()
        remove_run(docker_client, dead_run)
        remove_run(docker_client, live_run)


@pytest.mark.parametrize("check", ["final_answer", "intermediate_tool_calls"])  # a session turn; the runner
def test_a_runtime_failing_mid_check_leaves_its_log_lines_step_and_turn_as_evidence(
    driver_env: dict[str, str], check: str
) -> None:
    """HTTP 500 from /wt/inject after one model call: the check fails naming the scripted step it was on,
    with the runtime's own last log lines and the broken turn in the conversation view."""
    from windtunnel._conformance.kit import check_by_id, run_check
    from windtunnel._conformance.subject import Subject
    from windtunnel._core.vocabulary import CheckStatus

    directory = RUNTIMES / "misbehaving" / "midturn"
    plugin = ContainerRuntimePlugin(load_manifest(directory), env=driver_env)
    runtime = plugin.build("misbehaving-midturn", "t", None)
    try:
        result = run_check(check_by_id(check), Subject(name="misbehaving-midturn", runtime=runtime))
    finally:
        runtime.close()
    assert result.status is CheckStatus.FAILED, result.detail
    assert "after 1 of 3 scripted model call(s)" in result.detail and "500" in result.detail
    step = result.evidence["scripted_step"]
    due = {"final_answer": "answer ", "intermediate_tool_calls": "tool calls store(key, value)"}[check]
    assert step["last_served"] == "tool calls lookup(key)" and step["next_due"].startswith(due)
    assert any("breaks after its first model call" in line for line in result.evidence["runtime_log"])
    [conversation] = result.conversations
    assert conversation.error and "500" in conversation.error
    assert len(conversation.turns) == 1 and len(conversation.turns[0].model_calls) == 1
