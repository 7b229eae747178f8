"""The runner's per-run overhead on the in_memory runtime, against Inspect AI's per-sample slope measured
in the same run.

Each run resets the in-process mocks, resets the handle, sends one turn that calls two tools, cross-checks
evidence, captures state and scores the gate. Traces are kept in memory (no disk), so this measures the
runner itself; `--write` adds the trace + sidecar writes. The slope is (time at 500 - time at 50) / 450:
what one more run costs, start-up excluded. The anchor is Inspect AI's slope for one sample (its mockllm
model answering at once, `generate()` solver, `includes()` scorer, its log written), between 50 and
SAMPLES samples; `nox -s bench` installs inspect-ai. Without it the anchor is skipped, said so.
Run: `python bench/bench_runner.py [--write]`.
"""

from __future__ import annotations

import argparse
import importlib.util
import tempfile
import time
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from load import load_line

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


TARGET = 0.05
"""The runner's cost per extra run at most this fraction of Inspect AI's per extra sample."""

SAMPLES = 250
"""Inspect AI samples of the larger run (the smaller has 50)."""


def inspect_slope_ms() -> float | None:
    """Inspect AI's ms per extra sample with its mockllm model; None when inspect-ai is not installed."""
    if importlib.util.find_spec("inspect_ai") is None:
        return None
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate

    def answer(*_args: Any) -> ModelOutput:
        # Usage given, so mockllm does not count tokens with an encoding it would download.
        output = ModelOutput.from_content(model="mockllm", content="done")
        output.usage = ModelUsage(input_tokens=10, output_tokens=1, total_tokens=11)
        return output

    def seconds(samples: int, log_dir: str) -> float:
        dataset = [Sample(input=f"question {i}", target="done") for i in range(samples)]
        task = Task(dataset=dataset, solver=generate(), scorer=includes())
        model = get_model("mockllm/model", custom_outputs=answer)
        started = time.perf_counter()
        (log,) = inspect_eval(task, model=model, log_dir=log_dir, display="none", log_level="error")
        assert log.status == "success", f"Inspect AI's run did not succeed: {log.error}"
        return time.perf_counter() - started

    with tempfile.TemporaryDirectory() as log_dir:
        seconds(10, log_dir)  # warm imports and caches
        small, large = seconds(50, log_dir), seconds(SAMPLES, log_dir)
    return (large - small) * 1000 / (SAMPLES - 50)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", action="store_true", help="also write traces and sidecars to disk")
    args = parser.parse_args()
    print(load_line())
    per_run_ms(20, args.write)  # warm imports and caches
    small, large = per_run_ms(50, args.write), per_run_ms(500, args.write)
    slope = (large * 500 - small * 50) / 450
    print(f"runner overhead on in_memory{' (with writes)' if args.write else ''}:")
    print(f"  50 runs:  {small:.3f} ms/run")
    print(f"  500 runs: {large:.3f} ms/run")
    print(f"  ratio 500/50: {large / small:.2f} (flat is ~1.0); slope {slope:.3f} ms per extra run")
    anchor = inspect_slope_ms()
    if anchor is None:
        print("anchor: Inspect AI is not installed (nox -s bench installs it): no ratio")
        return
    print(f"anchor: Inspect AI, mockllm, {anchor:.3f} ms per extra sample (50 -> {SAMPLES} samples)")
    verdict = "met" if slope / anchor <= TARGET else "MISSED"
    print(f"runner slope / Inspect AI slope: {slope / anchor:.3f}x; target <= {TARGET:g}x: {verdict}")
    if verdict == "MISSED":
        raise SystemExit(1)  # nox -s bench runs every bench, then fails naming this one


if __name__ == "__main__":
    main()
