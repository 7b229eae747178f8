"""Merge time of a sharded certification: `wt merge`'s work (merge_shards) on 10 and 100 synthetic shards,
beside one `wt verify` (verify_bundle) of one shard, in this run.

The shards are made by the test helpers (tests/unit/shard_bundles.py: the real plan split, stage plan,
publish and seal over small real steps, no containers), all of one plan split N ways, signed by one key.
Merging verifies every shard (one verify each), copies it under shards/<index>/, recomputes the checks,
renders the report, archives and seals, and the seal verifies what it wrote, the directory and the archive
(two more reads of every shard file). So a shard costs a small constant number of verifies, whatever N.
Times are CPU seconds of this process (a shared machine's other work does not count), each the best of
--repeat runs. Targets: merge time per shard at 100 shards within 2x of that at 10 (linear), and within
10x of one verify of one shard (the constant above, with room for the report and the archive).

Run: .venv/bin/python bench/bench_merge.py [--sizes 10,100] [--repeat 3]
Exit 0 when both targets hold, 1 otherwise.
"""

from __future__ import annotations

import argparse
import functools
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from load import load_line

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # the test helpers make the synthetic shards

# What `wt merge` and `wt verify` call, measured without a process start each (which would swamp one verify
# of a small shard): the private modules, as the tests import them.
from tests.unit.shard_bundles import make_shards, provided_signer  # noqa: E402

from windtunnel._bundle import Signer, verify_bundle  # noqa: E402, TID251
from windtunnel._pipeline.merge_shards import merge_shards  # noqa: E402, TID251

LINEAR = 2.0
"""Per-shard merge time at the largest size may be at most this many times that at the smallest."""
VERIFY_RATIO = 10.0
"""Per-shard merge time may be at most this many times one verify of one shard."""


def best_cpu(run: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        run()
        best = min(best, time.process_time() - started)
    return best


def merge_seconds(shards: list[Path], signer: Signer, scratch: Path, repeat: int) -> float:
    out = scratch / "merged"

    def merge() -> None:
        shutil.rmtree(out, ignore_errors=True)
        out.with_name("merged.tar.gz").unlink(missing_ok=True)
        merge_shards(shards, out=out, signer=signer, trusted=[signer.public_pem])

    return best_cpu(merge, repeat)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="10,100", help="shard counts, comma-separated (default 10,100)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement; the best counts")
    args = parser.parse_args(argv)
    sizes = [int(size) for size in args.sizes.split(",")]
    print(load_line())
    signer = provided_signer()
    per_shard: dict[int, float] = {}
    with tempfile.TemporaryDirectory(prefix="wt-bench-merge-") as scratch:
        root = Path(scratch)
        verify = 0.0
        for size in sizes:
            made = time.monotonic()
            shards = make_shards(root / f"plan-{size}", size, signer)
            print(f"made {size} shards in {time.monotonic() - made:.1f} s (wall)")
            if not verify:
                verify = best_cpu(functools.partial(verify_bundle, shards[0], signer.public_pem), args.repeat)
                print(f"verify of one shard: {verify * 1000:.1f} ms CPU")
            total = merge_seconds(shards, signer, root / f"plan-{size}", args.repeat)
            per_shard[size] = total / size
            print(
                f"merge of {size:>4} shards: {total:.2f} s CPU, {per_shard[size] * 1000:.1f} ms per shard, "
                f"{per_shard[size] / verify:.2f}x one verify"
            )
    small, large = min(sizes), max(sizes)
    growth = per_shard[large] / per_shard[small]
    worst = max(per_shard.values()) / verify
    print(f"per-shard time, {large} shards vs {small}: {growth:.2f}x (target <= {LINEAR}x: linear)")
    print(f"per-shard merge vs one verify: {worst:.2f}x at worst (target <= {VERIFY_RATIO}x)")
    ok = growth <= LINEAR and worst <= VERIFY_RATIO
    print("targets met" if ok else "a target was missed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
