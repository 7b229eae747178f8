"""The machine's load, printed by every bench so a noisy run shows: loadavg and CPU steal from /proc."""

from __future__ import annotations

import os
import time
from pathlib import Path


def _cpu_times() -> tuple[int, int]:
    """(steal, total) jiffies of all CPUs, from the first line of /proc/stat; (0, 0) where there is none."""
    try:
        fields = Path("/proc/stat").read_text(encoding="utf-8").splitlines()[0].split()[1:]
    except OSError:
        return 0, 0
    numbers = [int(value) for value in fields]
    steal = numbers[7] if len(numbers) > 7 else 0
    return steal, sum(numbers[:8])


def load_line(sample_s: float = 0.5) -> str:
    """`load: 1/5/15-min loadavg on N cores, steal X% (over sample_s seconds)`."""
    one, five, fifteen = os.getloadavg()
    steal_before, total_before = _cpu_times()
    time.sleep(sample_s)
    steal_after, total_after = _cpu_times()
    total = total_after - total_before
    steal = f"{100 * (steal_after - steal_before) / total:.0f}%" if total > 0 else "unknown"
    return f"load: loadavg {one:.2f}/{five:.2f}/{fifteen:.2f} on {os.cpu_count()} cores, steal {steal}"
