"""Pricing: the cost of calls and runs at the rates of `[tool.windtunnel.pricing]` (windtunnel._core.rates).

Rates are per million tokens: `input` for prompt tokens not read from the prompt cache, `cache_read` for
prompt tokens read from it, `output` for completion tokens. A call costs

    (prompt - cached) * input + cached * cache_read + completion * output, over 1,000,000.

`prompt` counts cached input once, whichever spelling the usage came in (windtunnel._trace.usage: Anthropic's
cache counts are added to its `input_tokens`, OpenAI's `cached_tokens` are already part of the prompt), so
`cached` is always a part of `prompt`. Anthropic's cache writes (`cache_creation_input_tokens`) are priced at
the `input` rate.

Unknown is never zero: a run whose model label is unknown or not in the table, whose usage is unknown, or
one of whose calls lacks a count the price needs (the cached count only when cache_read differs from
input), has an unknown cost, and says why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from windtunnel._core.rates import Price
from windtunnel._trace.models import ModelCall, Trace

PER = 1_000_000


class CallCost(BaseModel):
    """One model call's price; `cost` is null when it cannot be known, and `reason` says why."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    call: int
    conversation: str
    prompt_tokens: int | None
    cached_tokens: int | None
    completion_tokens: int | None
    cost: float | None
    reason: str | None = None


class RunCost(BaseModel):
    """One run's price: the sum of its calls, or null (unknown, never zero) with the reason."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model_label: str | None
    cost: float | None
    reason: str | None = None
    calls: list[CallCost] = Field(default_factory=list)


class CostSummary(BaseModel):
    """Runs added up: `cost` is the total of the priced runs only when every run was priced."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model_label: str | None
    runs: int
    priced_runs: int
    cost: float | None = Field(description="null unless every run's cost is known; per million token rates")
    priced_cost: float = Field(description="the sum over the runs whose cost is known")
    reason: str | None = None


def call_cost(index: int, call: ModelCall, price: Price) -> CallCost:
    """The price of one call, with the cache-read rate for its cached prompt tokens."""
    base = CallCost(
        call=index,
        conversation=call.conversation,
        prompt_tokens=call.prompt_tokens,
        cached_tokens=call.cached_tokens,
        completion_tokens=call.completion_tokens,
        cost=None,
    )
    if call.prompt_tokens is None or call.completion_tokens is None:
        missing = "prompt_tokens" if call.prompt_tokens is None else "completion_tokens"
        return base.model_copy(update={"reason": f"the call reported no {missing}"})
    cached = call.cached_tokens
    if cached is None:
        if price.cache_discounted:
            reason = "the call reported no cached_tokens, and cached tokens have their own rate"
            return base.model_copy(update={"reason": reason})
        cached = 0  # one rate for cached and uncached input: the split does not change the price
    cached = min(cached, call.prompt_tokens)
    total = (
        (call.prompt_tokens - cached) * price.input
        + cached * price.cache_read
        + call.completion_tokens * price.output
    ) / PER
    return base.model_copy(update={"cost": total})


def run_cost(trace: Trace, table: Mapping[str, Price]) -> RunCost:
    """The run's cost from its per-call usage and its model's rates; unknown with a reason otherwise."""
    label = trace.model_label
    unknown = RunCost(model_label=label, cost=None)
    if label is None:
        return unknown.model_copy(update={"reason": "the model label is unknown"})
    price = table.get(label)
    if price is None:
        return unknown.model_copy(update={"reason": f"no pricing for model {label!r}"})
    if trace.model_calls is None or not trace.usage.known:
        return unknown.model_copy(update={"reason": "the runtime did not report usage for every send"})
    calls = [call_cost(index, call, price) for index, call in enumerate(trace.model_calls)]
    missing = next((call for call in calls if call.cost is None), None)
    if missing is not None:
        reason = f"model_calls[{missing.call}]: {missing.reason}"
        return unknown.model_copy(update={"calls": calls, "reason": reason})
    return RunCost(model_label=label, cost=sum(call.cost or 0.0 for call in calls), calls=calls)


def summarize(costs: Sequence[RunCost], model_label: str | None) -> CostSummary:
    """The total over runs: known only when every run is known (unknown is never counted as zero)."""
    priced = [cost.cost for cost in costs if cost.cost is not None]
    reasons = [cost.reason for cost in costs if cost.cost is None and cost.reason]
    all_known = bool(costs) and len(priced) == len(costs)
    reason = None if all_known else (reasons[0] if reasons else "no run was priced")
    return CostSummary(
        model_label=model_label,
        runs=len(costs),
        priced_runs=len(priced),
        cost=sum(priced) if all_known else None,
        priced_cost=sum(priced),
        reason=reason,
    )


def shown(cost: float | None) -> str:
    """A cost for people: six decimals (per million token rates make small numbers), or 'unknown'."""
    return "unknown" if cost is None else f"{cost:.6f}"
