"""The live stack's per-turn overhead, as a ratio to one loopback HTTP round trip measured in the same run.

A turn goes runner -> runtime container (Contract C) -> model gateway -> MCP mock -> model gateway -> back:
the reference runtime in its container, the real gateway in script mode (so the "model" answers at once:
agent think time is excluded) and a real MCP mock, on the run's Docker network. The baseline is the median
of plain HTTP GETs on 127.0.0.1 to a model gateway (`wt gateway serve`, its model list) in a process of
its own, as the stack's servers are. Target: <= 5x.

Every turn opens a session of its own, and the runtime is reset (untimed) every CASE_TURNS turns, as
between the cases of a certification run: a turn's overhead is measured at a bounded size, not growing
with a search index that hundreds of turns would pile up. The first turn after a reset also lists the
MCP servers' tools again (one more MCP round trip); it is reported on its own line, not in the median.
The run is measured in rounds: a block of loopback round trips, a block of turns, another loopback
block. Each round's ratio compares blocks measured seconds apart, so a machine that speeds up or slows
down during the run moves both; the ratio reported is the median over the rounds, with their range.

Run: `python bench/bench_stack.py [--rounds R] [--turns N]` (needs a Docker engine; WT_BASE_IMAGE as for wt certify).
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx
from load import load_line
from wt_cli import gateway

from windtunnel.api import ReferenceCase, ReferenceDecision, ReferenceToolCall, load_pack
from windtunnel.spi import AgentConfig, container_plugin

REPO = Path(__file__).resolve().parents[1]
CASE_TURNS = 10
TARGET = 5.0
"""A turn's median cost at most this many loopback HTTP round trips."""


def _timed(call: Callable[[], object], samples: int) -> list[float]:
    times = []
    for _ in range(samples):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return times


@dataclass
class Round:
    baseline: list[float]  # loopback round trips just before and just after the turns
    later: list[float]  # turns after the first of their case
    first: list[float]  # first turns of a case (tools listed again)

    @property
    def ratio(self) -> float:
        return statistics.median(self.later) / statistics.median(self.baseline)


def run_rounds(rounds: int, turns: int, baseline_samples: int) -> list[Round]:
    """`rounds` times: loopback block, `turns` turns through the stack, loopback block (one stack, warm)."""
    pack = load_pack(str(REPO / "scenarios" / "artifacts"))
    runtime = container_plugin(REPO / "runtimes" / "reference").build("reference", "bench", None)
    try:
        mcps = runtime.start_mcps(pack.plans())
        total = (rounds + 1) * turns  # one extra round's worth warms up, unmeasured
        decisions: list[ReferenceDecision] = []
        for index in range(total):
            decisions += [
                ReferenceDecision(tool_calls=(ReferenceToolCall("list_artifacts", {}),)),
                ReferenceDecision(content=f"done {index}"),
            ]
        case = ReferenceCase(name="bench", kind="golden", decisions=tuple(decisions))
        handle = runtime.provision_reference(AgentConfig(), case, mcps)
        counter = itertools.count()

        def turn() -> tuple[bool, float]:
            """One timed turn; True when it opened a case (the runtime was reset before it)."""
            index = next(counter)
            opening = index % CASE_TURNS == 0
            if opening:
                handle.reset_state()  # untimed, as between the cases of a run
            started = time.perf_counter()
            handle.send([{"role": "user", "content": "List the artifacts."}], f"bench-{index}")
            return opening, time.perf_counter() - started

        results: list[Round] = []
        with gateway() as url, httpx.Client() as client:
            models = f"{url}/models"
            _timed(lambda: client.get(models), 50)
            for _ in range(turns):
                turn()
            for _ in range(rounds):
                measured = Round(_timed(lambda: client.get(models), baseline_samples), [], [])
                for _ in range(turns):
                    opening, elapsed = turn()
                    (measured.first if opening else measured.later).append(elapsed)
                measured.baseline += _timed(lambda: client.get(models), baseline_samples)
                results.append(measured)
        handle.teardown()
    finally:
        runtime.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--turns", type=int, default=60, help="turns per round")
    parser.add_argument("--baseline", type=int, default=200, help="loopback round trips per block")
    args = parser.parse_args()
    print(load_line())
    rounds = run_rounds(args.rounds, args.turns, args.baseline)
    for number, measured in enumerate(rounds, 1):
        print(
            f"round {number}: loopback {statistics.median(measured.baseline) * 1000:.3f} ms, "
            f"turn {statistics.median(measured.later) * 1000:.2f} ms, ratio {measured.ratio:.1f}x"
        )
    ratios = sorted(measured.ratio for measured in rounds)
    rtt = statistics.median([sample for measured in rounds for sample in measured.baseline])
    turn = statistics.median([sample for measured in rounds for sample in measured.later])
    first = statistics.median([sample for measured in rounds for sample in measured.first])
    print(f"loopback HTTP round trip (median): {rtt * 1000:.3f} ms")
    print(f"stack turn, one tool call (median): {turn * 1000:.2f} ms")
    ratio = statistics.median(ratios)
    verdict = "met" if ratio <= TARGET else "MISSED"
    print(
        f"ratio turn / loopback round trip: {ratio:.1f}x, median of {len(ratios)} rounds "
        f"(range {ratios[0]:.1f}x-{ratios[-1]:.1f}x); target <= {TARGET:g}x: {verdict}"
    )
    print(f"first turn of a case (tools listed again): {first * 1000:.2f} ms, {first / rtt:.1f}x")
    print(
        f"a turn holds 4 HTTP round trips (inject, model, MCP tools/call, model); per hop: {ratio / 4:.1f}x"
    )
    print(load_line())
    if verdict == "MISSED":
        raise SystemExit(1)  # nox -s bench runs every bench, then fails naming this one


if __name__ == "__main__":
    main()
