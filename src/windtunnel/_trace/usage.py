"""Usage: summed per run, and normalised per inference call into trace.model_calls (seed 002)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from windtunnel._trace.models import ModelCall, Usage

_CACHED = ("cached_tokens", "prompt_tokens_details.cached_tokens", "cache_read_input_tokens", "cacheRead")
_PROMPT = ("prompt_tokens", "input_tokens", "input")
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
    """One usage dict -> one entry. Spellings in order, first match wins; cacheRead adds to the prompt."""
    own = usage.get("conversation")
    if isinstance(own, str):
        conversation = own
    prompt = _first(usage, _PROMPT)
    cache_read = _count(usage, "cacheRead")
    if prompt is not None and cache_read is not None:
        prompt += cache_read
    return ModelCall(
        conversation=str(conversation),
        prompt_tokens=prompt,
        cached_tokens=_first(usage, _CACHED),
        completion_tokens=_first(usage, _COMPLETION),
    )


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
    """OpenAI-style usage summed over sends; unknown when any send reported none."""
    if not usages or any(usage is None for usage in usages):
        return Usage(known=False)
    prompt = completion = 0
    for usage in usages:
        assert usage is not None
        p, c = (
            _first(usage, ("prompt_tokens", "input_tokens")),
            _first(usage, ("completion_tokens", "output_tokens")),
        )
        if p is None or c is None:
            return Usage(known=False)
        prompt, completion = prompt + p, completion + c
    return Usage(
        known=True, prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion
    )
