"""`wt --help` and `wt --version` wall time, against the anchor of a bare interpreter start in the same run.

Target: <= 0.3 s each (docs/design.md, "A fast CLI"): listing the verbs imports no verb module and none of
docker, pydantic, httpx or cryptography. Prints the median of N runs of each and the ratio to the anchor
(`python -c pass`, the floor any Python CLI pays).
Run: `python bench/bench_cli.py [--runs N]`.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

from load import load_line
from wt_cli import WT

TARGET_S = 0.3


def median_s(command: list[str], runs: int) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, capture_output=True, check=True)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7, help="runs of each command (default 7)")
    args = parser.parse_args()
    print(load_line())
    anchor = median_s([sys.executable, "-c", "pass"], args.runs)
    print(f"anchor: bare interpreter start {anchor * 1000:.0f} ms (median of {args.runs})")
    for flag in ("--help", "--version"):
        seconds = median_s([WT, flag], args.runs)
        verdict = "met" if seconds <= TARGET_S else "MISSED"
        print(
            f"wt {flag}: {seconds * 1000:.0f} ms; {seconds / anchor:.1f}x the interpreter start; "
            f"target <= {TARGET_S * 1000:.0f} ms: {verdict}"
        )


if __name__ == "__main__":
    main()
