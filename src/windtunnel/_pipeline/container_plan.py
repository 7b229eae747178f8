"""The container plan of a certify run: images to build, services to start, env, aliases, stage order.

`container_plan()` describes a whole certify run as data, built from the container topology the Docker
executor uses (windtunnel._drivers.topology): `wt certify --print-plan` prints it as JSON, and the Dagger
module (pipeline/) turns that JSON into `dag.container()` builds and services.

A runtime's env depends on the config and the mocks it is provisioned with. Docker starts a container
per provision; an executor that starts services up front (Dagger) starts one runtime service per distinct
env ("profile") the stage plan will ask for. `provisions()` lists those; a provision it did not foresee
fails loudly in the bound driver (windtunnel._drivers.bound) instead of running with the wrong env.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from windtunnel._core.agent_runtime import AgentConfig
from windtunnel._drivers.container_plan_model import ContainerPlan, StackPlan
from windtunnel._drivers.topology import (
    WINDTUNNEL_IMAGE,
    gateway_service,
    mock_service,
    runtime_image_plan,
    runtime_service,
    windtunnel_image_plan,
)
from windtunnel._runtimes.manifest import RuntimeManifest

if TYPE_CHECKING:
    from windtunnel._core.agent_runtime import MockServerPlan
    from windtunnel._packs.selection import Selected
    from windtunnel._pipeline.config import CertifyConfig


def stage_order() -> tuple[str, ...]:
    """The stage names in run order: the per-runtime PLAN, then publish for the whole run."""
    from windtunnel._bundle.models import Stage
    from windtunnel._pipeline.plan import PLAN

    return (*(step.stage.value for step in PLAN), Stage.PUBLISH.value)


def provisions(
    manifest: RuntimeManifest, selected: Sequence[Selected]
) -> list[tuple[AgentConfig, list[MockServerPlan]]]:
    """Every (config, mocks) the stage plan provisions this runtime with and the runtime accepts.

    Conformance: the kit's mocks or none, with the default config or each config the kit provisions a
    runtime declaring these fields with (`kit_configs`: the sampling runs, the declared config); the
    canary: no mocks; selftest: each pack's mocks with the pack's and scenario's agent setup.
    """
    from windtunnel._conformance.checks_config import kit_configs
    from windtunnel._packs.loader import kit_pack
    from windtunnel._runner.batch import effective_config

    kit = kit_pack().plans()
    found: list[tuple[AgentConfig, list[MockServerPlan]]] = [(AgentConfig(), []), (AgentConfig(), kit)]
    found += [(config, kit) for config in kit_configs(manifest.supported)]
    for item in selected:
        if item.scenario.reference_cases:
            found.append((effective_config(AgentConfig(), item.pack, item.scenario), item.pack.plans()))
    return [(config, plans) for config, plans in found if _accepted(config, manifest)]


def _accepted(config: AgentConfig, manifest: RuntimeManifest) -> bool:
    from windtunnel._runtimes.config_fields import refuse_fields
    from windtunnel.errors import UnsupportedConfigError

    try:
        refuse_fields(config, manifest.supported, manifest.name)
    except UnsupportedConfigError:
        return False  # refused before any container starts: no service needed
    return True


def stack_plan(
    manifest: RuntimeManifest,
    selected: Sequence[Selected],
    root: Path,
    *,
    mode: str = "script",
    extra_args: Sequence[str] = (),
    gateway_env: Mapping[str, str] | None = None,
) -> StackPlan:
    calls = provisions(manifest, selected)
    plans = {(plan.pack, plan.server): plan for _, mocks in calls for plan in mocks}
    runtimes = {service.profile: service for service in (runtime_service(manifest, c, m) for c, m in calls)}
    return StackPlan(
        runtime=manifest.name,
        gateway=gateway_service(manifest.name, mode, extra_args, gateway_env or {}),
        mocks=tuple(mock_service(manifest.name, plan, root) for plan in plans.values()),
        runtimes=tuple(runtimes.values()),
    )


def container_plan(
    config: CertifyConfig,
    *,
    base_image: str,
    mode: str = "script",
    extra_args: Sequence[str] = (),
    gateway_env: Mapping[str, str] | None = None,
) -> ContainerPlan:
    """The plan of a certify run: images and a stack for every container runtime, and the stage order.

    Runtimes that are not containers (a Python plugin, in_memory) get no stack: they run in the runner.
    """
    from windtunnel._packs.loader import discover_packs
    from windtunnel._packs.selection import Selection, select

    selected = select(discover_packs(config.pack_refs, base=config.root), Selection(tiers=config.tiers))
    images = {WINDTUNNEL_IMAGE: windtunnel_image_plan(config.root, base_image)}
    stacks = []
    for description in config.descriptions():  # resolved as every verb resolves a runtime
        manifest = description.manifest
        if manifest is None or description.driver != "container":
            continue
        image = runtime_image_plan(manifest, config.root, base_image)
        images[image.name] = image
        stacks.append(
            stack_plan(
                manifest, selected, config.root, mode=mode, extra_args=extra_args, gateway_env=gateway_env
            )
        )
    return ContainerPlan(
        base_image=base_image, stages=stage_order(), images=tuple(images.values()), stacks=tuple(stacks)
    )
