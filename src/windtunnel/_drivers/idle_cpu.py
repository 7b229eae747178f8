"""Whether this machine's CPU has room lately: the share of its CPU time left idle (Linux /proc/stat).

Starting a container ahead (windtunnel._drivers.spare) shortens a run only when a core would otherwise sit
idle while the run waits. Where every core is busy (a CI running sessions side by side) it overlaps
nothing, and each container started ahead for a key that is not asked next is work thrown away: measured
over a warm certify of the reference, about one in four. /proc/stat is the kernel's, not a container's, so
a runner inside the engine (docs/dagger.md) reads the load of the machine its containers share.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

STAT = Path("/proc/stat")
IDLE_FLOOR = 0.10
"""Below this idle share of the machine, nothing is started ahead. A warm certify of the reference alone on
two cores leaves about a fifth of the CPU idle; a CI running two sessions of three workers leaves almost none."""
WINDOW_S = 1.0
"""The shortest window measured: about one provision's time, so a burst does not decide alone."""

Clock = Callable[[], float]


class IdleCpu:
    """`has_room()`: whether the idle share over the last window (at least WINDOW_S) was IDLE_FLOOR or more.

    Before a first window has passed, and where /proc/stat cannot be read (not Linux), there is room: the
    start ahead is then what it was without this measure.
    """

    def __init__(self, stat: Path = STAT, clock: Clock = time.monotonic) -> None:
        self._stat, self._clock = stat, clock
        self._since = (clock(), cpu_ticks(stat))
        self._room = True

    def has_room(self) -> bool:
        now = self._clock()
        then, before = self._since
        if now - then < WINDOW_S:
            return self._room
        ticks = cpu_ticks(self._stat)  # read only once a window has passed
        self._since = (now, ticks)
        if ticks is None or before is None or ticks[1] <= before[1]:
            self._room = True
        else:
            self._room = (ticks[0] - before[0]) / (ticks[1] - before[1]) >= IDLE_FLOOR
        return self._room


def cpu_ticks(stat: Path) -> tuple[int, int] | None:
    """(idle, total) ticks of every CPU since boot; idle counts iowait (a core waiting on a disk is free)."""
    try:
        first = stat.read_text(encoding="ascii").split("\n", 1)[0].split()
        user, nice, system, idle, iowait, *rest = (int(field) for field in first[1:])
    except (OSError, ValueError, IndexError):
        return None
    if first[0] != "cpu":
        return None
    # guest and guest_nice (fields 9 and 10) are already counted in user and nice.
    busy = user + nice + system + sum(rest[:3])
    return idle + iowait, idle + iowait + busy
