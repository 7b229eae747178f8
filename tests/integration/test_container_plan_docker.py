"""What the Docker executor really starts is what the container plan says: the commands, entrypoint, env,
mounts and network aliases of the gateway, a mock and a runtime container, read back from the engine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from windtunnel._config import load_settings
from windtunnel._drivers.container_plan_model import ServicePlan
from windtunnel._drivers.network import RUN_LABEL
from windtunnel._drivers.plugin import ContainerRuntimePlugin
from windtunnel._packs.loader import kit_pack
from windtunnel._pipeline.config import CertifyConfig
from windtunnel._pipeline.container_plan import container_plan
from windtunnel._runtimes.manifest import load_manifest
from windtunnel.spi import AgentConfig

pytestmark = [pytest.mark.docker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]


def _aliases(container: Any) -> set[str]:
    networks = container.attrs["NetworkSettings"]["Networks"]
    return {alias for network in networks.values() for alias in network.get("Aliases") or []}


def _env(container: Any) -> dict[str, str]:
    return dict(item.split("=", 1) for item in container.attrs["Config"]["Env"])


def _executor_args(spec: ServicePlan) -> list[str]:
    """The plan's args as the Docker executor runs them. The one difference is by design: under Dagger the
    runner reaches a mock by its runner alias, so the plan tells the mock to accept that name as Host
    (windtunnel._drivers.topology.mock_args); the Docker executor's runner reaches it by the container's
    IP address, which needs no name, so its mock is not told the Dagger runner's name."""
    args = list(spec.args or ())
    if spec.role != "mock":
        return args
    runner_name = ["--allow-host", spec.runner_alias]
    at = [i for i in range(len(args)) if args[i : i + 2] == runner_name]
    assert at, f"the plan's mock accepts its runner alias {spec.runner_alias} as Host"
    return args[: at[0]] + args[at[0] + 2 :]


def _assert_runs(container: Any, spec: ServicePlan) -> None:
    config = container.attrs["Config"]
    assert spec.alias in _aliases(container)
    assert config["Labels"]["windtunnel.role"] == spec.role
    if spec.args is not None:
        assert config["Entrypoint"] == ["wt"] and config["Cmd"] == _executor_args(spec)
    assert _env(container).items() >= dict(spec.env).items()
    mounts = {m["Destination"]: m["Source"] for m in container.attrs["Mounts"]}
    assert {m.target: str(REPO / m.source) for m in spec.mounts}.items() <= mounts.items()


def test_the_docker_executor_starts_what_the_plan_describes(
    docker_client: Any, base_image: str, run_label: str, tmp_path: Path
) -> None:
    config = CertifyConfig.from_settings(load_settings(cwd=REPO), runtimes=(), out_dir=tmp_path)
    (stack,) = container_plan(config, base_image=base_image).stacks
    plugin = ContainerRuntimePlugin(
        load_manifest(REPO / "runtimes" / "reference"),
        env={"WT_BASE_IMAGE": base_image, "WT_SESSION_LABEL": run_label},
    )
    runtime = plugin.build("reference", run_label, None)
    try:
        mcps = runtime.start_mcps(kit_pack().plans())
        handle = runtime.provision(AgentConfig(), mcps)
        started = docker_client.containers.list(filters={"label": f"{RUN_LABEL}={runtime.stack.run_id}"})
        by_role: dict[str, list[Any]] = {}
        for container in started:
            by_role.setdefault(container.attrs["Config"]["Labels"]["windtunnel.role"], []).append(container)
        (gateway,) = by_role["gateway"]
        _assert_runs(gateway, stack.gateway)
        (mock,) = by_role["mock"]
        (kit,) = (spec for spec in stack.mocks if spec.pack == kit_pack().name)
        _assert_runs(mock, kit)
        (container,) = by_role["runtime"]
        env = _env(container)
        profiles = [spec for spec in stack.runtimes if dict(spec.env).items() <= env.items()]
        assert len(profiles) == 1, "the runtime container runs with exactly one planned profile's env"
        assert container.attrs["Config"]["Image"] == runtime.runtime_image
        handle.teardown()
    finally:
        runtime.close()
