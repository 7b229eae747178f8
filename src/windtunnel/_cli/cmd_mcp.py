"""`wt mcp serve|list`: serve one of a pack's MCP mocks over streamable HTTP, or list the pack's servers."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from windtunnel._cli.values import port
from windtunnel._cli.verbs import Command, VerbGroup
from windtunnel._config import Settings
from windtunnel._core.mock_kit import MockHost, MockServer, Tool, built_by_factory
from windtunnel._core.vocabulary import Exit
from windtunnel._mcp.server import ADMIN_PREFIX, MCP_PATH, mock_app
from windtunnel._net.listen import announce, listen_tcp
from windtunnel._packs.loader import load_pack
from windtunnel._packs.pack import Pack
from windtunnel.errors import UsageError

_T = TypeVar("_T")


COMMANDS = {
    "serve": Command(
        "serve one MCP mock until interrupted",
        f"Serve one of the pack's MCP mocks: MCP at {MCP_PATH}, and {ADMIN_PREFIX}/calls, "
        f"{ADMIN_PREFIX}/state, {ADMIN_PREFIX}/reset (POST) and {ADMIN_PREFIX}/health for the harness. "
        "Requests must name the mock as Host (and Origin, when sent) by a loopback name, an --allow-host "
        "name or the IP address they reached; others are refused (DNS-rebinding protection). "
        "Stops gracefully on SIGINT or SIGTERM, then exits by that signal.",
    ),
    "list": Command("list the pack's MCP servers and their tools"),
}
"""`wt mcp`'s commands, in `wt mcp --help` order: each one's summary there and its own description."""


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    group = VerbGroup(commands, "mcp", COMMANDS)
    serve = group.add("serve", execute_serve)
    serve.add_argument(
        "--pack", required=True, metavar="PATH|NAME", help="pack directory, module:attr or name"
    )
    serve.add_argument("--server", required=True, metavar="NAME", help="which of the pack's MCP servers")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=port, default=8000, help="port to listen on; 0 picks a free one")
    serve.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name clients reach this mock by, accepted as Host and Origin besides localhost, "
        "127.0.0.1, ::1 and the IP address a request reached (repeatable)",
    )
    listing = group.add("list", execute_list)
    listing.add_argument(
        "--pack", required=True, metavar="PATH|NAME", help="pack directory, module:attr or name"
    )
    listing.add_argument("--format", choices=("text", "json"), default="text")


def execute_serve(args: argparse.Namespace, settings: Settings) -> int:
    import uvicorn

    from windtunnel._limits import max_body_bytes

    limit = max_body_bytes(settings.env)  # a bad WT_MAX_BODY_BYTES stops it before it listens
    pack = _load(args.pack, settings)
    factory = server_factory(pack, args.server)
    host = _built(pack, args.server, lambda: MockHost(factory))
    app = mock_app(host, name=args.server, max_body_bytes=limit, allowed_hosts=args.allow_host)
    sock = listen_tcp(args.host, args.port)
    announce(sock, f"serving MCP mock {args.server!r} of pack {pack.name!r}", MCP_PATH)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on"))
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
    return Exit.OK


def execute_list(args: argparse.Namespace, settings: Settings) -> int:
    pack = _load(args.pack, settings)
    servers = {name: _built(pack, name, factory) for name, factory in pack.mcp_servers.items()}
    if args.format == "json":
        listing = {
            name: [_tool_entry(tool) for tool in server.tools.values()] for name, server in servers.items()
        }
        sys.stdout.write(json.dumps({"pack": pack.name, "servers": listing}, indent=2) + "\n")
        return Exit.OK
    lines = [f"pack {pack.name}" + ("" if servers else ": no MCP servers")]
    for name, server in servers.items():
        lines.append(f"  server {name}: {len(server.tools)} tool(s)")
        lines += [f"    {tool.name}: {tool.description}" for tool in server.tools.values()]
    sys.stdout.write("\n".join(lines) + "\n")
    return Exit.OK


def server_factory(pack: Pack, name: str) -> Callable[[], MockServer]:
    """The pack's factory for MCP server `name`; a UsageError listing the known names otherwise."""
    factory = pack.mcp_servers.get(name)
    if factory is None:
        known = ", ".join(sorted(pack.mcp_servers)) or "none"
        raise UsageError(
            f"pack {pack.name!r} has no MCP server {name!r}; its servers: {known}",
            hint="pass --server with one of those names (`wt mcp list --pack ...` shows them)",
            pack=pack.name,
            field="--server",
        )
    return factory


def _load(ref: str, settings: Settings) -> Pack:
    # A path is read from where the user stands; anything else (a name, module:attr) from the project.
    if Path(ref).exists():
        return load_pack(str(Path(ref).resolve()))
    return load_pack(ref, base=settings.root)


def _built(pack: Pack, name: str, build: Callable[[], _T]) -> _T:
    return built_by_factory(pack.name, name, build, error=UsageError)


def _tool_entry(tool: Tool) -> dict[str, object]:
    return {"name": tool.name, "description": tool.description, "inputSchema": dict(tool.input_schema)}
