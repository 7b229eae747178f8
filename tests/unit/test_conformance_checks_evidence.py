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
