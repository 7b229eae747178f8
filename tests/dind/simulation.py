"""The offline proof of `dagger call certify`: its wiring (pipeline/src/windtunnel_dagger/wiring.py), with
docker-py on this machine's engine instead of a Dagger engine (none can be downloaded here; none is faked).

An engine container from a Docker-in-Docker image built offline (Debian's docker.io package, bootstrapped
once and kept), its /var/lib/docker on a volume kept between runs as Dagger keeps its cache volume; a runner
container on a shared network with the engine's alias, DOCKER_HOST=tcp://docker:2375, the same command, env
and mounts as the module's runner. The runner's cache mount is the host's cache directory, holding the
wheelhouses and the saved base and netguard images the host built (the module's runner downloads them instead).
`nox -s certify_in_container` runs it (`python -m tests.dind.simulation`); tests/unit/test_dagger_module.py checks that it reads the wiring the
module reads.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parents[2]
DIND_TAG = "windtunnel/dind:bookworm"
DIND_PACKAGES = ("docker.io", "iptables", "ca-certificates")
LABELS = {"windtunnel.session": "certify-in-container"}
"""On every container, network and volume this simulation creates: what it removes, and nothing else."""
STATE_VOLUME_PREFIX = "wt-sim-"
ENGINE_READY_S = 90.0
UNPRIVILEGED = {
    "cap_add": ["ALL"],
    "cap_drop": ["SYS_RESOURCE"],
    "security_opt": ["seccomp=unconfined", "apparmor=unconfined", "systempaths=unconfined"],
    "cgroupns": "host",
}
"""What a nested dockerd with overlay2 needs where `--privileged` is refused (a host without
CAP_SYS_RESOURCE); with /sys/fs/cgroup mounted read-write and a volume on /var/lib/docker."""


def wiring() -> ModuleType:
    """wiring.py by its path: the module's package imports dagger-io, which the simulation does without."""
    path = REPO / "pipeline" / "src" / "windtunnel_dagger" / "wiring.py"
    spec = importlib.util.spec_from_file_location("windtunnel_dagger_wiring", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def engine_spec(image: str, network: str, state_volume: str, *, privileged: bool) -> dict[str, Any]:
    """docker-py kwargs of the engine container: the module's engine service, as Docker runs it."""
    wire = wiring()
    volumes = {state_volume: {"bind": wire.ENGINE_STATE, "mode": "rw"}}
    spec: dict[str, Any] = {
        "image": image,
        "command": list(wire.ENGINE_ARGS),
        "environment": dict(wire.ENGINE_ENV),
        "volumes": volumes,
        "network": network,
        "networking_config_aliases": [wire.ENGINE_ALIAS],
        "ports": {f"{wire.ENGINE_PORT}/tcp": ("127.0.0.1", None)},
        "labels": dict(LABELS),
        "detach": True,
    }
    if privileged:
        spec["privileged"] = True
    else:
        spec |= UNPRIVILEGED
        volumes["/sys/fs/cgroup"] = {"bind": "/sys/fs/cgroup", "mode": "rw"}
    return spec


def runner_spec(
    image: str, network: str, *, run: str, runtimes: Sequence[str], cache_dir: Path, key_pem: str | None
) -> dict[str, Any]:
    """docker-py kwargs of the runner container: the module's runner, as Docker runs it."""
    wire = wiring()
    env = wire.runner_env(run)
    if key_pem is not None:
        env[wire.KEY_ENV] = key_pem  # the module passes it as a secret variable
    cache = {str(cache_dir.resolve()): {"bind": path, "mode": "rw"} for path in wire.RUNNER_MOUNTS}
    return {
        "image": image,
        "entrypoint": [],
        "command": wire.certify_command(runtimes),
        "environment": env,
        "volumes": cache,
        "working_dir": wire.SOURCE_DIR,
        "network": network,
        "labels": dict(LABELS),
    }


def dind_image(client: Any, cache_dir: Path) -> str:
    """The Docker-in-Docker image, bootstrapped once from Debian packages and kept (in the engine and as a
    saved tar in the cache directory)."""
    from windtunnel._engine.base_image import bootstrap_base_image, image_present
    from windtunnel._engine.base_transfer import save, saved_tar, transfer

    if image_present(client, DIND_TAG) or transfer(client, DIND_TAG, cache_dir):
        return DIND_TAG
    print(f"bootstrapping {DIND_TAG} from Debian packages (once)", flush=True)
    bootstrap_base_image(client, tag=DIND_TAG, packages=DIND_PACKAGES)
    save(client, DIND_TAG, saved_tar(DIND_TAG, cache_dir))
    return DIND_TAG


@contextmanager
def engine(client: Any, image: str, state_volume: str) -> Iterator[tuple[Any, int]]:
    """The engine container on a network of its own; yields (network, the engine's port on 127.0.0.1).
    Removes both afterwards; the state volume stays (the warm cache)."""
    import docker
    from docker.errors import APIError

    network = client.networks.create(f"wt-sim-{uuid.uuid4().hex[:8]}", driver="bridge", labels=LABELS)
    container = None
    try:
        try:
            container = _start_engine(client, engine_spec(image, network.name, state_volume, privileged=True))
        except APIError:
            container = _start_engine(
                client, engine_spec(image, network.name, state_volume, privileged=False)
            )
        container.reload()
        port = int(container.attrs["NetworkSettings"]["Ports"][f"{wiring().ENGINE_PORT}/tcp"][0]["HostPort"])
        _wait_ready(docker, port, container)
        yield network, port
    finally:
        if container is not None:
            container.remove(force=True)
        network.remove()


def _start_engine(client: Any, spec: dict[str, Any]) -> Any:
    """Create and start the engine container with the low-level API: `systempaths=unconfined` is a CLI
    option that becomes empty MaskedPaths and ReadonlyPaths, which docker-py's models do not expose."""
    network = spec["network"]
    options = list(spec.get("security_opt", []))
    unconfined_paths = "systempaths=unconfined" in options
    host_config = client.api.create_host_config(
        binds=[f"{source}:{v['bind']}:{v['mode']}" for source, v in spec["volumes"].items()],
        port_bindings={int(port.split("/")[0]): binding for port, binding in spec["ports"].items()},
        privileged=spec.get("privileged", False),
        cap_add=spec.get("cap_add"),
        cap_drop=spec.get("cap_drop"),
        security_opt=[o for o in options if o != "systempaths=unconfined"] or None,
        cgroupns=spec.get("cgroupns"),
        network_mode=network,
    )
    if unconfined_paths:
        host_config["MaskedPaths"], host_config["ReadonlyPaths"] = [], []
    endpoint = client.api.create_endpoint_config(aliases=spec["networking_config_aliases"])
    created = client.api.create_container(
        spec["image"],
        command=spec["command"],
        environment=spec["environment"],
        labels=spec["labels"],
        ports=[int(port.split("/")[0]) for port in spec["ports"]],
        volumes=[v["bind"] for v in spec["volumes"].values()],
        host_config=host_config,
        networking_config=client.api.create_networking_config({network: endpoint}),
    )
    container = client.containers.get(created["Id"])
    try:
        container.start()
    except Exception:
        container.remove(force=True)
        raise
    return container


def _wait_ready(docker: Any, port: int, container: Any) -> None:
    deadline = time.monotonic() + ENGINE_READY_S
    while time.monotonic() < deadline:
        try:
            inner = docker.DockerClient(base_url=f"tcp://127.0.0.1:{port}", timeout=5)  # asks its version
        except Exception:  # not up yet
            container.reload()
            if container.status == "exited":
                break
            time.sleep(0.5)
            continue
        inner.close()
        return
    logs = container.logs(tail=30).decode("utf-8", "replace")
    raise SystemExit(f"the engine container did not answer on 127.0.0.1:{port}:\n{logs}")


def run_runner(
    client: Any,
    network: Any,
    *,
    image: str,
    runtimes: Sequence[str],
    cache_dir: Path,
    key_pem: str | None,
    out: Path,
) -> int:
    """The runner: the source copied to SOURCE_DIR, the wiring's command; its bundle into `out`."""
    from windtunnel._engine.files import copy_out, put
    from windtunnel._pipeline.in_container import project_archive

    wire = wiring()
    spec = runner_spec(
        image, network.name, run=uuid.uuid4().hex, runtimes=runtimes, cache_dir=cache_dir, key_pem=key_pem
    )
    runner = client.containers.create(spec.pop("image"), **spec)
    try:
        put(runner, project_archive(REPO, target=wire.SOURCE_DIR), "the source")
        runner.start()
        for chunk in runner.logs(stream=True, follow=True):
            sys.stdout.write(chunk.decode("utf-8", "replace"))
            sys.stdout.flush()
        code = int(runner.wait()["StatusCode"])
        copy_out(runner, wire.BUNDLE_DIR, out)
        return code
    finally:
        runner.remove(force=True)


def host_images(client: Any, cache_dir: Path, runtimes: Sequence[str]) -> str:
    """The host builds the images once (its pip fills the wheelhouse cache the runner reads) and saves the
    base image and the netguard image into the cache; returns the windtunnel image, the runner's image here."""
    from windtunnel._config import load_settings
    from windtunnel._drivers.container_plugin import DriverSettings, prepare_images
    from windtunnel._engine.base_transfer import save, saved_tar
    from windtunnel._runtimes.resolve import resolve_runtimes

    settings = DriverSettings.from_env({**os.environ, "WT_CACHE_DIR": str(cache_dir)})
    project = load_settings(cwd=REPO)
    windtunnel = ""
    for description in resolve_runtimes(("reference", *runtimes), project):
        if description.manifest is not None and description.driver == "container":
            windtunnel = prepare_images(client, description.manifest, settings).windtunnel
    from windtunnel._engine.base_image import bootstrap_tag
    from windtunnel._engine.fence import NETGUARD_TAG

    for tag in (bootstrap_tag(), NETGUARD_TAG):  # the fresh engine loads them; it reaches no Debian mirror
        tar = saved_tar(tag, cache_dir)
        if not tar.is_file():
            save(client, tag, tar)
    return windtunnel


def measured(bundle: Path) -> int:
    """1 unless recovery, egress_closed and every tape check of every runtime were measured (none
    NOT_MEASURED), after printing them."""
    checks = json.loads((bundle / "checks.json").read_text(encoding="utf-8"))["checks"]
    wanted = [
        c
        for c in checks
        if c["id"].endswith(("/conformance/recovery", "/conformance/egress_closed")) or "/tapes/" in c["id"]
    ]
    for check in wanted:
        print(f"  {check['id']}: {check['status']}")
    unmeasured = [c["id"] for c in wanted if c["status"] == "not_measured"]
    return 1 if unmeasured or not wanted else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="where each run's bundle goes (DIR/run-N)")
    parser.add_argument("--key", type=Path, help="the signing key (PEM) the runner gets as WT_SIGNING_KEY")
    parser.add_argument("--runtime", action="append", default=[], help="runtimes to certify (repeatable)")
    parser.add_argument("--runs", type=int, default=2, help="runs against the same engine state (cold, warm)")
    parser.add_argument("--cache-dir", type=Path, default=REPO / ".wt-cache" / "dind")
    args = parser.parse_args(argv)
    from windtunnel._engine.docker_env import docker_client

    client = docker_client()
    cache = args.cache_dir.resolve()
    key = args.key.read_text(encoding="utf-8") if args.key else None
    started = time.perf_counter()
    image = dind_image(client, cache)
    runner_image = host_images(client, cache, args.runtime)
    print(f"host side ready in {time.perf_counter() - started:.1f} s (dind image, host images)", flush=True)
    state = f"{STATE_VOLUME_PREFIX}{wiring().ENGINE_STATE_CACHE}"
    if not client.volumes.list(filters={"name": state}):
        client.volumes.create(state, labels=LABELS)
    codes = []
    with engine(client, image, state) as (network, port):
        print(f"engine up: DOCKER_HOST=tcp://127.0.0.1:{port} from the host", flush=True)
        for run in range(1, args.runs + 1):
            began = time.perf_counter()
            out = args.out / f"run-{run}"
            shutil.rmtree(out, ignore_errors=True)  # out/dind is this simulation's own
            code = run_runner(
                client,
                network,
                image=runner_image,
                runtimes=args.runtime,
                cache_dir=cache,
                key_pem=key,
                out=out,
            )
            codes.append(code if code else measured(out))
            print(
                f"run {run}: exit {code}, wall time {time.perf_counter() - began:.1f} s, bundle {out}",
                flush=True,
            )
    return max(codes)


if __name__ == "__main__":
    sys.exit(main())
