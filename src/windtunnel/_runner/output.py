"""Where runs land: a trace and a score sidecar per run, written atomically, and the run ledger."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

from windtunnel._files import write_atomic
from windtunnel._runner.execute import RunResult

__all__ = ["RunWriter", "append_ledger"]


def _safe(part: str) -> str:
    return re.sub(r"[^0-9A-Za-z._-]", "_", part) or "_"


class RunWriter:
    """Writes `<root>/<pack>/<scenario>/<stem>.trace.json` and `<stem>.score.json` as each run ends."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.results: list[RunResult] = []
        self.retried: list[RunResult] = []
        """Attempts a live-flaky retry superseded: written like any run, but not the run's result."""
        self._lock = threading.Lock()

    def stem(self, result: RunResult) -> Path:
        trace = result.trace
        name = f"run-{trace.run_index}"
        if trace.reference_case:
            name = f"{trace.reference_kind}-{trace.reference_case}"
        if trace.attempt:
            name += f".retry-{trace.attempt}"
        return self.root / _safe(trace.pack or "_") / _safe(trace.scenario) / _safe(name)

    def write(self, result: RunResult, *, superseded: bool = False) -> None:
        stem = self.stem(result)
        write_atomic(stem.with_name(stem.name + ".trace.json"), result.trace.model_dump_json(indent=2))
        write_atomic(stem.with_name(stem.name + ".score.json"), result.score.model_dump_json(indent=2))
        with self._lock:
            (self.retried if superseded else self.results).append(result)

    def trace_path(self, result: RunResult) -> Path:
        stem = self.stem(result)
        return stem.with_name(stem.name + ".trace.json")


def append_ledger(path: Path, entry: dict[str, Any]) -> None:
    """One JSON line per sweep; appends are whole lines so concurrent sweeps never interleave a line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps(entry, sort_keys=True) + "\n"
    with path.open("a", encoding="utf-8") as stream:
        stream.write(line)
