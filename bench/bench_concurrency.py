"""Concurrent sessions: `wt run` of 16 one-turn scenarios at 1, 2, 4 and 8 jobs at once, against a
latency-bound stand-in runtime whose model answers after a fixed delay (latency_runtime.py).

The anchor is the same sweep run one job at a time, seconds earlier. Each level's span runs from the first
send's start to the last send's end, as the stand-in records them, so `wt`'s own start-up is not counted.
Speed-up = span at 1 / span at N; the ideal is N (target >= 6x at 8, the runtime having no
max_concurrency). Every run must pass its gate, else it is no measurement.
Run: `python bench/bench_concurrency.py [--delay S]`.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from load import load_line
from wt_cli import WT

HERE = Path(__file__).resolve().parent
LEVELS = (1, 2, 4, 8)
TARGET_AT_8 = 6.0


def span_s(jobs: int, delay_s: float, tmp: Path) -> float:
    spans = tmp / f"spans-{jobs}"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")])),
        "WT_BENCH_SPANS": str(spans),
        "WT_BENCH_DELAY_S": str(delay_s),
    }
    command = [WT, "run", "--runtime", "latency_runtime:plugin", "--pack", str(HERE / "latency_pack")]
    command += ["--scheduler", "concurrent", "--max-concurrency", str(jobs), "--runs-dir", str(tmp / "runs")]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False, cwd=tmp)
    if done.returncode != 0:
        sys.exit(
            f"wt run at {jobs} jobs exited {done.returncode}: no measurement\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
        )
    pairs = [tuple(map(float, line.split())) for line in spans.read_text(encoding="utf-8").splitlines()]
    return max(end for _, end in pairs) - min(start for start, _ in pairs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--delay", type=float, default=0.5, help="the stand-in model's delay (default 0.5 s)")
    args = parser.parse_args()
    print(load_line())
    with tempfile.TemporaryDirectory() as name:
        spans = {jobs: span_s(jobs, args.delay, Path(name)) for jobs in LEVELS}
    anchor = spans[1]
    print(f"anchor: 16 sessions one at a time, model delay {args.delay:.2f} s: {anchor:.2f} s")
    for jobs in LEVELS[1:]:
        speedup = anchor / spans[jobs]
        target = (
            f"; target >= {TARGET_AT_8:.0f}x: {'met' if speedup >= TARGET_AT_8 else 'MISSED'}"
            if jobs == 8
            else ""
        )
        print(f"{jobs} at once: {spans[jobs]:.2f} s, speed-up {speedup:.2f}x (ideal {jobs}x){target}")


if __name__ == "__main__":
    main()
