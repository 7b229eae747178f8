"""Container topology: the aliases, ports, commands and env of a stack's services, and how its images build.

The Docker executor (`ContainerStack`, the container driver) takes its gateway and mock commands, its
aliases and the runtime env from the small functions at the top of this module; the certify run's whole
plan (windtunnel._pipeline.container_plan) describes its services and images with the same functions, as
data, so the Dagger module (pipeline/) starts what the Docker executor would.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from windtunnel._core.agent_runtime import AgentConfig, MCPHandle
from windtunnel._drivers.container_plan_model import (
    ImagePlan,
    Mount,
    ProjectPlan,
    ServicePlan,
    WheelhousePlan,
)
from windtunnel._runtimes.manifest import RuntimeManifest

if TYPE_CHECKING:
    from windtunnel._core.agent_runtime import MockServerPlan

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


# -- the stack's services and images, as data ----------------------------------------------------------
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
