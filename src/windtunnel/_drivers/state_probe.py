"""A StateProbe over the state dump of the runtime a driver provisioned last (the hermetic canary's probe)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from windtunnel._runtimes.manifest import RuntimeManifest
from windtunnel.errors import ProbeError


def read_state_dump(manifest: RuntimeManifest, base_url: str) -> dict[str, Any]:
    """The runtime's own state dump (manifest `state_route`) read from `base_url`, for the hermetic canary."""
    route = manifest.state_route
    if route is None:
        raise ProbeError(f"runtime {manifest.name!r} declares no state_route", hint="add one to runtime.toml")
    import httpx  # only a runtime that declares a state route needs the HTTP client

    try:
        response = httpx.get(f"{base_url}{route}", timeout=10.0)
        response.raise_for_status()
        state: dict[str, Any] = response.json()
    except (httpx.HTTPError, ValueError) as exc:
        raise ProbeError(f"could not read {route} of {manifest.name!r}: {exc}") from exc
    return state


class _DumpsState(Protocol):
    def runtime_state(self) -> Mapping[str, Any]: ...


class _TracksLatest(Protocol):
    @property
    def latest(self) -> _DumpsState | None: ...


class LatestStateProbe:
    """Reads `runtime.latest.runtime_state()` when asked, so it follows each new provision."""

    def __init__(self, runtime: _TracksLatest) -> None:
        self._runtime = runtime

    def snapshot(self) -> Mapping[str, Any]:
        latest = self._runtime.latest
        if latest is None:
            raise ProbeError("no runtime has been provisioned yet", hint="provision before probing")
        return latest.runtime_state()
