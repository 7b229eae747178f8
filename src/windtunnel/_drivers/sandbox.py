"""What the harness watches of a runtime container itself: whether it is still the sandbox it started (its
main process never died and came back), and cutting it off from one MCP server (the `mcp_gone` fault).

Both act from outside the runtime image, through the Docker API: the engine's record of the container
(start time, main process id, restart count) and the fence holder's firewall, which the runtime cannot
touch (windtunnel._engine.fence).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from urllib.parse import urlsplit

from docker.errors import DockerException
from docker.models.containers import Container

from windtunnel.errors import HarnessError


@dataclass(frozen=True, slots=True)
class SandboxIdentity:
    """One life of a container's main process, as the engine records it. A restart (by a restart policy,
    a supervisor or by hand) changes the start time and the process id; a policy restart also counts."""

    started_at: str
    pid: int
    restarts: int

    def line(self) -> str:
        return f"started {self.started_at}, main process {self.pid}, {self.restarts} restart(s)"


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
    )


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
