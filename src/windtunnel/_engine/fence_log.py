"""What runtimes tried to reach: the fence holders' logs (windtunnel._engine.netguard_agent) read and counted.

Each holder counts its refused lookups and blocked packets in a file of its own (a JSON line per distinct
attempt with its count); the file is read (one `exec`, again if the engine lost its output) just before the
holder is removed. The egress probe runs as PROBE_UID, so its own attempts are
told apart from the runtime's by the uid the kernel reports with each blocked packet.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from docker.errors import DockerException
from docker.models.containers import Container

from windtunnel._core.abilities import ReachAttempt
from windtunnel._engine.netguard_agent import LOG_FILE

PROBE_UID = 64_923
"""The egress probe's user id in the runtime's namespace: its attempts are the probe's, not the runtime's."""
EMBEDDED_DNS = "127.0.0.11"
"""Docker's embedded DNS, which would forward any unknown name off the machine: blocked in every fence."""


RECORD_END = "wt-netguard: end of record"
"""The last line of every read of the record: a read without it lost its output, and is made again."""
READ_TRIES = 3


def read_events(holder: Container) -> list[dict[str, Any]]:
    """The holder's logged events (refused lookups, blocked packets); [] when its log cannot be read.

    Under load the engine has answered an `exec` with exit 0 and none of its output (seen in CI: the fence
    script's, when an `exec` installed the fence), which would read as an empty record: so the read ends
    with RECORD_END, and one without it is made again, up to READ_TRIES times."""
    text = ""
    for _ in range(READ_TRIES):
        try:
            code, output = holder.exec_run(["sh", "-c", f"cat {LOG_FILE} 2>/dev/null; echo '{RECORD_END}'"])
        except DockerException:
            return []
        said = bytes(output or b"").decode("utf-8", "replace")
        if code == 0 and said.rstrip().endswith(RECORD_END):
            text = said
            break
    events = []
    for line in text.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("event") in {"dns", "blocked"}:
            events.append(event)
    return events


def attempts_of(
    events: Iterable[Mapping[str, Any]], known: Mapping[str, str] | None = None
) -> list[ReachAttempt]:
    """Events counted by what was tried, most tried first; `known` names addresses (the host's bridge...)."""
    names = {EMBEDDED_DNS: "Docker's embedded DNS", **(known or {})}
    lookups: Counter[str] = Counter()
    qtypes: dict[str, set[str]] = {}
    connections: Counter[tuple[str, int | None, str]] = Counter()
    for event in events:
        times = int(event.get("count") or 1)  # the agent counts repeats of one attempt
        if event.get("event") == "dns":
            name = str(event.get("name") or ".")
            lookups[name] += times
            qtypes.setdefault(name, set()).add(str(event.get("qtype")))
        else:
            port = event.get("port")
            # Docker rewrites the embedded DNS's port in the namespace's nat table: one target, any port.
            destination = str(event.get("destination"))
            key = (destination, None if destination == EMBEDDED_DNS else port, str(event.get("protocol")))
            connections[key] += times
    found = [
        ReachAttempt("lookup", name, "dns", count, detail=", ".join(sorted(qtypes[name])))
        for name, count in lookups.items()
    ]
    found += [
        ReachAttempt("connection", address, protocol, count, port=port, detail=names.get(address, ""))
        for (address, port, protocol), count in connections.items()
    ]
    return sorted(found, key=lambda a: (-a.count, a.kind, a.target, a.port or 0))


class FenceLog:
    """The events of every fence a runtime's containers lived in; shared by the stacks of one runtime."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: list[dict[str, Any]] = []
        self.known: dict[str, str] = {}
        """Addresses the fence blocks on purpose, by what they are (the host's bridge address)."""

    def collect(self, holder: Container) -> None:
        """Keep the runtime's events of `holder` (read now, before it is removed); the probe's are left out."""
        events = [e for e in read_events(holder) if e.get("uid") != PROBE_UID]
        with self._lock:
            self._events += events

    def attempts(self) -> tuple[ReachAttempt, ...]:
        with self._lock:
            return tuple(attempts_of(self._events, self.known))
