"""The container plan both executors share: images to build, services to start, env, aliases, stage order.

The Docker executor (`ContainerStack`, the container driver) takes its gateway and mock commands, its
aliases and the runtime env from the small functions at the top of this module. `container_plan()`
describes a whole certify run with the same functions, as data: `wt certify --print-plan` prints it as
JSON, and the Dagger module (pipeline/) turns that JSON into `dag.container()` builds and services.

A runtime's env depends on the config and the mocks it is provisioned with. Docker starts a container
per provision; an executor that starts services up front (Dagger) starts one runtime service per distinct
env ("profile") the stage plan will ask for. `provisions()` lists those; a provision it did not foresee
fails loudly in the bound driver (windtunnel._drivers.bound) instead of running with the wrong env.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from windtunnel._pipeline.container_plan_model import (
    ContainerPlan,
    ImagePlan,
    Mount,
    ProjectPlan,
    ServicePlan,
    StackPlan,
    WheelhousePlan,
)
from windtunnel._runtimes.manifest import RuntimeManifest
from windtunnel.spi.agent_runtime import AgentConfig, MCPHandle

if TYPE_CHECKING:
    from windtunnel._packs.selection import Selected
    from windtunnel._pipeline.config import CertifyConfig
    from windtunnel.spi.agent_runtime import MockServerPlan

# Imports of the drivers, packs and the stage plan happen inside the builder functions: the Docker
# executor's stack module imports this one, and the stage plan imports the drivers.

ANY_ADDRESS = "0.0.0.0"  # noqa: S104 - servers inside their own container, on the run network only
GATEWAY_ALIAS = "gateway"
GATEWAY_PORT = 8000
MOCK_PORT = 8000
PACKS_DIR = "/packs"
DEFAULT_MODEL = "wt-scripted"
GATEWAY_URL_FOR_AGENTS = f"http://{GATEWAY_ALIAS}:{GATEWAY_PORT}/v1"
WINDTUNNEL_IMAGE = "windtunnel"
_UNSAFE = re.compile(r"[^a-z0-9-]")
_MAX_ALIAS = 63


# -- what the Docker executor runs ---------------------------------------------------------------------
def alias_for(*parts: str) -> str:
    """A DNS-safe network alias: lower case, `-` for anything else, at most 63 characters."""
    return _UNSAFE.sub("-", "-".join(parts).lower())[:_MAX_ALIAS].strip("-")


def gateway_args(mode: str, extra_args: Sequence[str] = ()) -> list[str]:
    """`wt` arguments of the gateway container (the windtunnel image's entrypoint is `wt`)."""
    return [
        "gateway",
        "serve",
        "--mode",
        mode,
        "--host",
        ANY_ADDRESS,
        "--port",
        str(GATEWAY_PORT),
        *extra_args,
    ]


def mock_alias(pack: str, server: str) -> str:
    return alias_for("mock", pack, server)


def pack_mount(pack: str) -> str:
    """Where a pack's directory is mounted in its mock containers."""
    return f"{PACKS_DIR}/{alias_for(pack)}"


def mock_args(pack: str, server: str, also_reached_as: Sequence[str] = ()) -> list[str]:
    """`wt` arguments of one MCP mock container, serving `server` of the pack mounted at pack_mount().

    The mock accepts its alias (how runtimes reach it) and `also_reached_as` (the runner's names for it)
    as Host; the runner's other way in, the container's IP address, needs no name (windtunnel._mcp.hosts).
    """
    names = [mock_alias(pack, server), *also_reached_as]
    return [
        "mcp",
        "serve",
        "--pack",
        pack_mount(pack),
        "--server",
        server,
        "--host",
        ANY_ADDRESS,
        "--port",
        str(MOCK_PORT),
        *(arg for name in dict.fromkeys(names) for arg in ("--allow-host", name)),
    ]


def mock_url(pack: str, server: str) -> str:
    """The streamable-HTTP URL a runtime uses for a mock (by its alias on the run network)."""
    return f"http://{mock_alias(pack, server)}:{MOCK_PORT}/mcp"


def runtime_alias(name: str, suffix: str) -> str:
    return alias_for("runtime", name, suffix)


def runtime_env(
    manifest: RuntimeManifest, config: AgentConfig, mcps: Sequence[MCPHandle], gateway_url: str
) -> dict[str, str]:
    """DESIGN.md's WT_* variables for this config, plus the manifest's fixed ones, renamed as it asks."""
    env = {
        "WT_MODEL_BASE_URL": gateway_url,
        "WT_MODEL_NAME": config.model.name if config.model else DEFAULT_MODEL,
        "WT_MCP_SERVERS": json.dumps([{"name": m.name, "url": m.url} for m in mcps]),
        "WT_INJECT_PORT": str(manifest.port),
    }
    if config.system_prompt is not None:
        env["WT_SYSTEM_PROMPT"] = config.system_prompt
    sampling = config.sampling.as_dict()
    if sampling:
        env["WT_SAMPLING"] = json.dumps(sampling)
    env.update(manifest.env_set)
    return {manifest.env_rename.get(key, key): value for key, value in env.items()}


def profile_key(env: Mapping[str, str]) -> str:
    """Names a runtime env: the same env gives the same key, in every executor."""
    return hashlib.sha256(json.dumps(dict(env), sort_keys=True).encode()).hexdigest()[:16]


def runner_alias(stack: str, alias: str) -> str:
    """A service's name in the runner, unique across the stacks of a run (aliases are per stack).

    Names that alias_for() would change (too long, or other characters) get a digest of the original,
    so two stacks can never end up with the same name.
    """
    plain, safe = f"{stack}-{alias}", alias_for(stack, alias)
    if safe == plain:
        return safe
    digest = hashlib.sha256(f"{stack}\0{alias}".encode()).hexdigest()[:12]
    return f"{safe[: _MAX_ALIAS - 13].strip('-')}-{digest}"


@dataclass(frozen=True, slots=True)
class MockEndpoint:
    """A mock as a runtime sees it (name and URL): what runtime_env() reads of an MCP handle."""

    name: str
    url: str


# -- building the plan ---------------------------------------------------------------------------------
def stage_order() -> tuple[str, ...]:
    """The stage names in run order: the per-runtime PLAN, then publish for the whole run."""
    from windtunnel._bundle.models import Stage
    from windtunnel._pipeline.plan import PLAN

    return (*(step.stage.value for step in PLAN), Stage.PUBLISH.value)


def windtunnel_image_plan(root: Path, base_image: str) -> ImagePlan:
    """The gateway/mocks image as build_windtunnel_image() builds it: deps wheelhouse + the app wheel."""
    from windtunnel._config import WINDTUNNEL_DOCKERFILE
    from windtunnel._drivers.images import WINDTUNNEL_SOURCES, WINDTUNNEL_TAG
    from windtunnel._drivers.wheelhouse import project_dependencies

    return ImagePlan(
        name=WINDTUNNEL_IMAGE,
        tag=WINDTUNNEL_TAG,
        dockerfile=WINDTUNNEL_DOCKERFILE.as_posix(),
        build_args={"BASE_IMAGE": base_image},
        wheelhouses=(
            WheelhousePlan(directory="wheels", requirements=project_dependencies(root)),
            WheelhousePlan(
                directory="app-wheels", projects=(ProjectPlan(path=".", include=WINDTUNNEL_SOURCES),)
            ),
        ),
    )


def runtime_image_plan(manifest: RuntimeManifest, root: Path, base_image: str) -> ImagePlan:
    """A runtime's image as build_runtime_image() builds it: its directory, the manifest's Dockerfile,
    requirements, local packages and build arguments, the tag from its name."""
    from windtunnel._drivers.images import PACKAGE_WHEELS, runtime_image_tag, runtime_requirements

    name = f"runtime:{manifest.name}"
    if manifest.image_ref is not None:
        return ImagePlan(name=name, tag=manifest.image_ref, ref=manifest.image_ref)
    if manifest.build_dir is None:
        raise _outside(manifest.name, "has no [image] build directory", manifest.path)
    directory = manifest.build_dir
    requirements = runtime_requirements(directory, manifest.requirements, manifest.packages)
    wheelhouses = [WheelhousePlan(directory="wheels", requirements=requirements)]
    if manifest.packages:
        projects = tuple(ProjectPlan(path=_relative(p, root, manifest.name)) for p in manifest.packages)
        wheelhouses.append(WheelhousePlan(directory=PACKAGE_WHEELS, projects=projects))
    return ImagePlan(
        name=name,
        tag=runtime_image_tag(manifest.name),
        dockerfile=_relative(directory / manifest.dockerfile, root, manifest.name),
        context=_relative(directory, root, manifest.name),
        build_args={**manifest.build_args, "BASE_IMAGE": base_image},
        wheelhouses=tuple(wheelhouses),
    )


def provisions(
    manifest: RuntimeManifest, selected: Sequence[Selected]
) -> list[tuple[AgentConfig, list[MockServerPlan]]]:
    """Every (config, mocks) the stage plan provisions this runtime with and the runtime accepts.

    Conformance: the kit's mocks or none, with the default config or each config the kit provisions a
    runtime declaring these fields with (`kit_configs`: the sampling runs, the declared config); the
    canary: no mocks; selftest: each pack's mocks with the pack's and scenario's agent setup.
    """
    from windtunnel._conformance.checks_config import kit_configs
    from windtunnel._conformance.subject import kit_pack
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


def runtime_service(
    manifest: RuntimeManifest, config: AgentConfig, plans: Sequence[MockServerPlan]
) -> ServicePlan:
    mcps = [MockEndpoint(plan.server, mock_url(plan.pack, plan.server)) for plan in plans]
    env = runtime_env(manifest, config, mcps, GATEWAY_URL_FOR_AGENTS)
    key = profile_key(env)
    alias = runtime_alias(manifest.name, key[:8])
    return ServicePlan(
        role="runtime",
        image=f"runtime:{manifest.name}",
        alias=alias,
        runner_alias=runner_alias(manifest.name, alias),
        port=manifest.port,
        env=env,
        ready_any_answer=True,
        labels=_labels("runtime", manifest.name),
        profile=key,
    )


def mock_service(stack: str, plan: MockServerPlan, root: Path) -> ServicePlan:
    if plan.pack_root is None:
        raise _outside(plan.pack, "has no root directory, so its mocks cannot run in a container", None)
    alias = mock_alias(plan.pack, plan.server)
    reached_as = runner_alias(stack, alias)
    return ServicePlan(
        role="mock",
        image=WINDTUNNEL_IMAGE,
        alias=alias,
        runner_alias=reached_as,
        port=MOCK_PORT,
        args=tuple(mock_args(plan.pack, plan.server, [reached_as])),
        mounts=(_pack_mount(plan.pack, plan.pack_root, root),),
        labels=_labels("mock", stack),
        pack=plan.pack,
        server=plan.server,
        url=mock_url(plan.pack, plan.server),
    )


def gateway_service(stack: str, mode: str, extra_args: Sequence[str], env: Mapping[str, str]) -> ServicePlan:
    return ServicePlan(
        role="gateway",
        image=WINDTUNNEL_IMAGE,
        alias=GATEWAY_ALIAS,
        runner_alias=runner_alias(stack, GATEWAY_ALIAS),
        port=GATEWAY_PORT,
        args=tuple(gateway_args(mode, extra_args)),
        env=dict(env),
        labels=_labels("gateway", stack),
    )


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


def _labels(role: str, stack: str) -> dict[str, str]:
    # The stack label keeps two runtimes' otherwise identical gateways and mocks apart where an engine
    # de-duplicates services by their definition (Dagger), as Docker's per-run networks keep them apart.
    return {"windtunnel.role": role, "windtunnel.stack": stack}


def _pack_mount(pack: str, pack_root: Path, root: Path) -> Mount:
    import windtunnel

    source = pack_root.resolve()
    if source.is_relative_to(root.resolve()):
        return Mount(target=pack_mount(pack), source=_relative(source, root, pack))
    if source.is_relative_to(Path(windtunnel.__file__).resolve().parent):
        return Mount(target=pack_mount(pack), source=str(source), origin="image")
    raise _outside(pack, f"lives at {source}, outside the repository {root}", None)


def _relative(path: Path, root: Path, what: str) -> str:
    resolved, base = path.resolve(), root.resolve()
    if not resolved.is_relative_to(base):
        raise _outside(what, f"lives at {resolved}, outside the repository {base}", None)
    return resolved.relative_to(base).as_posix() or "."


def _outside(what: str, problem: str, path: Path | None) -> Exception:
    from windtunnel.errors import ConfigFileError

    return ConfigFileError(
        f"{what} {problem}: the container plan builds and mounts only what is in the repository",
        hint="keep runtimes and packs inside the repository you certify from (runtimes/, scenarios/)",
        path=str(path) if path else None,
    )
