"""Container topology: the aliases, ports, commands and env of a run's services (gateway, mocks, runtimes).

The Docker executor (`ContainerStack`, the container driver) takes every command, alias and env here, so
what a run starts is written down once, whichever engine runs it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from windtunnel._core.agent_runtime import AgentConfig, MCPHandle
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
