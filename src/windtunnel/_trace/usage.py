"""Usage: summed per run, and normalised per inference call into trace.model_calls (docs/estate.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from windtunnel._trace.models import ModelCall, Usage

_CACHED = (
    "cached_tokens",
    "prompt_tokens_details.cached_tokens",
    "input_tokens_details.cached_tokens",
    "cache_read_input_tokens",
    "cacheRead",
)
_PROMPT = ("prompt_tokens", "input_tokens", "input")
_ANTHROPIC_CACHE = ("cache_read_input_tokens", "cache_creation_input_tokens")
"""Anthropic counts cached input apart from `input_tokens` (additive); OpenAI's cached_tokens (chat's
prompt_tokens_details, Responses' input_tokens_details) are part of the prompt count (a subset)."""
_COMPLETION = ("completion_tokens", "output_tokens", "output")


def _count(usage: Mapping[str, Any], path: str) -> int | None:
    value: Any = usage
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value


def _first(usage: Mapping[str, Any], spellings: Sequence[str]) -> int | None:
    for spelling in spellings:
        value = _count(usage, spelling)
        if value is not None:
            return value
    return None


def normalise_call(usage: Mapping[str, Any], conversation: str) -> ModelCall:
    """One usage dict -> one entry. Spellings in order, first match wins. The prompt counts cached input
    once whichever spelling arrives: cacheRead and Anthropic's cache counts add to it, OpenAI's are in it."""
    own = usage.get("conversation")
    if isinstance(own, str):
        conversation = own
    prompt = _prompt(usage)
    return ModelCall(
        conversation=str(conversation),
        prompt_tokens=prompt,
        cached_tokens=_first(usage, _CACHED),
        completion_tokens=_first(usage, _COMPLETION),
    )


def _prompt(usage: Mapping[str, Any]) -> int | None:
    prompt = _first(usage, _PROMPT)
    if prompt is None:
        return None
    additive = ["cacheRead"]
    anthropic = _count(usage, "prompt_tokens") is None and "input_tokens_details" not in usage
    if anthropic and _count(usage, "input_tokens") is not None:
        additive += _ANTHROPIC_CACHE
    return prompt + sum(_count(usage, key) or 0 for key in additive)


def model_calls(usages: Sequence[Mapping[str, Any] | None], session_id: str) -> list[ModelCall] | None:
    """Every send's usage, in turn order; `usage.calls` expands into one entry per call; None if none."""
    if all(usage is None for usage in usages):
        return None
    entries: list[ModelCall] = []
    for usage in usages:
        if usage is None:
            continue
        calls = usage.get("calls")
        if isinstance(calls, list) and calls:
            entries += [normalise_call(call, session_id) for call in calls if isinstance(call, Mapping)]
        else:
            entries.append(normalise_call(usage, session_id))
    return entries


def summed_usage(usages: Sequence[Mapping[str, Any] | None]) -> Usage:
    """Usage summed over sends, read with the per-call spellings; unknown when any send reported none.

    A send counts with its own prompt and completion totals (every spelling of `normalise_call`,
    cacheRead added to the prompt); a send whose top level has none counts as the sum of its
    `usage.calls`, when every call reports both.
    """
    if not usages or any(usage is None for usage in usages):
        return Usage(known=False)
    prompt = completion = 0
    for usage in usages:
        assert usage is not None
        counted = _send_totals(usage)
        if counted is None:
            return Usage(known=False)
        prompt, completion = prompt + counted[0], completion + counted[1]
    return Usage(
        known=True, prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion
    )


def _send_totals(usage: Mapping[str, Any]) -> tuple[int, int] | None:
    own = _totals(usage)
    if own is not None:
        return own
    calls = usage.get("calls")
    if not isinstance(calls, list) or not calls:
        return None
    counted = [_totals(call) if isinstance(call, Mapping) else None for call in calls]
    if any(item is None for item in counted):
        return None
    known = [item for item in counted if item is not None]
    return sum(p for p, _ in known), sum(c for _, c in known)


def _totals(usage: Mapping[str, Any]) -> tuple[int, int] | None:
    entry = normalise_call(usage, "")
    if entry.prompt_tokens is None or entry.completion_tokens is None:
        return None
    return entry.prompt_tokens, entry.completion_tokens
