"""How long each stage of each runtime took last time, kept in the user's cache, for the progress ETA."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from windtunnel._env_values import process_env

SCHEMA = 1


def timings_file() -> Path:
    """`$XDG_CACHE_HOME/windtunnel/timings.json` (default ~/.cache), beside Wind Tunnel's other caches."""
    base = process_env().get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "windtunnel" / "timings.json"


class Timings:
    """Seconds per (runtime, stage) from the last run; `remaining()` is the ETA over the stages still to run."""

    def __init__(self, path: Path, last: Mapping[str, float] | None = None) -> None:
        self.path = path
        self.last: dict[str, float] = dict(last or {})
        self.now: dict[str, float] = {}

    @classmethod
    def load(cls, path: Path | None = None) -> Timings:
        """The last run's timings; none when the file is missing or unreadable (an ETA is a nicety)."""
        path = path or timings_file()
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls(path)
        seconds = data.get("seconds") if isinstance(data, dict) and data.get("schema") == SCHEMA else None
        if not isinstance(seconds, dict):
            return cls(path)
        return cls(path, {k: float(v) for k, v in seconds.items() if isinstance(v, int | float)})

    def expected(self, runtime: str, stage: str) -> float | None:
        return self.last.get(_key(runtime, stage))

    def record(self, runtime: str, stage: str, seconds: float) -> None:
        self.now[_key(runtime, stage)] = seconds

    def remaining(self, pending: Iterable[tuple[str, str]], running_for: float = 0.0) -> float | None:
        """Seconds left for `pending` (the running stage first, `running_for` seconds in); None when a
        pending stage never ran before, so no honest estimate exists."""
        total = 0.0
        for index, (runtime, stage) in enumerate(pending):
            expected = self.expected(runtime, stage)
            if expected is None:
                return None
            total += max(expected - running_for, 0.0) if index == 0 else expected
        return total

    def save(self) -> None:
        """Keep this run's timings (merged over the last ones); a cache that cannot be written is skipped."""
        merged = {**self.last, **self.now}
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary = self.path.with_suffix(".tmp")
            temporary.write_text(json.dumps({"schema": SCHEMA, "seconds": merged}, sort_keys=True), "utf-8")
            temporary.replace(self.path)


def _key(runtime: str, stage: str) -> str:
    return f"{runtime}/{stage}"


def duration(seconds: float) -> str:
    """4.2s, 1m05s, 1h02m."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{rest:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
