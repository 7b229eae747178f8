"""Per-call usage normalisation (docs/estate.md), spelling by spelling, and the summed run usage."""

from __future__ import annotations

from typing import Any

import pytest

from windtunnel._trace.usage import model_calls, normalise_call, summed_usage


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        ({"prompt_tokens": 10, "completion_tokens": 2}, (10, None, 2)),
        ({"input_tokens": 11, "output_tokens": 3}, (11, None, 3)),
        ({"input": 12, "output": 4}, (12, None, 4)),
        ({"prompt_tokens": 5, "input_tokens": 99}, (5, None, None)),
        ({"prompt_tokens": 1500, "cached_tokens": 1300, "completion_tokens": 30}, (1500, 1300, 30)),
        ({"prompt_tokens": 9, "prompt_tokens_details": {"cached_tokens": 7}}, (9, 7, None)),
        # Anthropic: cache counts are additive to input_tokens, so the prompt is their sum.
        ({"input_tokens": 9, "cache_read_input_tokens": 6}, (15, 6, None)),
        (
            {
                "input_tokens": 3,
                "cache_creation_input_tokens": 40,
                "cache_read_input_tokens": 60,
                "output_tokens": 2,
            },
            (103, 60, 2),
        ),
        # OpenAI Responses: input_tokens_details.cached_tokens is part of input_tokens.
        (
            {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 80}, "output_tokens": 1},
            (100, 80, 1),
        ),
        # An OpenAI-shaped usage that also spells cache_read_input_tokens (as proxies do) keeps it a subset.
        ({"prompt_tokens": 100, "cache_read_input_tokens": 80}, (100, 80, None)),
        ({"input": 200, "cacheRead": 800, "output": 5}, (1000, 800, 5)),
        ({"cached_tokens": 3, "prompt_tokens_details": {"cached_tokens": 9}}, (None, 3, None)),
        ({"prompt_tokens": "10", "completion_tokens": True}, (None, None, None)),
        ({}, (None, None, None)),
    ],
)
def test_spellings_in_order_first_match_wins(usage: dict[str, Any], expected: tuple[Any, ...]) -> None:
    call = normalise_call(usage, "sess")
    assert (call.prompt_tokens, call.cached_tokens, call.completion_tokens) == expected
    assert call.conversation == "sess"


def test_calls_list_expands_and_conversation_overrides() -> None:
    usage = {
        "prompt_tokens": 10000,
        "cached_tokens": 9500,
        "completion_tokens": 60,
        "calls": [
            {"prompt_tokens": 1000, "cached_tokens": 0, "completion_tokens": 10},
            {"prompt_tokens": 4000, "cached_tokens": 500, "completion_tokens": 20, "conversation": "review"},
            {"prompt_tokens": 5000, "cached_tokens": 4900, "completion_tokens": 30},
        ],
    }
    calls = model_calls([usage, {"prompt_tokens": 7, "completion_tokens": 1}], "run-1")
    assert calls is not None
    assert [c.prompt_tokens for c in calls] == [1000, 4000, 5000, 7]
    assert [c.conversation for c in calls] == ["run-1", "review", "run-1", "run-1"]


def test_no_usage_at_all_leaves_model_calls_null() -> None:
    assert model_calls([None, None], "s") is None
    calls = model_calls([None, {"prompt_tokens": 3}], "s")
    assert calls is not None and len(calls) == 1


def test_summed_usage_known_only_when_every_send_reports() -> None:
    total = summed_usage(
        [{"prompt_tokens": 3, "completion_tokens": 1}, {"input_tokens": 4, "output_tokens": 2}]
    )
    assert (total.known, total.prompt_tokens, total.completion_tokens, total.total_tokens) == (True, 7, 3, 10)
    assert not summed_usage([{"prompt_tokens": 3, "completion_tokens": 1}, None]).known
    assert not summed_usage([]).known


@pytest.mark.parametrize(
    ("usage", "prompt", "completion"),
    [
        ({"input": 200, "cacheRead": 800, "output": 5}, 1000, 5),
        ({"input_tokens": 9, "output_tokens": 2}, 9, 2),
        ({"prompt_tokens": 4, "cacheRead": 6, "completion_tokens": 1}, 10, 1),
        (
            {"calls": [{"input": 10, "cacheRead": 5, "output": 1}, {"prompt_tokens": 20, "output": 2}]},
            35,
            3,
        ),
    ],
)
def test_summed_usage_reads_every_per_call_spelling(
    usage: dict[str, Any], prompt: int, completion: int
) -> None:
    total = summed_usage([usage, usage])
    assert (total.known, total.prompt_tokens, total.completion_tokens) == (True, 2 * prompt, 2 * completion)
    assert total.total_tokens == 2 * (prompt + completion)


@pytest.mark.parametrize(
    "usage",
    [
        {"input": 200},
        {"cacheRead": 800, "output": 5},
        {"calls": [{"input": 1, "output": 1}, {"input": 2}]},
        {"calls": []},
    ],
)
def test_summed_usage_unknown_when_a_send_lacks_a_total(usage: dict[str, Any]) -> None:
    assert not summed_usage([{"input": 1, "output": 1}, usage]).known


def test_token_budget_is_judged_on_a_runtime_reporting_input_output_cache_read() -> None:
    from windtunnel._score.gates import score_trace
    from windtunnel._trace.models import Trace, Turn
    from windtunnel.api import Benchmark, Expect, Scenario

    scenario = Scenario(name="s", prompt="p", expect=Expect(benchmark=Benchmark(token_budget=1200)))
    usage = {"input": 200, "cacheRead": 800, "output": 5}
    turn = Turn(index=0, user="p", response={}, shape="flat", content="ok", tool_calls=[], usage=usage)
    trace = Trace(
        run_id="r",
        scenario="s",
        pack=None,
        runtime="rt",
        agent_id="a",
        variant_id="v",
        session_id="x",
        started_at="now",
        turns=[turn],
        usage=summed_usage([usage]),
    )
    budget = next(c for c in score_trace(scenario, trace).checks if c.id == "benchmark.token_budget")
    assert budget.passed is True, budget.detail
    tight = Scenario(name="s", prompt="p", expect=Expect(benchmark=Benchmark(token_budget=1000)))
    budget = next(c for c in score_trace(tight, trace).checks if c.id == "benchmark.token_budget")
    assert budget.passed is False, budget.detail
