"""Warm `wt certify` wall time for the reference runtime (images already built). Target: <= 60 s on 2 cores.

Runs `wt certify` once to warm the image caches (not timed unless --cold), then times a second run.
Run: `python bench/bench_certify.py` (needs a Docker engine).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def certify(out: Path) -> tuple[float, int]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "windtunnel._cli.main", "certify", "--out", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    return time.perf_counter() - started, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cold", action="store_true", help="also print the first (warming) run's time")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        first, code = certify(Path(tmp) / "warm-up")
        warm, code2 = certify(Path(tmp) / "timed")
    if args.cold:
        print(f"first wt certify (warms caches): {first:.1f} s (exit {code})")
    print(
        f"warm wt certify, reference runtime: {warm:.1f} s (exit {code2}); target <= 60 s; "
        f"ratio to target {warm / 60:.2f}"
    )


if __name__ == "__main__":
    main()
