"""A RecordingMCPHandle for a mock served elsewhere (loopback thread, `wt mcp serve`, a container), over /wt/*."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx

from windtunnel._core.faults import ToolFault
from windtunnel._mcp.identity import MockIdentity
from windtunnel._mcp.server import ADMIN_PREFIX, MCP_PATH
from windtunnel._net.json_body import json_object
from windtunnel._net.liveness import Liveness, named_death
from windtunnel._net.tls import shared_tls_context
from windtunnel.errors import HarnessError

DEFAULT_TIMEOUT_S = 10.0


class HttpMCPHandle(MockIdentity):
    """An MCP mock reached over HTTP.

    `url` is the streamable-HTTP endpoint the agent uses (`http://mock-billing:8000/mcp`). `admin_url` is
    where this process reaches the same server's admin routes, which may differ when the agent and the
    harness see the mock under different addresses (a container name inside the network, an IP from the
    host); by default it is `url` without its trailing `/mcp`. Every answer must name this server, so
    crossed addresses fail loudly instead of mixing two mocks' evidence.
    """

    def __init__(
        self,
        name: str,
        url: str,
        admin_url: str | None = None,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        transport: httpx.BaseTransport | None = None,
        liveness: Liveness | None = None,
    ) -> None:
        super().__init__(name, url)
        self.liveness = liveness
        self._admin = (admin_url or _admin_base(name, url)).rstrip("/")
        self._client = httpx.Client(timeout=timeout_s, transport=transport, verify=shared_tls_context())
        self._closed = False

    @property
    def admin_url(self) -> str:
        return self._admin

    def calls(self) -> list[dict[str, Any]]:
        """Every tools/call the mock received since its last reset, in order, with raw arguments."""
        calls = self._request("GET", "calls").get("calls")
        if not isinstance(calls, list):
            raise self._bad_answer("calls", "a list under 'calls'", calls)
        return calls

    def requests(self) -> list[dict[str, Any]]:
        """Every request other than tools/call the mock served since its last reset (resources/read,
        prompts/get, completion/complete, logging/setLevel, ...), in order, refusals included."""
        requests = self._request("GET", "requests").get("requests")
        if not isinstance(requests, list):
            raise self._bad_answer("requests", "a list under 'requests'", requests)
        return requests

    def state(self) -> Mapping[str, Any]:
        """The mock's fixture state as it is now."""
        state = self._request("GET", "state").get("state")
        if not isinstance(state, dict):
            raise self._bad_answer("state", "an object under 'state'", state)
        return state

    def reset(self) -> None:
        """Fresh fixture state and an empty call log; raises HarnessError if the mock did not confirm it."""
        if self._request("POST", "reset").get("reset") is not True:
            raise HarnessError(
                f"MCP mock {self._name!r} did not confirm its reset at {self._admin}{ADMIN_PREFIX}/reset",
                hint="its state may survive into the next case; restart the mock",
                server=self._name,
            )

    def tools(self) -> list[dict[str, Any]]:
        """Every tool the mock serves, as MCP tool objects, listed over MCP at this process's address of it."""
        from windtunnel._mcp.client import list_tools

        return list_tools(f"{self._admin}{MCP_PATH}")

    def health(self) -> dict[str, Any]:
        """The mock's health answer: status, server name, tool names."""
        return self._request("GET", "health")

    def wait_ready(self, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        """Poll /wt/health until the mock answers, or raise HarnessError naming the last failure."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                self.health()
                return
            except HarnessError as exc:
                if time.monotonic() >= deadline:
                    raise HarnessError(
                        f"MCP mock {self._name!r} was not ready within {timeout_s:g}s: {exc.message}",
                        hint=exc.hint,
                        server=self._name,
                    ) from exc
            time.sleep(0.05)

    def close(self) -> None:
        """Release the HTTP connections; the handle cannot be used afterwards. Idempotent."""
        self._closed = True
        self._client.close()

    def script_faults(self, faults: Sequence[ToolFault]) -> None:
        """Queue scripted faults on the mock (PUT /wt/faults); each answers the next call of its tool."""
        self._request("PUT", "faults", body={"faults": [fault.to_json() for fault in faults]})

    def _request(self, method: str, route: str, *, body: Any = None) -> dict[str, Any]:
        try:
            return self._exchange(method, route, body)
        except HarnessError as exc:
            if self._closed:
                raise
            raise named_death(exc, self.liveness) from exc

    def _exchange(self, method: str, route: str, body: Any = None) -> dict[str, Any]:
        target = f"{self._admin}{ADMIN_PREFIX}/{route}"
        if self._closed:
            raise HarnessError(
                f"MCP mock {self._name!r}: {method} {target} was asked of a closed handle",
                hint="read a mock's evidence before its batch ends and stops it",
                server=self._name,
            )
        try:
            response = self._client.request(method, target, json=body)
        except httpx.HTTPError as exc:
            raise HarnessError(
                f"MCP mock {self._name!r} is unreachable: {method} {target} failed with "
                f"{type(exc).__name__}: {exc}",
                hint="check that the mock is running (`wt mcp serve --pack P --server NAME`) and that this "
                "address is reachable from the harness; pass admin_url= when it differs from the agent's URL",
                server=self._name,
            ) from exc
        return self._decode(method, target, response)

    def _decode(self, method: str, target: str, response: httpx.Response) -> dict[str, Any]:
        if response.status_code != httpx.codes.OK:
            raise HarnessError(
                f"MCP mock {self._name!r} answered {method} {target} with HTTP {response.status_code}: "
                f"{response.text[:200]}",
                hint="check that this address serves a Wind Tunnel MCP mock (`wt mcp serve`)",
                server=self._name,
            )
        body = json_object(response)
        if body is None:
            raise HarnessError(
                f"MCP mock {self._name!r} answered {method} {target} with something other than a JSON "
                f"object: {response.text[:200]!r}",
                hint="check that this address serves a Wind Tunnel MCP mock (`wt mcp serve`)",
                server=self._name,
            )
        if body.get("server") != self._name:
            raise HarnessError(
                f"expected MCP mock {self._name!r} at {target}, found mock {body.get('server')!r}",
                hint="the mocks' addresses are crossed; check which port or container serves which server",
                server=self._name,
            )
        return body

    def _bad_answer(self, route: str, expected: str, found: object) -> HarnessError:
        return HarnessError(
            f"MCP mock {self._name!r}: {self._admin}{ADMIN_PREFIX}/{route} should hold {expected}, "
            f"found {type(found).__name__}",
            hint="the mock and this harness may be different Wind Tunnel versions; rebuild the mock image",
            server=self._name,
        )

    def __repr__(self) -> str:
        return f"HttpMCPHandle(name={self._name!r}, url={self._url!r}, admin_url={self._admin!r})"


def _admin_base(name: str, url: str) -> str:
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    if not parts.scheme or not parts.netloc or not path.endswith(MCP_PATH):
        raise HarnessError(
            f"MCP mock {name!r}: cannot derive the admin routes from {url!r}; expected a URL ending in "
            f"{MCP_PATH}, such as http://127.0.0.1:8000{MCP_PATH}",
            hint="pass admin_url= with the base address of the mock's /wt routes",
            server=name,
        )
    return f"{parts.scheme}://{parts.netloc}{path[: -len(MCP_PATH)]}"
