"""Container topology: the aliases, ports, commands and env of a run's services (gateway, mocks, runtimes).

The one container plan: `gateway_service()`, `mock_service()` and `runtime_service()` describe each
service as a `ServicePlan`; the Docker executor (`ContainerStack`, the container driver) and
`windtunnel.testing` both start containers from them, so what a run starts is written down once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from windtunnel._core.agent_runtime import AgentConfig, MCPHandle, MockServerPlan
from windtunnel._engine.readiness import READY_PATH
from windtunnel._runtimes.manifest import RuntimeManifest

ANY_ADDRESS = "0.0.0.0"  # noqa: S104 - servers inside their own container, on the run network only
GATEWAY_ALIAS = "gateway"
GATEWAY_PORT = 8000
MOCK_PORT = 8000
PACKS_DIR = "/packs"
DEFAULT_MODEL = "wt-scripted"
GATEWAY_URL_FOR_AGENTS = f"http://{GATEWAY_ALIAS}:{GATEWAY_PORT}/v1"
_UNSAFE = re.compile(r"[^a-z0-9-]")
_MAX_ALIAS = 63


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
    """Where a pack's directory is copied into its mock containers."""
    return f"{PACKS_DIR}/{alias_for(pack)}"


def mock_args(pack: str, server: str) -> list[str]:
    """`wt` arguments of one MCP mock container, serving `server` of the pack copied to pack_mount().

    The mock accepts its alias (how runtimes reach it) as Host; the runner's way in, the container's IP
    address on the run network, needs no name (windtunnel._mcp.hosts).
    """
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
        "--allow-host",
        mock_alias(pack, server),
    ]


def mock_url(pack: str, server: str) -> str:
    """The streamable-HTTP URL a runtime uses for a mock (by its alias on the run network)."""
    return f"http://{mock_alias(pack, server)}:{MOCK_PORT}/mcp"


def model_root_url(base_url: str) -> str:
    """The gateway's root URL: `base_url` without its trailing /v1 (the Anthropic SDK adds /v1 itself)."""
    trimmed = base_url.rstrip("/")
    return trimmed.removesuffix("/v1") if trimmed.endswith("/v1") else trimmed


def runtime_alias(name: str, suffix: str) -> str:
    return alias_for("runtime", name, suffix)


def runtime_env(
    manifest: RuntimeManifest, config: AgentConfig, mcps: Sequence[MCPHandle], gateway_url: str
) -> dict[str, str]:
    """DESIGN.md's WT_* variables for this config, plus the manifest's fixed ones, renamed as it asks.

    WT_MODEL_BASE_URL ends in /v1 (what OpenAI SDKs take); WT_MODEL_ROOT_URL is the same gateway without
    it (the Anthropic SDK appends /v1/messages itself); WT_MODEL_WIRE is the wire the manifest declares.
    """
    env = {
        "WT_MODEL_BASE_URL": gateway_url,
        "WT_MODEL_ROOT_URL": model_root_url(gateway_url),
        "WT_MODEL_WIRE": manifest.wire,
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


@dataclass(frozen=True, slots=True, kw_only=True)
class GatewaySpec:
    """How the gateway container serves: script (default), live/record to an upstream, replay a tape.

    `files` (container path -> host path: a tape to replay) are copied in before it starts; `secrets`
    (container path -> content: the upstream key) are put in with them, read-only for its user, and never
    shown; `outputs` (container directory -> host directory: where a record gateway writes its tape) start
    empty and are copied out by `ContainerStack.collect_outputs()`. No host path is ever bind-mounted, so
    any engine works (windtunnel._engine.files).
    """

    mode: str = "script"
    extra_args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    files: Mapping[str, Path] = field(default_factory=dict)
    needs_egress: bool = False
    outputs: Mapping[str, Path] = field(default_factory=dict)
    secrets: Mapping[str, str] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class ServicePlan:
    """One long-running container, as Docker runs it: the image's entrypoint, then `args` (None: the
    image's own CMD), answering to `alias` on the run network on `port`. `files` (container path -> host
    file or directory) are copied in before it starts; nothing is bind-mounted."""

    role: str
    alias: str
    port: int
    args: tuple[str, ...] | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    files: Mapping[str, Path] = field(default_factory=dict)
    ready_path: str = READY_PATH
    ready_any_answer: bool = False
    """True for runtimes: any HTTP answer on ready_path means up (Contract C makes it optional); False:
    ready_path must answer 200 (the gateway and the mocks serve it)."""
    url: str | None = None
    """How the runtime reaches it (a mock's MCP URL), where that differs from http://alias:port."""


def gateway_service(spec: GatewaySpec) -> ServicePlan:
    return ServicePlan(
        role="gateway",
        alias=GATEWAY_ALIAS,
        port=GATEWAY_PORT,
        args=tuple(gateway_args(spec.mode, spec.extra_args)),
        env=dict(spec.env),
        files=dict(spec.files),
    )


def mock_service(plan: MockServerPlan) -> ServicePlan:
    """The mock container serving `plan.server` of its pack, the pack's directory copied in."""
    if plan.pack_root is None:
        from windtunnel.errors import HarnessError

        raise HarnessError(
            f"pack {plan.pack!r} has no root directory, so its mocks cannot run in a container",
            hint="load the pack from a directory (pack.py) so the mock container can have it copied in",
        )
    return ServicePlan(
        role="mock",
        alias=mock_alias(plan.pack, plan.server),
        port=MOCK_PORT,
        args=tuple(mock_args(plan.pack, plan.server)),
        files={pack_mount(plan.pack): plan.pack_root},
        url=mock_url(plan.pack, plan.server),
    )


def runtime_service(
    manifest: RuntimeManifest,
    config: AgentConfig,
    mcps: Sequence[MCPHandle],
    *,
    suffix: str,
    gateway_url: str = GATEWAY_URL_FOR_AGENTS,
) -> ServicePlan:
    """A runtime container for `config`, reaching `mcps` and the gateway; `suffix` makes its alias unique."""
    return ServicePlan(
        role="runtime",
        alias=runtime_alias(manifest.name, suffix),
        port=manifest.port,
        env=runtime_env(manifest, config, mcps, gateway_url),
        ready_any_answer=True,
    )
