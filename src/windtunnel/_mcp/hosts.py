"""Host and Origin checks in front of every route of a mock: the Streamable HTTP transport's DNS-rebinding guard.

The MCP transport asks servers to validate the Origin header of every incoming connection and, when they
run locally, to guard against DNS rebinding. A mock accepts a request when its Host names

- one of the loopback names (`localhost`, `127.0.0.1`, `::1`),
- a name it was told it is reached by (`wt mcp serve --allow-host`: the container driver passes the
  mock's network aliases), or
- the literal IP address the connection arrived at (how the harness reaches a container by its IP; a
  browser sends that Host only for a page loaded from the mock itself, so it opens no rebinding hole),

and its Origin, when present, names one of those hosts too. Ports are not compared: a rebinding page
controls the name, not the port, and a mock reached through a published port sees another port than the
one it listens on. Any other request is answered as the mcp SDK answers it (421 for the Host, 403 for the
Origin) before it reaches the MCP endpoint or an admin route, so it is never recorded as a tool call.
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from windtunnel.errors import UsageError

log = logging.getLogger("windtunnel.mcp")

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
WEB_SCHEMES = ("http", "https")
_VERDICTS_KEPT = 256


def host_name(value: str) -> str:
    """A name for `--allow-host`, normalised; a UsageError when it is not a bare host name or IP address."""
    text = value.strip().lower().rstrip(".")
    if _ip(text.strip("[]")) is not None:
        return _normal(text.strip("[]"))
    if not text or _hostname(text) != text:
        raise UsageError(
            f"--allow-host {value!r} is not a host name",
            hint="give a name or an IP address without scheme, port or path, e.g. --allow-host mock-billing",
            field="--allow-host",
        )
    return text


@dataclass(frozen=True, slots=True)
class AllowedHosts:
    """The names a mock answers to: the loopback names plus those it was given."""

    names: frozenset[str]

    @classmethod
    def of(cls, names: Iterable[str] = ()) -> AllowedHosts:
        return cls(frozenset(host_name(name) for name in (*LOOPBACK_NAMES, *names)))

    def refused(
        self, host: str | None, origin: str | None, local_address: str | None
    ) -> tuple[str, int] | None:
        """The header refused and the status to answer, for this Host, Origin and address; None when allowed."""
        if not self._allows(_hostname(host) if host else None, local_address):
            return "Host", 421
        if origin is not None and not self._allows(_origin_host(origin), local_address):
            return "Origin", 403
        return None

    def _allows(self, name: str | None, local_address: str | None) -> bool:
        return name is not None and (name in self.names or name == local_address)


class HostGuard:
    """ASGI middleware: refuse every HTTP request whose Host or Origin the AllowedHosts do not allow."""

    def __init__(self, app: ASGIApp, allowed: AllowedHosts) -> None:
        self.app = app
        self.allowed = allowed
        # The verdict for a (Host, Origin, address the connection reached) seen before: parsing and
        # normalising them again cost more per tools/call than the mock's own handling of the call.
        self._verdicts: dict[tuple[str | None, str | None, Any], tuple[str, int] | None] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan: the SDK's session manager starts here
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        server = scope.get("server")
        seen = (headers.get("host"), headers.get("origin"), tuple(server) if server else None)
        if seen in self._verdicts:
            refused = self._verdicts[seen]
        else:
            refused = self.allowed.refused(seen[0], seen[1], _local_address(scope))
            if len(self._verdicts) >= _VERDICTS_KEPT:  # bounded: a client sending new names each time
                self._verdicts.clear()
            self._verdicts[seen] = refused
        if refused is None:
            await self.app(scope, receive, send)
            return
        refusal = Response(f"Invalid {refused[0]} header", status_code=refused[1])
        log.warning(
            "refused %s %s with Host %r and Origin %r (HTTP %d): allowed hosts are %s; "
            "`wt mcp serve --allow-host NAME` adds one",
            scope.get("method"),
            scope.get("path"),
            headers.get("host"),
            headers.get("origin"),
            refusal.status_code,
            ", ".join(sorted(self.allowed.names)),
        )
        await refusal(scope, receive, send)


def _hostname(host: str) -> str | None:
    """The normalised host part of a Host value (`name`, `name:port`, `[v6]:port`); None if malformed."""
    try:
        parts = urlsplit(f"//{host}")
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        return None
    if parts.username is not None or parts.password is not None or parts.path or parts.query:
        return None
    name = (parts.hostname or "").rstrip(".")
    return _normal(name) if name else None


def _origin_host(origin: str) -> str | None:
    # "null" (sandboxed pages, file:) and non-web schemes name no host a mock serves.
    try:
        parts = urlsplit(origin)
    except ValueError:
        return None
    if parts.scheme not in WEB_SCHEMES or parts.path not in ("", "/"):
        return None
    return _hostname(parts.netloc)


def _local_address(scope: Scope) -> str | None:
    """The IP address the connection reached (uvicorn puts the socket's local address in `server`)."""
    server: Any = scope.get("server")
    if not server or not isinstance(server[0], str) or _ip(server[0]) is None:
        return None
    return _normal(server[0])


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _normal(name: str) -> str:
    """One spelling per address (`0:0::1` is `::1`), so set membership compares addresses, not text."""
    address = _ip(name)
    return name if address is None else str(address)
