"""Images and networks for real: bootstrap or reuse the base image, build offline, run `wt` inside,
and prove a run's network has no way out and no way across to another run."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import docker
import pytest
from docker.errors import NotFound
from docker.models.networks import Network

from windtunnel._config import WINDTUNNEL_DOCKERFILE
from windtunnel._engine.base_image import ORIGIN_LABEL, bootstrap_tag, ensure_base_image, probe_python
from windtunnel._engine.cleanup import labelled, remove_run, sweep_leftovers
from windtunnel._engine.images import (
    CONTENT_HASH_LABEL,
    IMAGE_KIND_LABEL,
    WINDTUNNEL_SOURCES,
    BuiltImage,
    ImageBuildError,
    build_image,
    build_runtime_image,
    build_windtunnel_image,
)
from windtunnel._engine.network import RUN_LABEL, create_run_network, run_labels
from windtunnel._runtimes.manifest import load_manifest

pytestmark = pytest.mark.docker

REPO = Path(__file__).resolve().parents[2]

CONNECT = """
import socket, sys, time
deadline = time.monotonic() + float(sys.argv[2])
while True:
    try:
        socket.create_connection((sys.argv[1], 8000), timeout=2).close()
        print("connected")
        break
    except OSError as exc:
        if time.monotonic() > deadline:
            print("failed", type(exc).__name__, exc)
            break
        time.sleep(0.2)
"""


def _run(
    client: docker.DockerClient, image: str, command: list[str], labels: Mapping[str, str], network: str
) -> str:
    """Run to completion; `network` is a network name, "none", or "container:<id>" to share a namespace."""
    output = client.containers.run(
        image, command, remove=True, network_mode=network, labels=dict(labels), stderr=True
    )
    return bytes(output).decode().strip()


def _remove_image(client: docker.DockerClient, image: BuiltImage) -> None:
    with contextlib.suppress(NotFound):
        client.images.remove(image.id, force=True)


def test_base_image_has_python3_for_the_wheelhouse(
    docker_client: docker.DockerClient, base_image: str
) -> None:
    target = probe_python(docker_client, base_image)
    assert target.version.startswith("3.")
    assert target.platform_tags()  # a glibc image, so manylinux wheels fit it
    if base_image == bootstrap_tag():
        assert docker_client.images.get(base_image).labels[ORIGIN_LABEL] == "debootstrap"


def test_an_unpullable_base_image_falls_back_to_the_bootstrapped_one(
    docker_client: docker.DockerClient, base_image: str
) -> None:
    if base_image != bootstrap_tag():
        pytest.skip(f"{base_image} was available, so there is no bootstrapped image to fall back to")
    never = "windtunnel/never-published:0"
    assert ensure_base_image(docker_client, never, pull_timeout=15) == base_image


def test_wt_help_runs_in_the_windtunnel_image(
    docker_client: docker.DockerClient, windtunnel_image: BuiltImage, session_labels: dict[str, str]
) -> None:
    output = _run(docker_client, windtunnel_image.id, ["--help"], session_labels, network="none")
    assert "Wind Tunnel certifies the plumbing of agent test harnesses." in output
    assert "images" in output
    # By id: another checkout's build may move the tag meanwhile.
    labels = docker_client.images.get(windtunnel_image.id).labels
    assert labels[CONTENT_HASH_LABEL] == windtunnel_image.content_hash
    assert labels[IMAGE_KIND_LABEL] == "windtunnel"
    assert windtunnel_image.digest.startswith("sha256:")


def test_an_unchanged_windtunnel_image_is_reused_not_rebuilt(
    docker_client: docker.DockerClient,
    base_image: str,
    windtunnel_image: BuiltImage,
    run_label: str,
    image_build_times: dict[str, float],
    tmp_path: Path,
) -> None:
    # From a snapshot of the sources, so an edit to the checkout while the tests run cannot pass for a
    # cache miss. Unedited, the snapshot is the fixture's image already; edited, the first build makes it.
    snapshot = tmp_path / "repo"
    for entry in (*WINDTUNNEL_SOURCES, str(WINDTUNNEL_DOCKERFILE)):
        source = REPO / entry
        if source.is_dir():
            shutil.copytree(source, snapshot / entry, ignore=shutil.ignore_patterns("__pycache__"))
        elif source.is_file():
            (snapshot / entry).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, snapshot / entry)
    tag = f"windtunnel/test-warm:{run_label}"
    first = build_windtunnel_image(docker_client, repo_root=snapshot, base_image=base_image, tag=tag)
    started = time.monotonic()
    again = build_windtunnel_image(docker_client, repo_root=snapshot, base_image=base_image, tag=tag)
    image_build_times["windtunnel image (warm)"] = time.monotonic() - started
    try:
        assert again.reused
        assert again.id == first.id
        assert again.content_hash == first.content_hash
    finally:
        # Only this test's tag: forced, because a container of a concurrent test (an xdist worker) may use
        # the same image (equal content hash); the engine then untags it and keeps the image for them.
        docker_client.images.remove(tag, force=True)


def test_builds_run_with_no_network(
    docker_client: docker.DockerClient, base_image: str, run_label: str, tmp_path: Path
) -> None:
    # What the build step saw is written into the image; reading it back sends no packet anywhere.
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(
        "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\n"
        "RUN ls /sys/class/net > /build-ifaces && tail -n +2 /proc/net/route > /build-routes\n"
    )
    built = build_image(
        docker_client,
        context_dir=None,
        dockerfile=dockerfile,
        tag=f"windtunnel/test-offline:{run_label}",
        base_image=base_image,
        wheelhouse_dir=None,
        labels={IMAGE_KIND_LABEL: "test-offline"},
    )
    try:
        seen = _run(docker_client, built.id, ["cat", "/build-ifaces", "/build-routes"], {}, network="none")
        assert seen == "lo"
    finally:
        _remove_image(docker_client, built)


def test_concurrent_builds_of_the_same_content_make_one_image(
    docker_client: docker.DockerClient, base_image: str, run_label: str, tmp_path: Path
) -> None:
    # Two sessions on one machine (or two xdist workers) building the same sources at once: the second
    # waits for the first and reuses its image, so neither ends up holding an image the other untags.
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(f"ARG BASE_IMAGE\nFROM ${{BASE_IMAGE}}\nRUN sleep 2 && echo {run_label} > /made\n")

    def build(tag: str) -> BuiltImage:
        return build_image(
            docker_client,
            context_dir=None,
            dockerfile=dockerfile,
            tag=tag,
            base_image=base_image,
            wheelhouse_dir=None,
            labels={IMAGE_KIND_LABEL: "test-concurrent"},
            lock_dir=tmp_path
            / "locks",  # the caller's lock directory (Settings.lock_dir), as the driver passes it
        )

    with ThreadPoolExecutor(max_workers=2) as pool:
        first, second = pool.map(build, [f"windtunnel/test-concurrent-{n}:{run_label}" for n in (1, 2)])
    try:
        assert first.id == second.id
        assert sorted([first.reused, second.reused]) == [False, True]
        twins = docker_client.images.list(filters={"label": f"{CONTENT_HASH_LABEL}={first.content_hash}"})
        assert [image.id for image in twins] == [first.id]
    finally:
        _remove_image(docker_client, first)


def test_a_failing_build_names_the_step_and_shows_its_output(
    docker_client: docker.DockerClient, base_image: str, run_label: str, tmp_path: Path
) -> None:
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text("ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nRUN echo about-to-fail && exit 3\n")
    with pytest.raises(ImageBuildError) as caught:
        build_image(
            docker_client,
            context_dir=None,
            dockerfile=dockerfile,
            tag=f"windtunnel/test-failing:{run_label}",
            base_image=base_image,
            wheelhouse_dir=None,
        )
    message = str(caught.value)
    assert "returned a non-zero code: 3" in message
    assert "about-to-fail" in message
    assert "no network" in message


def test_a_runtime_directory_builds_with_its_requirements_as_wheels(
    docker_client: docker.DockerClient, base_image: str, run_label: str, tmp_path: Path
) -> None:
    runtime = tmp_path / "tinyruntime"
    runtime.mkdir()
    (runtime / "requirements.txt").write_text("rfc8785\n")
    (runtime / "agent.py").write_text('import rfc8785\nprint(rfc8785.dumps({"b": 1, "a": 2}).decode())\n')
    (runtime / "Dockerfile").write_text(
        "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nRUN python3 -m venv /opt/venv\nCOPY wheels /wheels\n"
        "RUN /opt/venv/bin/pip install --no-index --find-links /wheels -r /wheels/requirements.txt\n"
        'COPY agent.py /app/agent.py\nCMD ["/opt/venv/bin/python", "/app/agent.py"]\n'
    )
    tag = f"windtunnel/test-runtime:{run_label}"
    built = build_runtime_image(docker_client, runtime, base_image=base_image, tag=tag)
    try:
        assert _run(docker_client, built.id, [], {}, network="none") == '{"a":2,"b":1}'
        assert docker_client.images.get(tag).labels[IMAGE_KIND_LABEL] == "runtime:tinyruntime"
        again = build_runtime_image(docker_client, runtime, base_image=base_image, tag=tag)
        assert again.reused
        assert again.id == built.id
    finally:
        _remove_image(docker_client, built)


def test_a_runtime_image_is_rebuilt_when_a_local_package_changes_and_reused_when_not(
    docker_client: docker.DockerClient, base_image: str, run_label: str, tmp_path: Path
) -> None:
    # A copy of the reference runtime with a copy of the library beside it.
    for entry in ("runtimes/reference", "packages/windtunnel-inject", "containers/python-runtime.Dockerfile"):
        source, target = REPO / entry, tmp_path / entry
        if source.is_dir():
            ignored = shutil.ignore_patterns("__pycache__", "*.egg-info", "poison")
            shutil.copytree(source, target, ignore=ignored)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    # The copy builds with the copied library (a path), not Wind Tunnel's own (windtunnel:windtunnel-inject).
    toml = tmp_path / "runtimes" / "reference" / "runtime.toml"
    toml.write_text(
        toml.read_text().replace('["windtunnel:windtunnel-inject"]', '["../../packages/windtunnel-inject"]')
    )
    manifest = load_manifest(tmp_path / "runtimes" / "reference")
    assert manifest.packages == ((tmp_path / "packages" / "windtunnel-inject").resolve(),)
    tag = f"windtunnel/test-runtime-package:{run_label}"
    built: list[BuiltImage] = []

    def build() -> BuiltImage:
        built.append(
            build_runtime_image(
                docker_client,
                tmp_path / "runtimes" / "reference",
                base_image=base_image,
                tag=tag,
                dockerfile=manifest.dockerfile,
                requirements=manifest.requirements,
                packages=manifest.packages,
                build_args=manifest.build_args,
            )
        )
        return built[-1]

    try:
        first = build()
        assert build().reused
        module = tmp_path / "packages/windtunnel-inject/src/windtunnel_inject/_app.py"
        module.write_text(module.read_text() + "# edited: a new build must carry this line\n")
        edited = build()
        assert not edited.reused and edited.content_hash != first.content_hash
        check = "import inspect, windtunnel_inject._app as m; print('# edited' in inspect.getsource(m))"
        assert _run(docker_client, edited.id, ["/opt/venv/bin/python", "-c", check], {}, "none") == "True"
    finally:
        for image in built:
            _remove_image(docker_client, image)


@pytest.fixture
def networks(docker_client: docker.DockerClient, run_label: str) -> Iterator[dict[str, Network]]:
    """Two runs' internal networks, removed with everything on them afterwards."""
    runs = {"a": f"{run_label}-a", "b": f"{run_label}-b"}
    yield {key: create_run_network(docker_client, run_id, session=run_label) for key, run_id in runs.items()}
    for run_id in runs.values():
        remove_run(docker_client, run_id)
        assert labelled(docker_client, RUN_LABEL, run_id) == ([], [])


def test_a_run_network_has_no_way_to_another_run(
    docker_client: docker.DockerClient, base_image: str, run_label: str, networks: dict[str, Network]
) -> None:
    labels_a = run_labels(f"{run_label}-a", session=run_label)
    labels_b = run_labels(f"{run_label}-b", session=run_label)
    server = docker_client.containers.run(
        base_image,
        ["python3", "-m", "http.server", "8000", "--bind", "0.0.0.0"],
        detach=True,
        network=networks["b"].name,
        labels=labels_b,
    )
    server.reload()
    address = server.attrs["NetworkSettings"]["Networks"][networks["b"].name]["IPAddress"]
    connect = ["python3", "-c", CONNECT, address]
    # Control: from its own run's network the server answers, so a failure below is the network's doing.
    assert _run(docker_client, base_image, [*connect, "20"], labels_b, networks["b"].name) == "connected"
    plain = _run(docker_client, base_image, [*connect, "3"], labels_a, networks["a"].name)
    assert plain.startswith("failed"), plain


def test_sweep_removes_a_dead_owners_resources_and_spares_a_live_one(
    docker_client: docker.DockerClient, base_image: str, run_label: str
) -> None:
    # The owner lives while its resources are made: a `wt` beside this test (which sweeps when it starts)
    # must not take them first. It dies just before the sweep, so the dead owner is this sweep's to find.
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    dead_run, live_run = f"{run_label}-dead", f"{run_label}-live"
    dead_labels = run_labels(dead_run, session=run_label, pid=child.pid)
    network = docker_client.networks.create(f"wt-{dead_run}", internal=True, labels=dead_labels)
    container = docker_client.containers.run(
        base_image, ["sleep", "60"], detach=True, network=network.name, labels=dead_labels
    )
    live = create_run_network(docker_client, live_run, session=run_label)
    try:
        child.kill()
        child.wait()
        removed = sweep_leftovers(docker_client)
        assert any(container.short_id in line and f"owner pid {child.pid} gone" in line for line in removed)
        assert any(network.name in line for line in removed)
        assert not any(live.name in line for line in removed)
        assert labelled(docker_client, RUN_LABEL, dead_run) == ([], [])
        assert [n.name for n in labelled(docker_client, RUN_LABEL, live_run)[1]] == [live.name]
    finally:
        child.kill()
        child.wait()
        remove_run(docker_client, dead_run)
        remove_run(docker_client, live_run)
