"""rendered_prompt_and_usage's usage comparison: per call, or one aggregate per turn against the sum served."""

from __future__ import annotations

from typing import Any

from windtunnel._conformance.checks_evidence import _usage_problem
from windtunnel._trace.models import ModelCall, Trace, Turn

SERVED = [{"prompt_tokens": 10, "completion_tokens": 2}, {"prompt_tokens": 30, "completion_tokens": 5}]


def _trace(calls: list[tuple[int, int]]) -> Trace:
    turn = Turn(index=0, user="go", response={}, shape="flat", content="done", tool_calls=[])
    return Trace(
        run_id="r",
        scenario="s",
        pack=None,
        runtime="rt",
        agent_id="a",
        variant_id="v",
        session_id="x",
        started_at="now",
        turns=[turn],
        model_calls=[
            ModelCall(conversation="x", prompt_tokens=p, cached_tokens=None, completion_tokens=c)
            for p, c in calls
        ],
    )


def _requests() -> list[dict[str, Any]]:
    return [{"usage": usage, "turn": 0} for usage in SERVED]


def test_per_call_usage_must_match_each_call() -> None:
    assert _usage_problem(_trace([(10, 2), (30, 5)]), _requests()) is None
    assert "call(s) [1]" in (_usage_problem(_trace([(10, 2), (31, 5)]), _requests()) or "")


def test_one_aggregate_must_be_the_sum_served() -> None:
    assert _usage_problem(_trace([(40, 7)]), _requests()) is None
    last_only = _usage_problem(_trace([(30, 5)]), _requests())
    assert last_only is not None and "served {'prompt_tokens': 40, 'completion_tokens': 7}" in last_only


def test_any_other_count_is_named() -> None:
    problem = _usage_problem(_trace([(1, 1), (2, 2), (3, 3)]), _requests())
    assert problem is not None and "3 usage entries for 2 model calls" in problem


def test_usage_served_in_the_messages_and_responses_spelling_is_compared_too() -> None:
    """The gateway logs each wire's own usage (input_tokens / output_tokens in Anthropic Messages and OpenAI
    Responses): it is read as chat's prompt and completion tokens are, so a wrong report fails in every wire
    (it once compared nothing there, and a report of the last call's usage alone passed)."""
    native = [{"input_tokens": 10, "output_tokens": 2}, {"input_tokens": 30, "output_tokens": 5}]
    requests = [{"usage": usage, "turn": 0, "wire": "anthropic-messages"} for usage in native]
    assert _usage_problem(_trace([(40, 7)]), requests) is None
    last_only = _usage_problem(_trace([(30, 5)]), requests)
    assert last_only is not None and "served {'prompt_tokens': 40, 'completion_tokens': 7}" in last_only
    assert "call(s) [1]" in (_usage_problem(_trace([(10, 2), (31, 5)]), requests) or "")
    # Anthropic's cache counts add to input_tokens, as in the runtime's own report.
    cached = [{"usage": {"input_tokens": 4, "cache_read_input_tokens": 6, "output_tokens": 2}, "turn": 0}]
    assert _usage_problem(_trace([(10, 2)]), cached) is None
