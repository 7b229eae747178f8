"""A gateway turn per dialect: chat completions, Anthropic Messages and OpenAI Responses, in the same run.

A turn is what an agent loop costs the gateway in script mode: a tool call answered (JSON), then the final
answer after the tool result (JSON), then the same two streamed; with a system prompt, three tools and
non-ASCII arguments. `wt gateway serve` runs in its own process on 127.0.0.1; turns of the three dialects
are interleaved (chat, messages, responses, chat, ...) so the machine's load falls on all alike. The rate is
turns per CPU-second of the gateway process, the best of --repeats rounds; each dialect is reported as a
ratio to the chat turn measured beside it.
Target: each dialect's turn costs at most 1.2x the chat turn.

Run: .venv/bin/python bench/bench_dialects.py [--turns 150] [--repeats 3]
Exit 0 when the target holds, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from load import load_line
from wt_cli import gateway_process

TARGET = 1.2
SYSTEM = "You are a support agent for an online shop. Follow the refund policy exactly. " * 6
ARGS = {"order_id": "A-1042", "note": "Tasse zerbrochen, café ☕ bitte erstatten — 東京"}
NAMES = ("lookup_order", "issue_refund", "escalate")
SCHEMA = {"type": "object", "properties": {"order_id": {"type": "string"}, "note": {"type": "string"}}}
SCRIPT = [
    {"content": None, "tool_calls": [{"name": "lookup_order", "arguments": ARGS}]},
    {"content": "Erstattet: die Tasse von Bestellung A-1042.", "tool_calls": []},
]


def chat_bodies(stream: bool) -> tuple[str, dict[str, Any], Callable[[Any], dict[str, Any]]]:
    tools = [{"type": "function", "function": {"name": n, "parameters": SCHEMA}} for n in NAMES]
    messages: list[Any] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "Refund A-1042."},
    ]
    first = {"model": "wt-model", "messages": messages, "tools": tools, "stream": stream}

    def second(call_id: Any) -> dict[str, Any]:
        call = {
            "id": call_id,
            "type": "function",
            "function": {"name": "lookup_order", "arguments": json.dumps(ARGS)},
        }
        after = [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call_id, "content": "{}"},
        ]
        return {**first, "messages": [*messages, *after]}

    return "/v1/chat/completions", first, second


def messages_bodies(stream: bool) -> tuple[str, dict[str, Any], Callable[[Any], dict[str, Any]]]:
    tools = [{"name": f"mcp__shop__{n}", "input_schema": SCHEMA} for n in NAMES]
    messages: list[Any] = [{"role": "user", "content": "Refund A-1042."}]
    first = {
        "model": "wt-model",
        "max_tokens": 512,
        "system": SYSTEM,
        "messages": messages,
        "tools": tools,
        "stream": stream,
    }

    def second(call_id: Any) -> dict[str, Any]:
        use = {"type": "tool_use", "id": call_id, "name": "mcp__shop__lookup_order", "input": ARGS}
        result = {"type": "tool_result", "tool_use_id": call_id, "content": "{}"}
        after = [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]
        return {**first, "messages": [*messages, *after]}

    return "/v1/messages", first, second


def responses_bodies(stream: bool) -> tuple[str, dict[str, Any], Callable[[Any], dict[str, Any]]]:
    tools = [{"type": "function", "name": n, "parameters": SCHEMA} for n in NAMES]
    items: list[Any] = [{"role": "user", "content": "Refund A-1042."}]
    first = {"model": "wt-model", "instructions": SYSTEM, "input": items, "tools": tools, "stream": stream}

    def second(call_id: Any) -> dict[str, Any]:
        call = {
            "type": "function_call",
            "call_id": call_id,
            "name": "lookup_order",
            "arguments": json.dumps(ARGS),
        }
        return {
            **first,
            "input": [*items, call, {"type": "function_call_output", "call_id": call_id, "output": "{}"}],
        }

    return "/v1/responses", first, second


DIALECTS = {"chat": chat_bodies, "messages": messages_bodies, "responses": responses_bodies}


def turn(client: httpx.Client, dialect: str, session: str) -> None:
    """Install the two-call script for `session`, then run it plain and streamed (four model calls)."""
    for stream in (False, True):
        client.put(
            "/wt/script", json={"case": "bench", "session": session, "decisions": SCRIPT}
        ).raise_for_status()
        path, first, second = DIALECTS[dialect](stream)
        headers = {"x-wt-session": session}
        reply = client.post(path, json=first, headers=headers)
        reply.raise_for_status()
        client.post(path, json=second("call_bench"), headers=headers).raise_for_status()


def cpu_of(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(turns: int, repeats: int) -> dict[str, float]:
    """Turns per gateway CPU-second for each dialect: the best of `repeats` interleaved rounds."""
    best = dict.fromkeys(DIALECTS, 0.0)
    names = list(DIALECTS)
    with (
        gateway_process("--mode", "script", "--model", "wt-model") as (url, pid),
        httpx.Client(base_url=url.removesuffix("/v1"), timeout=30) as client,
    ):
        for name in names:  # warm up every route and code path
            turn(client, name, f"warm-{name}")
        for _ in range(repeats):
            spent = dict.fromkeys(DIALECTS, 0.0)
            for number in range(turns):
                # The order rotates each turn, so no dialect always follows the same one.
                for name in names[number % 3 :] + names[: number % 3]:
                    start = cpu_of(pid)
                    turn(client, name, f"{name}-{number}")
                    spent[name] += cpu_of(pid) - start
                    client.delete("/wt/log")
            for name, seconds in spent.items():
                best[name] = max(best[name], turns / seconds if seconds > 0 else float("inf"))
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=150)
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args(argv)
    print(load_line())
    started = time.perf_counter()
    rates = run(options.turns, options.repeats)
    chat = rates["chat"]
    ok = True
    for name, value in rates.items():
        ratio = chat / value if value else float("inf")
        ok = ok and ratio <= TARGET
        print(
            f"gateway turn {name:<9} {value:8.1f} turns/CPU-s   cost {ratio:4.2f}x chat (target <= {TARGET}x)"
        )
    print(f"took {time.perf_counter() - started:.1f}s; {'target holds' if ok else 'target missed'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
