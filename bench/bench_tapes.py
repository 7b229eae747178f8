"""Replay throughput: tape replay on tapes of 100, 1,000 and 10,000 interactions, against VCR.py.

For each size the same interactions (a system prompt, three tools, a short history; every fifth request a
duplicate) are replayed four ways, in this run:
  direct   windtunnel.api.TapeReplay.reply() in a loop (the gateway's replay code, without its server)
  httpx    TapeReplay behind httpx.MockTransport through a sync httpx.Client: the client stack VCR.py
           patches, so this is the like-for-like comparison
  gateway  `wt gateway serve --mode replay`, in its own process on 127.0.0.1
  vcr      VCR.py replaying a cassette of the same interactions (record_mode="none", matching on method,
           uri and body) through a sync httpx.Client
Rates are requests per CPU-second (this process; for gateway, this process plus the gateway's), so other
work on a shared machine does not distort them; each is the best of several runs for small tapes.
Targets: each way flat within 2x across sizes, and httpx at least 10x VCR.py at every size.
VCR.py scans its cassette from the start for every request, so it gets a wall-clock budget per size
(--vcr-budget); when the budget ends first, its rate covers the requests it finished, the cheap early ones,
which flatters it.

Run: .venv/bin/python bench/bench_tapes.py [--sizes 100,1000,10000] [--vcr-budget 60]
Exit 0 when both targets hold, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from load import load_line
from wt_cli import gateway_process

from windtunnel.api import TapeExchange, TapeReplay, build_tape

UPSTREAM = "http://upstream.bench.invalid/v1"
PATH = "/v1/chat/completions"
URL = UPSTREAM + "/chat/completions"
SYSTEM = "You are a support agent for an online shop. Follow the refund policy exactly. " * 6
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{name} in the order system",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
        },
    }
    for name in ("lookup_order", "issue_refund", "escalate")
]


def request_body(index: int) -> dict[str, Any]:
    """A realistic request: system prompt, tools, a short history; every fifth one repeats an earlier one."""
    key = index - index % 5 if index % 5 == 4 else index
    return {
        "model": "bench-model",
        "temperature": 0,
        "tools": TOOLS,
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"Order A-{key:05d} arrived broken. Please refund the mug."},
            {"role": "assistant", "content": None, "tool_calls": [_call(key)]},
            {"role": "tool", "tool_call_id": f"call_{key}", "content": json.dumps({"order": f"A-{key:05d}"})},
        ],
    }


def _call(key: int) -> dict[str, Any]:
    arguments = json.dumps({"order_id": f"A-{key:05d}"})
    return {
        "id": f"call_{key}",
        "type": "function",
        "function": {"name": "lookup_order", "arguments": arguments},
    }


def response_body(index: int) -> dict[str, Any]:
    message = {"role": "assistant", "content": f"I refunded the mug on order {index}."}
    return {
        "id": f"chatcmpl-{index}",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "bench-model-0001",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 300, "completion_tokens": 12, "total_tokens": 312},
    }


def write_bench_tape(size: int, directory: Path) -> Path:
    exchanges = (TapeExchange("POST", PATH, request_body(i), response_body(i)) for i in range(size))
    return build_tape(f"bench-{size}", exchanges, directory / f"bench-{size}.jsonl", upstream=UPSTREAM)


def rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else float("inf")


def bench_direct(tape: TapeReplay, bodies: Sequence[dict[str, Any]]) -> float:
    replay = tape.again()
    start = time.process_time()
    for body in bodies:
        if replay.reply("POST", PATH, body).error:
            raise SystemExit("replay answered a recorded error; the bench tape records none")
    seconds = time.process_time() - start
    replay.finish()
    return rate(len(bodies), seconds)


def bench_httpx(tape: TapeReplay, payloads: Sequence[bytes]) -> float:
    replay = tape.again()

    def handler(request: httpx.Request) -> httpx.Response:
        reply = replay.reply(request.method, request.url.path, json.loads(request.content))
        return httpx.Response(reply.status, json=reply.completion)

    with httpx.Client(transport=httpx.MockTransport(handler)) as client:
        start = time.process_time()
        for payload in payloads:
            client.post(URL, content=payload, headers={"content-type": "application/json"}).raise_for_status()
        seconds = time.process_time() - start
    replay.finish()
    return rate(len(payloads), seconds)


def cpu_seconds(child: int) -> float:
    """CPU time of this process plus the gateway child (Linux /proc), so other load on the machine is not
    counted; wall-clock time where /proc is missing."""
    stat = Path(f"/proc/{child}/stat")
    if not stat.is_file():
        return time.perf_counter()
    fields = stat.read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of proc(5))
    return ticks / os.sysconf("SC_CLK_TCK") + time.process_time()


def bench_gateway(tape_path: Path, payloads: Sequence[bytes]) -> float:
    """Through HTTP, with the gateway in its own process (as in a container), so client and server do not
    share an interpreter lock. The first tenth of the requests (at most 50) warms it up and is not timed."""
    serve = ("--mode", "replay", "--tape", str(tape_path), "--model", "bench-model")
    warm = min(50, len(payloads) // 10)
    with gateway_process(*serve) as (url, pid), httpx.Client(base_url=url.removesuffix("/v1")) as client:
        for index, payload in enumerate(payloads):
            if index == warm:
                start = cpu_seconds(pid)
            reply = client.post(PATH, content=payload, headers={"content-type": "application/json"})
            reply.raise_for_status()
        seconds = cpu_seconds(pid) - start
    return rate(len(payloads) - warm, seconds)


def write_cassette(path: Path, payloads: Sequence[bytes], size: int) -> None:
    import vcr
    from vcr.request import Request as VcrRequest

    with vcr.use_cassette(str(path), serializer="json", record_mode="all") as cassette:
        for index, payload in enumerate(payloads):
            request = VcrRequest("POST", URL, payload, {"content-type": "application/json"})
            body = json.dumps(response_body(index)).encode()
            response = {
                "status": {"code": 200, "message": "OK"},
                "headers": {"content-type": ["application/json"]},
                "body": {"string": body},
            }
            cassette.append(request, response)
    if not path.is_file():
        raise SystemExit(f"VCR.py wrote no cassette for size {size}")


def bench_vcr(path: Path, payloads: Sequence[bytes], budget: float) -> tuple[float, int]:
    import vcr

    recorder = vcr.VCR(serializer="json", record_mode="none", match_on=("method", "uri", "body"))
    done = 0
    with recorder.use_cassette(str(path)), httpx.Client() as client:
        start = time.process_time()
        wall = time.perf_counter()
        for payload in payloads:
            client.post(URL, content=payload, headers={"content-type": "application/json"}).raise_for_status()
            done += 1
            if time.perf_counter() - wall > budget:
                break
        seconds = time.process_time() - start
    return rate(done, seconds), done


@dataclass(frozen=True, slots=True)
class Row:
    size: int
    load_s: float
    rates: dict[str, float]  # way -> requests per second (best of the repeats)
    vcr: float
    vcr_done: int


def best(repeats: int, measure: Callable[[], float]) -> float:
    """Best of `repeats` runs, each on a fresh replay: small tapes finish too fast to time once."""
    return max(measure() for _ in range(repeats))


def run_size(size: int, directory: Path, vcr_budget: float) -> Row:
    bodies = [request_body(index) for index in range(size)]
    payloads = [json.dumps(body).encode() for body in bodies]
    tape_path = write_bench_tape(size, directory)
    started = time.perf_counter()
    tape = TapeReplay(tape_path)
    load_seconds = time.perf_counter() - started
    # Other work on the machine makes single runs noisy; every size gets at least three.
    repeats = max(3, min(20, 2000 // size))
    rates = {
        "direct": best(repeats, lambda: bench_direct(tape, bodies)),
        "httpx": best(repeats, lambda: bench_httpx(tape, payloads)),
    }
    rates["gateway"] = best(max(1, min(5, 1000 // size)), lambda: bench_gateway(tape_path, payloads))
    cassette = directory / f"bench-{size}.vcr.json"
    write_cassette(cassette, payloads, size)
    vcr_rps, vcr_done = bench_vcr(cassette, payloads, vcr_budget)
    return Row(size, load_seconds, rates, vcr_rps, vcr_done)


def report(rows: list[Row]) -> bool:
    ways = list(rows[0].rates)
    print(f"{'size':>7} {'load s':>7} " + " ".join(f"{way + ' rps':>12}" for way in ways), end="")
    print(f" {'vcr rps':>9} {'httpx/vcr':>10} {'direct/vcr':>11}")
    for row in rows:
        partial = "" if row.vcr_done == row.size else f"  (vcr: first {row.vcr_done} of {row.size} in budget)"
        print(
            f"{row.size:>7} {row.load_s:7.2f} " + " ".join(f"{row.rates[way]:12.0f}" for way in ways), end=""
        )
        print(
            f" {row.vcr:9.1f} {row.rates['httpx'] / row.vcr:9.0f}x {row.rates['direct'] / row.vcr:10.0f}x{partial}"
        )
    ok = True
    for way in ways:
        rates = [row.rates[way] for row in rows]
        spread = max(rates) / min(rates)
        ok = ok and spread <= 2.0
        verdict = "flat within 2x" if spread <= 2.0 else "NOT flat within 2x"
        print(f"{way}: fastest/slowest size = {spread:.2f} ({verdict})")
    worst = min(row.rates["httpx"] / row.vcr for row in rows)
    ok = ok and worst >= 10.0
    print(f"like-for-like (httpx) vs VCR.py at the worst size: {worst:.0f}x (target >= 10x)")
    return ok


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="100,1000,10000", help="comma-separated tape sizes")
    parser.add_argument(
        "--vcr-budget", type=float, default=60.0, metavar="SECONDS", help="VCR.py time per size"
    )
    args = parser.parse_args(argv)
    sizes = [int(value) for value in args.sizes.split(",")]
    print(load_line())
    with tempfile.TemporaryDirectory(prefix="wt-bench-tapes-") as directory:
        rows = [run_size(size, Path(directory), args.vcr_budget) for size in sizes]
    ok = report(rows)
    print(load_line())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
