"""What the harness watches of a runtime container itself: whether it is still the sandbox it started (its
main process never died and came back, no process of it was killed for want of memory), cutting it off
from one MCP server (the `mcp_gone` fault), starving it of memory (the `oom` fault) and filling its /tmp
(the `disk_full` fault).

All act from outside the runtime image, through the Docker API: the engine's record of the container
(start time, main process id, restart count, its `oom` events), its memory limit, its archive endpoint
(`docker cp`) and the fence holder's firewall, which the runtime cannot touch (windtunnel._engine.fence).
"""

from __future__ import annotations

import io
import shlex
import tarfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from docker.errors import DockerException
from docker.models.containers import Container
from docker.types import DriverConfig, Mount

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


TMP = "/tmp"  # noqa: S108 - the path inside the runtime container, not a file of ours
FILL_CHUNKS = (1024 * 1024, 64 * 1024, 4 * 1024)
"""The sizes /tmp is filled with, largest first: each until the filesystem refuses one, then the next."""
FILL_CAP = 64 * 1024 * 1024
"""Never more than this is written, whatever /tmp says: a fill that does not end is Wind Tunnel's error."""


def small_tmp(size: int) -> Mount:
    """A /tmp of `size` bytes for a runtime container: an anonymous tmpfs volume, so the harness can fill
    it through the engine (`docker cp` writes into a volume; into a `--tmpfs` mount it writes beneath it,
    unseen) and removing the container removes it. Its files are the image's /tmp, copied in."""
    options = {"type": "tmpfs", "device": "tmpfs", "o": f"size={size},mode=1777"}
    return Mount(target=TMP, source=None, type="volume", driver_config=DriverConfig("local", options))


def fill_tmp(container: Container) -> dict[str, Any]:
    """Fill the container's /tmp from outside (`docker cp` of read-only files owned by root, which the
    runtime can neither write to nor remove under /tmp's sticky bit) until it has no byte left. Returns how
    much was written and the engine's refusal of the last file (the proof it is full)."""
    if not has_small_tmp(container):
        # Never write into the writable layer: that fills the engine's own disk, not the runtime's.
        raise HarnessError(f"container {container.name} was not started with a small /tmp to fill")
    written, files, refusal = 0, 0, ""
    for chunk in FILL_CHUNKS:
        while written < FILL_CAP:
            try:
                container.put_archive(TMP, _archive(f"wt-disk-full-{files}", chunk))
            except DockerException as exc:
                refusal = str(exc).splitlines()[0][-200:]
                files += 1  # the refused file may be left, empty: the next one takes another name
                break
            written, files = written + chunk, files + 1
    if "no space left" not in refusal:  # capped, or refused for another reason: not full
        raise HarnessError(f"could not fill {TMP} of container {container.name}: {refusal or 'no refusal'}")
    return {"path": TMP, "written_bytes": written, "refused": refusal}


def has_small_tmp(container: Container) -> bool:
    """Whether the container was started with small_tmp()'s /tmp (a tmpfs volume), as the engine records."""
    mounts = container.attrs.get("HostConfig", {}).get("Mounts") or []
    for mount in mounts:
        options = ((mount.get("VolumeOptions") or {}).get("DriverConfig") or {}).get("Options") or {}
        if mount.get("Target") == TMP and options.get("type") == "tmpfs":
            return True
    return False


def _archive(name: str, size: int) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo(name)
        info.size, info.mode = size, 0o444
        tar.addfile(info, io.BytesIO(bytes(size)))
    return buffer.getvalue()
