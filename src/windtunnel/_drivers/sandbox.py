"""What the harness watches of a runtime container itself: whether it is still the sandbox it started (its
main process never died and came back, no process of it was killed for want of memory), cutting it off
from one MCP server (the `mcp_gone` fault) and starving it of memory (the `oom` fault).

All act from outside the runtime image, through the Docker API: the engine's record of the container
(start time, main process id, restart count, its `oom` events), its memory limit, and the fence holder's
firewall, which the runtime cannot touch (windtunnel._engine.fence).
"""

from __future__ import annotations

import shlex
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from docker.errors import DockerException
from docker.models.containers import Container

from windtunnel.errors import HarnessError


@dataclass(frozen=True, slots=True)
class SandboxIdentity:
    """One life of a container's main process, as the engine records it. A restart (by a restart policy,
    a supervisor or by hand) changes the start time and the process id; a policy restart also counts. An
    OOM kill of any of its processes (the main one's death, or a child's a supervisor may replace) counts
    too: the sandbox lost state it held."""

    started_at: str
    pid: int
    restarts: int
    oom_kills: int = 0

    def line(self) -> str:
        kills = f", {self.oom_kills} OOM kill(s)" if self.oom_kills else ""
        return f"started {self.started_at}, main process {self.pid}, {self.restarts} restart(s){kills}"


def sandbox_identity(container: Container) -> SandboxIdentity | None:
    """The container's identity now; None when it is not running (exited, dead, removed) or the engine
    cannot be asked: a death is reported by the caller's own path, not here."""
    try:
        container.reload()
    except DockerException:
        return None
    state = container.attrs.get("State", {})
    if not state.get("Running") or state.get("Restarting"):
        return None
    return SandboxIdentity(
        started_at=str(state.get("StartedAt")),
        pid=int(state.get("Pid") or 0),
        restarts=int(container.attrs.get("RestartCount") or 0),
        oom_kills=oom_kills(container),
    )


def oom_kills(container: Container) -> int:
    """How many times the kernel killed a process of the container for want of memory since it was
    created: the engine's `oom` events. State.OOMKilled alone misses a child killed while the container
    lives on (Docker 20.10 sets it only when the container exits); the event is sent for every kill."""
    created = str(container.attrs.get("Created") or "")[:19]
    try:
        since = datetime.fromisoformat(created).replace(tzinfo=UTC).timestamp() if created else 0.0
        events = container.client.api.events(
            since=int(since),
            until=time.time(),  # in the past: the engine answers at once with what it has
            filters={"container": container.id, "event": "oom"},
            decode=True,
        )
        return sum(1 for _ in events)
    except (DockerException, ValueError):
        return 0  # the engine cannot be asked: the caller's own path reports a death


def starve_memory(container: Container, headroom: int) -> dict[str, Any]:
    """Lower the container's memory limit (swap included, so none is left) to what its processes hold now
    plus `headroom` bytes: the next large allocation of any of them is OOM-killed. What they hold is the
    engine's usage less the inactive file cache the kernel reclaims first."""
    try:
        stats = container.stats(stream=False, one_shot=True)
        memory = stats.get("memory_stats") or {}
        usage = int(memory.get("usage") or 0)
        detail = memory.get("stats") or {}
        cache = int(detail.get("total_inactive_file", detail.get("inactive_file", 0)) or 0)
        held = max(usage - cache, 0)
        if not held:
            raise HarnessError(f"the engine reports no memory use for container {container.name}")
        limit = held + headroom
        container.update(mem_limit=limit, memswap_limit=limit)
    except DockerException as exc:
        raise HarnessError(f"could not lower the memory limit of container {container.name}: {exc}") from exc
    return {"held_bytes": held, "limit_bytes": limit}


def cut_off_rule(url: str, address: str) -> list[str]:
    """The iptables rule, first in the holder's OUTPUT chain, that refuses every packet to the server at
    `url` (whose host resolves to `address`), connections already open included: a reset, as a server that
    is gone answers."""
    port = urlsplit(url).port or 80
    target = ["-d", f"{address}/32", "-p", "tcp", "--dport", str(port)]
    return ["-I", "OUTPUT", "1", *target, "-j", "REJECT", "--reject-with", "tcp-reset"]


def cut_off(holder: Container, url: str, address: str) -> None:
    """Refuse from now on every connection of the holder's namespace to the server at `url`; the rule lives
    as long as the holder (the handle's teardown removes it)."""
    rule = shlex.join(cut_off_rule(url, address))
    script = f"IPT=iptables; iptables -S >/dev/null 2>&1 || IPT=iptables-legacy; $IPT {rule}"
    try:
        code, output = holder.exec_run(["sh", "-c", script])
    except DockerException as exc:
        raise HarnessError(f"could not cut the runtime off from {url}: {exc}") from exc
    if code != 0:
        text = bytes(output or b"").decode("utf-8", "replace").strip()
        raise HarnessError(f"could not cut the runtime off from {url} (exit {code}): {text[-300:]}")
