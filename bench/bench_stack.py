"""The live stack's per-turn overhead, as a ratio to one loopback HTTP round trip measured in the same run.

A turn goes runner -> runtime container (Contract C) -> model gateway -> MCP mock -> model gateway -> back:
the reference runtime in its container, the real gateway in script mode (so the "model" answers at once:
agent think time is excluded) and a real MCP mock, on the run's Docker network. The baseline is the median
of plain HTTP GETs to a uvicorn app on 127.0.0.1 from this process. Target: <= 10x.

Every turn opens a session of its own, and the runtime is reset (untimed) every CASE_TURNS turns, as
between the cases of a certification run: a turn's overhead is measured at a bounded size, not growing
with a search index that hundreds of turns would pile up. The first turn after a reset also lists the
MCP servers' tools again (one more MCP round trip); it is reported on its own line, not in the median.
The baseline is sampled before and after the turns (median of both blocks), so a machine that speeds up
or slows down during the run moves both.

Run: `python bench/bench_stack.py [--turns N]` (needs a Docker engine; WT_BASE_IMAGE as for wt certify).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from windtunnel._drivers.plugin import ContainerRuntimePlugin
from windtunnel._net.server_thread import ServerThread
from windtunnel._packs.loader import load_pack
from windtunnel.api import ReferenceCase, ReferenceDecision, ReferenceToolCall
from windtunnel.spi import AgentConfig

REPO = Path(__file__).resolve().parents[1]
CASE_TURNS = 10


async def _ok(request: Request) -> JSONResponse:
    return JSONResponse({"ok": True})


def loopback_rtts(samples: int = 500) -> list[float]:
    with ServerThread(Starlette(routes=[Route("/", _ok)])) as server, httpx.Client() as client:
        for _ in range(50):
            client.get(server.url)
        times = []
        for _ in range(samples):
            started = time.perf_counter()
            client.get(server.url)
            times.append(time.perf_counter() - started)
    return times


def turn_latencies(turns: int) -> tuple[list[float], list[float]]:
    """(turns after the first of their case, first turns of a case), in seconds, warm-up turns left out."""
    pack = load_pack(str(REPO / "scenarios" / "artifacts"))
    runtime = ContainerRuntimePlugin(REPO / "runtimes" / "reference").build("reference", "bench", None)
    try:
        mcps = runtime.start_mcps(pack.plans())
        decisions: list[ReferenceDecision] = []
        for index in range(turns):
            decisions += [
                ReferenceDecision(tool_calls=(ReferenceToolCall("list_artifacts", {}),)),
                ReferenceDecision(content=f"done {index}"),
            ]
        case = ReferenceCase(name="bench", kind="golden", decisions=tuple(decisions))
        handle = runtime.provision_reference(AgentConfig(), case, mcps)
        later: list[float] = []
        first: list[float] = []
        for index in range(turns):
            if index % CASE_TURNS == 0:
                handle.reset_state()
            started = time.perf_counter()
            handle.send([{"role": "user", "content": "List the artifacts."}], f"bench-{index}")
            elapsed = time.perf_counter() - started
            if index >= turns // 5:  # the first fifth warms up
                (first if index % CASE_TURNS == 0 else later).append(elapsed)
        handle.teardown()
    finally:
        runtime.close()
    return later, first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=200)
    args = parser.parse_args()
    before = loopback_rtts()
    later, first = turn_latencies(args.turns)
    rtt = statistics.median(before + loopback_rtts())
    turn = statistics.median(later)
    print(f"loopback HTTP round trip (median): {rtt * 1000:.3f} ms")
    print(f"stack turn, one tool call (median of {len(later)}): {turn * 1000:.2f} ms")
    print(f"ratio turn / loopback round trip: {turn / rtt:.1f}x (target <= 10x)")
    if first:
        opening = statistics.median(first)
        print(
            f"first turn after a reset (tools listed again; median of {len(first)}): {opening * 1000:.2f} ms, "
            f"{opening / rtt:.1f}x"
        )
    print(
        "a turn holds 4 HTTP round trips (inject, model, MCP tools/call, model); "
        f"per hop: {turn / rtt / 4:.1f}x"
    )


if __name__ == "__main__":
    main()
