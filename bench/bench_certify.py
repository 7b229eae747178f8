"""Warm `wt certify` of the reference runtime, against the container floor measured in the same run.

The anchor is the container floor: docker-py runs a Python container from the base image, waits until it
prints that it is ready, and removes it (the least any container-per-check design pays). Target: a warm
certify costs <= 60 floors. The first `wt certify` warms the images and the reference control's cache;
the timed one reuses both (its summary says the control is cached). Prints each stage's seconds (run.json)
and what each bounded family of checks adds to it (FAMILIES: the seconds of its checks over the rest of the
run), and, with --no-cache, a warm run that plays the control afresh too.
With --parallel: two certifies of different runtimes (the reference, and a poison runtime that must come
out FAILED) at once on one engine, against the same two run one after the other.
A certify that does not end as expected is no measurement: the script prints why and exits non-zero.
Run: `python bench/bench_certify.py [--no-cache] [--parallel]` (needs a Docker engine).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import docker
from load import load_line
from wt_cli import WT

FLOOR_BUDGET = 60
"""A warm certify should cost at most this many container floors (docs/design.md, "Speed")."""
POISON = "runtimes/reference/poison/keep_conversation_across_reset"
"""The second runtime of --parallel: a poison, so its certify must end FAILED (exit 1)."""
REPO = Path(__file__).resolve().parents[1]
BASE_IMAGE = os.environ.get("WT_BASE_IMAGE", "windtunnel/base:bookworm-py3")


class CertifyFailed(SystemExit):
    """`wt certify` did not end as expected: print its tail, exit non-zero."""


def container_floor(client: docker.DockerClient, samples: int = 5) -> float:
    """Median seconds of docker-py run + ready + remove of a Python container from the base image."""
    label = {"windtunnel.bench": f"floor-{uuid.uuid4().hex[:8]}"}
    times = []
    for _ in range(samples):
        started = time.perf_counter()
        container = client.containers.run(
            BASE_IMAGE, ["python3", "-c", "print('ready', flush=True)"], detach=True, labels=label
        )
        try:
            for line in container.logs(stream=True, follow=True):
                if b"ready" in line:
                    break
        finally:
            container.remove(force=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def certify(out: Path, *args: str, expect: int = 0) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [WT, "certify", "--out", str(out), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )


def finished(child: subprocess.Popen[str], started: float, expect: int = 0) -> tuple[float, str]:
    stdout, stderr = child.communicate()
    seconds = time.perf_counter() - started
    if child.returncode != expect:
        sys.stderr.write(
            f"wt certify exited {child.returncode} (expected {expect}) after {seconds:.1f} s: no measurement\n"
            f"--- its output (end) ---\n{stdout[-3000:]}\n--- its stderr (end) ---\n{stderr[-3000:]}\n"
        )
        raise CertifyFailed(1)
    return seconds, stdout


def timed(out: Path, *args: str, expect: int = 0) -> tuple[float, str]:
    return finished(certify(out, *args), time.perf_counter(), expect)


def stage_seconds(bundle: Path) -> dict[str, float]:
    """Seconds per stage, summed over the run's runtimes, from run.json."""
    totals: dict[str, float] = {}
    for runtime in json.loads((bundle / "run.json").read_text(encoding="utf-8"))["runtimes"]:
        for stage, seconds in runtime.get("stage_seconds", {}).items():
            totals[stage] = totals.get(stage, 0.0) + float(seconds)
    return totals


FAMILIES = (
    ("the fault checks (faults/*)", ("faults/",), 0.25),
    ("the long-result and session checks", ("long_tool_results", "session_attribution"), 0.10),
    ("the MCP client checks (mcp_client/*)", ("mcp_client/",), None),
)
"""Check families whose cost a warm certify must bound (docs/design.md, "Speed"): a name, the check ids
(after `<runtime>/conformance/`) that start with one of the prefixes, and the most they may add."""


def family_shares(bundle: Path, seconds: float) -> None:
    """What each family of checks added to this certify: the seconds its checks took (checks.json) over the
    rest of the run's wall time, i.e. how much slower the same certify is than one without them."""
    checks = json.loads((bundle / "checks.json").read_text(encoding="utf-8"))["checks"]
    for name, prefixes, bound in FAMILIES:
        taken = sum(
            float(check["seconds"])
            for check in checks
            if check["stage"] == "conformance"
            and check["id"].split("/conformance/", 1)[-1].startswith(prefixes)
        )
        added = taken / max(seconds - taken, 1e-9)
        target = "" if bound is None else f"; bound +{bound:.0%}: {'met' if added <= bound else 'MISSED'}"
        print(f"  {name}: {taken:.1f} s, +{added:.1%} over the certify without them{target}")


def report(name: str, seconds: float, floor: float, bundle: Path) -> None:
    floors = seconds / floor
    verdict = "met" if floors <= FLOOR_BUDGET else "MISSED"
    print(f"{name}: {seconds:.1f} s = {floors:.0f} container floors; target <= {FLOOR_BUDGET}: {verdict}")
    stages = stage_seconds(bundle)
    parts = ", ".join(f"{stage} {value:.1f} s" for stage, value in stages.items())
    print(f"  stages: {parts}; outside the stages: {seconds - sum(stages.values()):.1f} s")
    family_shares(bundle, seconds)


def parallel(tmp: Path, floor: float) -> None:
    """Two certifies of different runtimes at once, against the two one after the other."""
    alone_reference, _ = timed(tmp / "alone-reference")
    alone_poison, _ = timed(tmp / "alone-poison", "--runtime", POISON, expect=1)
    started = time.perf_counter()
    children = [certify(tmp / "par-reference"), certify(tmp / "par-poison", "--runtime", POISON)]
    finished(children[0], started)
    finished(children[1], started, expect=1)
    both = time.perf_counter() - started
    serial = alone_reference + alone_poison
    print(
        f"two certifies in parallel (reference; {Path(POISON).name}): {both:.1f} s vs {serial:.1f} s one "
        f"after the other: speed-up {serial / both:.2f}x ({both / floor:.0f} floors)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--no-cache", action="store_true", help="also time a warm run with --no-cache")
    parser.add_argument("--parallel", action="store_true", help="also time two certifies in parallel")
    args = parser.parse_args()
    print(load_line())
    client = docker.from_env()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        first, _ = timed(tmp / "warm-up")
        floor_before = container_floor(client)
        warm, summary = timed(tmp / "timed")
        floor = statistics.median([floor_before, container_floor(client)])
        print(f"anchor: container floor (docker-py run + ready + remove) {floor * 1000:.0f} ms")
        print(f"first wt certify (warms images and the control cache): {first:.1f} s")
        report("warm wt certify, reference runtime, cached control", warm, floor, tmp / "timed")
        if "cached:" not in summary:
            print("  (the control was NOT reused: its summary has no cached line)")
        if args.no_cache:
            fresh, _ = timed(tmp / "fresh", "--no-cache")
            report("warm wt certify --no-cache", fresh, floor, tmp / "fresh")
        if args.parallel:
            parallel(tmp, floor)
    print(load_line())


if __name__ == "__main__":
    main()
