"""The runner's per-run overhead on the in_memory runtime, in ms per run, at 50 and 500 runs.

Run: `python bench/bench_runner.py`. Each run resets the in-process mocks, resets the handle, sends one
turn that calls two tools, cross-checks evidence, captures state and scores the gate. Traces are kept in
memory (no disk), so this measures the runner itself; `--write` adds the trace + sidecar writes.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from windtunnel.api import load_pack, run_scenario
from windtunnel.spi import MCPHostingAgentRuntime

REPO = Path(__file__).resolve().parents[1]


def in_memory(scenarios: list[Any]) -> Any:
    """The in_memory runtime, found and built through its registered plugin like any other."""
    (entry,) = entry_points(group="windtunnel.runtimes", name="in_memory")
    plugin = entry.load()
    runtime = plugin.build("in_memory", "in_memory", None)
    plugin.pre_run(runtime, scenarios, "in_memory")
    return runtime


def per_run_ms(runs: int, write: bool) -> float:
    pack = load_pack(str(REPO / "scenarios" / "support_desk"))
    scenario = pack.scenario("refund_damaged_item")
    runtime = in_memory([scenario])
    assert isinstance(runtime, MCPHostingAgentRuntime), "in_memory hosts its pack's mocks in-process"
    mcps = runtime.start_mcps(pack.plans())
    probe = pack.state_probe_factory(mcps) if pack.state_probe_factory else None
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        results = run_scenario(
            runtime, scenario, mcps=mcps, state_probe=probe, runs=runs, out_dir=Path(out) if write else None
        )
        elapsed = time.perf_counter() - started
    assert all(result.score.passed for result in results), "the bench scenario must pass"
    return elapsed * 1000 / runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", action="store_true", help="also write traces and sidecars to disk")
    args = parser.parse_args()
    per_run_ms(20, args.write)  # warm imports and caches
    small, large = per_run_ms(50, args.write), per_run_ms(500, args.write)
    print(f"runner overhead on in_memory{' (with writes)' if args.write else ''}:")
    print(f"  50 runs:  {small:.3f} ms/run")
    print(f"  500 runs: {large:.3f} ms/run")
    print(f"  ratio 500/50: {large / small:.2f} (flat is ~1.0)")


if __name__ == "__main__":
    main()
