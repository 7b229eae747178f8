"""A latency-bound stand-in runtime for bench_concurrency.py: its "model" answers after a fixed delay.

`wt run --runtime latency_runtime:plugin` (with bench/ on PYTHONPATH). Every send() sleeps
WT_BENCH_DELAY_S seconds (default 0.5), as an agent waiting on a remote model does, then answers in plain
text; it appends "start end" (time.time()) to WT_BENCH_SPANS, so the bench measures the sends themselves,
not the `wt` process around them. No limit on concurrent jobs: nothing is shared between handles.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from windtunnel.spi import AgentConfig, MCPHandle

_LOCK = threading.Lock()


class LatencyHandle:
    def __init__(self, delay_s: float, spans: Path | None) -> None:
        self.delay_s = delay_s
        self.spans = spans

    def send(self, messages: list[Any], session_id: str) -> dict[str, Any]:
        started = time.time()
        time.sleep(self.delay_s)
        if self.spans is not None:
            with _LOCK, self.spans.open("a", encoding="utf-8") as out:
                out.write(f"{started} {time.time()}\n")
        return {"content": "done", "tool_calls": []}

    def reset_state(self) -> None:
        return None

    def teardown(self) -> None:
        return None


class LatencyRuntime:
    def provision(self, config: AgentConfig, mcps: list[MCPHandle] | None = None) -> LatencyHandle:
        spans = os.environ.get("WT_BENCH_SPANS")
        return LatencyHandle(float(os.environ.get("WT_BENCH_DELAY_S", "0.5")), Path(spans) if spans else None)


class LatencyPlugin:
    max_concurrency: int | None = None

    def build(self, runtime_name: str, label: str, soul_path: Path | None) -> LatencyRuntime:
        return LatencyRuntime()

    def pre_run(self, runtime: LatencyRuntime, scenarios: Sequence[Any], runtime_name: str) -> None:
        return None


plugin = LatencyPlugin()
