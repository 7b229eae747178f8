"""Warm `wt certify` wall time for the reference runtime (images already built). Target: <= 60 s on 2 cores.

Runs `wt certify` once to warm the image caches (its time printed with --cold), then times a second run
and prints its wall time, the ratio to the target, and where the time went (each stage's seconds from the
bundle's evidence). A run that does not exit 0 (PASSED) is no measurement: the script prints why and
exits with that code.
Run: `python bench/bench_certify.py` (needs a Docker engine).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from wt_cli import WT

TARGET_S = 60.0


class CertifyFailed(SystemExit):
    """`wt certify` exited non-zero: print its tail, exit with its code."""


def certify(out: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [WT, "certify", "--out", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.stderr.write(
            f"wt certify exited {done.returncode} after {seconds:.1f} s: no measurement\n"
            f"--- its output (end) ---\n{done.stdout[-3000:]}\n--- its stderr (end) ---\n{done.stderr[-3000:]}\n"
        )
        raise CertifyFailed(done.returncode)
    return seconds


def stage_seconds(bundle: Path) -> dict[str, float]:
    """Seconds per stage, summed over runtimes, from evidence/<runtime>/<stage>/stage.json."""
    totals: dict[str, float] = defaultdict(float)
    for path in sorted(bundle.glob("evidence/*/*/stage.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        totals[data["stage"]] += float(data["seconds"])
    return dict(totals)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cold", action="store_true", help="also print the first (warming) run's time")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        first = certify(Path(tmp) / "warm-up")
        timed = Path(tmp) / "timed"
        warm = certify(timed)
        stages = stage_seconds(timed)
    if args.cold:
        print(f"first wt certify (warms caches): {first:.1f} s")
    print(
        f"warm wt certify, reference runtime: {warm:.1f} s; target <= {TARGET_S:.0f} s; "
        f"ratio to target {warm / TARGET_S:.2f}"
    )
    staged = sum(stages.values())
    parts = ", ".join(f"{stage} {seconds:.1f} s" for stage, seconds in stages.items())
    print(f"  stages: {parts}; outside the stages (start, publish, cleanup): {warm - staged:.1f} s")


if __name__ == "__main__":
    main()
