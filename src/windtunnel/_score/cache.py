"""The prompt-cache-miss check: per conversation, a call whose already-sent prefix was not read from cache.

It reads `trace.model_calls` (one entry per inference call, in order; see windtunnel._trace.usage). Within
one conversation (an entry's `conversation`, by default the run's session id) every call after the first
resends what the earlier calls sent: the previous call's prompt is a prefix that a working prompt cache
serves again. A call's cache ratio is its cached tokens over that already-sent prefix (the previous call's
prompt tokens, or its own prompt when that is shorter), capped at 1. Measuring against the whole prompt
instead would flag a perfect cache whenever a tool result grows the prompt a lot, and a check must fail
only for a real miss. The first call of a conversation has nothing already sent and is never judged.

Two grades (docs/estate.md, the Benchmark assertion kind): `prompt_cache_min_share` is a hard threshold
that fails the case; `prompt_cache_expected_share` is an advisory hint, recorded and never failing. A call
whose usage lacks the prompt or cached count, or follows one whose prompt is unknown, is not evaluated:
when no call missed and some could not be judged, the check says "not evaluated", never passed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from windtunnel._score.models import CheckKind, CheckResult
from windtunnel._trace.models import ModelCall, Trace


@dataclass(frozen=True, slots=True)
class CallShare:
    """One judged call: where it is, what was already sent, what was read from cache."""

    index: int
    conversation: str
    prompt_tokens: int
    cached_tokens: int
    prefix_tokens: int

    @property
    def ratio(self) -> float:
        return min(1.0, self.cached_tokens / self.prefix_tokens) if self.prefix_tokens else 1.0

    def describe(self) -> str:
        return (
            f"model_calls[{self.index}] (conversation {self.conversation}): {self.cached_tokens} of "
            f"{self.prefix_tokens} already-sent prompt tokens read from cache, ratio {self.ratio:.2f} "
            f"({self.cached_tokens}/{self.prompt_tokens} of its whole prompt)"
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "call": self.index,
            "conversation": self.conversation,
            "prompt_tokens": self.prompt_tokens,
            "cached_tokens": self.cached_tokens,
            "prefix_tokens": self.prefix_tokens,
            "ratio": round(self.ratio, 4),
        }


@dataclass(frozen=True, slots=True)
class CacheReading:
    """Every non-first call of every conversation: judged (with its share) or not (why)."""

    judged: tuple[CallShare, ...]
    unknown: tuple[str, ...]


def read_calls(calls: Sequence[ModelCall]) -> CacheReading:
    """Judge each call against the previous call of its own conversation."""
    previous: dict[str, ModelCall] = {}
    judged: list[CallShare] = []
    unknown: list[str] = []
    for index, call in enumerate(calls):
        before = previous.get(call.conversation)
        previous[call.conversation] = call
        if before is None:
            continue  # a conversation's first call: nothing was sent before it, so nothing to read from cache
        if call.prompt_tokens is None or call.cached_tokens is None:
            missing = "prompt_tokens" if call.prompt_tokens is None else "cached_tokens"
            unknown.append(f"model_calls[{index}] reported no {missing}")
        elif before.prompt_tokens is None:
            unknown.append(f"model_calls[{index}] follows a call whose prompt size is unknown")
        else:
            prefix = min(before.prompt_tokens, call.prompt_tokens)
            judged.append(CallShare(index, call.conversation, call.prompt_tokens, call.cached_tokens, prefix))
    return CacheReading(judged=tuple(judged), unknown=tuple(unknown))


def prompt_cache_check(trace: Trace, threshold: float, *, hard: bool) -> CheckResult:
    """One check over the run's calls: `hard` fails the case on a miss, otherwise it is advisory."""
    name = "prompt_cache_min_share" if hard else "prompt_cache_expected_share"
    kind: CheckKind = "benchmark" if hard else "observation"
    grade = "" if hard else "advisory: "

    def result(passed: bool | None, detail: str, observed: Any = None, evaluated: bool = True) -> CheckResult:
        return CheckResult(
            id=f"benchmark.{name}",
            kind=kind,
            passed=passed if hard else None,
            evaluated=evaluated,
            detail=grade + detail,
            expected=threshold,
            observed=observed,
        )

    if trace.model_calls is None:
        return result(
            None, "not evaluated: the runtime reported no usage, so no cache split", evaluated=False
        )
    reading = read_calls(trace.model_calls)
    observed = [share.as_json() for share in reading.judged]
    misses = [share for share in reading.judged if share.ratio < threshold]
    if misses:
        shown = "; ".join(share.describe() for share in misses[:3])
        more = f" (+{len(misses) - 3} more)" if len(misses) > 3 else ""
        return result(False, f"prompt cache missed, ratio below {threshold:.2f}: {shown}{more}", observed)
    if reading.unknown:
        why = "; ".join(reading.unknown[:3]) + (" ..." if len(reading.unknown) > 3 else "")
        return result(None, f"not evaluated: {why}", observed, evaluated=False)
    if not reading.judged:
        detail = "not evaluated: no call resent an earlier prefix (each was the first of its conversation)"
        return result(None, detail, observed, evaluated=False)
    lowest = min(share.ratio for share in reading.judged)
    return result(
        True,
        f"{len(reading.judged)} call(s) read their sent prefix from cache, lowest ratio {lowest:.2f}",
        observed,
    )
