"""A StateProbe over the state dump of the runtime a driver provisioned last (the hermetic canary's probe)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from windtunnel.errors import ProbeError


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
