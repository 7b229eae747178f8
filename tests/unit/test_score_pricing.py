"""Pricing (windtunnel._score.pricing): the config table, per-call and per-run cost with the cache-read
rate, unknown never zero; and `wt run` over real HTTP printing the cost a hand computation gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.unit.contract_c_endpoint import MISSED_SECOND_CALL, serving
from tests.unit.test_cli_run import FIXTURES, wt
from windtunnel._config import load_settings
from windtunnel._core.rates import Price
from windtunnel._score.pricing import call_cost, run_cost, summarize
from windtunnel._trace.models import ModelCall, Trace, Usage
from windtunnel.errors import ConfigFileError

PRICE = Price(input=3.0, cache_read=0.3, output=15.0)
# By hand, per million tokens: (prompt - cached) * 3 + cached * 0.3 + completion * 15.
#   call 0: 1200 * 3 + 0 * 0.3 + 40 * 15        = 4200
#   call 1: 1400 * 3 + 100 * 0.3 + 30 * 15      = 4680
#   call 2: 300 * 3 + 1500 * 0.3 + 20 * 15      = 1650
BY_HAND = [0.0042, 0.00468, 0.00165]
PRICING = """
[tool.windtunnel]
packs = []

[tool.windtunnel.pricing."test-model-a"]
input = 3.0
cache_read = 0.3
output = 15.0
"""


def trace(label: str | None, calls: list[ModelCall] | None, known: bool = True) -> Trace:
    return Trace(
        run_id="r",
        scenario="s",
        pack=None,
        runtime="t",
        agent_id="a",
        variant_id="v",
        session_id="s1",
        started_at="2026-01-01T00:00:00+00:00",
        model_label=label,
        model_calls=calls,
        usage=Usage(known=known, prompt_tokens=1, completion_tokens=1, total_tokens=2)
        if known
        else Usage(known=False),
    )


def calls() -> list[ModelCall]:
    return [ModelCall(conversation="s1", **usage) for usage in MISSED_SECOND_CALL["usage"]["calls"]]


def test_cached_tokens_are_priced_at_the_cache_read_rate() -> None:
    assert [call_cost(i, c, PRICE).cost for i, c in enumerate(calls())] == pytest.approx(BY_HAND)
    assert run_cost(trace("m", calls()), {"m": PRICE}).cost == pytest.approx(sum(BY_HAND))


@pytest.mark.parametrize(
    ("label", "table", "known", "reason"),
    [
        (None, {"m": PRICE}, True, "the model label is unknown"),
        ("other", {"m": PRICE}, True, "no pricing for model 'other'"),
        ("m", {"m": PRICE}, False, "did not report usage"),
    ],
)
def test_unknown_model_or_usage_is_unknown_cost_never_zero(
    label: str | None, table: dict[str, Price], known: bool, reason: str
) -> None:
    cost = run_cost(trace(label, calls(), known), table)
    assert cost.cost is None and reason in (cost.reason or "")


def test_a_call_without_its_cache_split_is_unknown_unless_cached_tokens_cost_the_same() -> None:
    split_unknown = [
        ModelCall(conversation="s1", prompt_tokens=1000, cached_tokens=None, completion_tokens=10)
    ]
    cost = run_cost(trace("m", split_unknown), {"m": PRICE})
    assert cost.cost is None and "model_calls[0]: the call reported no cached_tokens" in (cost.reason or "")
    flat = Price(input=2.0, cache_read=2.0, output=4.0)
    assert run_cost(trace("m", split_unknown), {"m": flat}).cost == pytest.approx((1000 * 2 + 10 * 4) / 1e6)


def test_a_total_is_known_only_when_every_run_is() -> None:
    known, unknown = run_cost(trace("m", calls()), {"m": PRICE}), run_cost(trace(None, calls()), {})
    total = summarize([known, unknown], "m")
    assert total.cost is None and total.priced_runs == 1 and total.priced_cost == pytest.approx(sum(BY_HAND))
    assert summarize([known, known], "m").cost == pytest.approx(2 * sum(BY_HAND))
    assert summarize([], "m").cost is None


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("[tool.windtunnel.pricing]\nm = 3", "pricing.m must be a table of rates"),
        ("[tool.windtunnel.pricing.m]\ninput = 1", "pricing.m has no output rate"),
        ("[tool.windtunnel.pricing.m]\ninput = 1\noutput = -2", "pricing.m.output must be a number >= 0"),
        ("[tool.windtunnel.pricing.m]\ninput = 1\noutput = 2\ncached = 1", "unknown key 'cached'"),
    ],
)
def test_a_bad_pricing_table_is_one_clear_error(tmp_path: Path, table: str, message: str) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[tool.windtunnel]\npacks = []\n{table}\n")
    with pytest.raises(ConfigFileError, match=message) as caught:
        load_settings(cwd=tmp_path, env={})
    assert "per million tokens" in (caught.value.hint or "")


def test_pricing_is_read_with_cache_read_defaulting_to_input(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        PRICING + "\n[tool.windtunnel.pricing.flat]\ninput = 1\noutput = 2\n"
    )
    settings = load_settings(cwd=tmp_path, env={})
    assert settings.pricing == {"test-model-a": PRICE, "flat": Price(input=1.0, output=2.0, cache_read=1.0)}


def test_wt_run_reports_the_cost_a_hand_computation_gives(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(PRICING)
    env = {"WT_TEST_MODEL_LABEL": "test-model-a"}
    args = ("run", "--runtime", "plugins.usage_plugins:labelled", "--pack", str(FIXTURES / "packs" / "cache"))
    with serving([MISSED_SECOND_CALL, MISSED_SECOND_CALL]) as (_, url):
        env["WT_INJECT_URL"] = url
        done = wt(*args, "--format", "json", cwd=tmp_path, env=env, tmp=tmp_path)
        text = wt(*args, cwd=tmp_path, env=env, tmp=tmp_path / "text")
    assert done.returncode == 1, done.stderr  # the second call missed the cache: the hard threshold fails
    run = json.loads(done.stdout)["runs"][0]
    assert run["model_label"] == "test-model-a" and run["score"]["model_label"] == "test-model-a"
    assert [c["cost"] for c in run["cost"]["calls"]] == pytest.approx(BY_HAND)
    assert run["cost"]["cost"] == pytest.approx(sum(BY_HAND))
    assert json.loads(done.stdout)["cost"]["cost"] == pytest.approx(sum(BY_HAND))
    assert f"cost {sum(BY_HAND):.6f}" in text.stdout and "model test-model-a" in text.stdout
    assert "benchmark.prompt_cache_min_share" in text.stdout and "ratio 0.08" in text.stdout
    ledger = json.loads((tmp_path / "runs" / "ledger.jsonl").read_text().splitlines()[-1])
    assert ledger["model"] == "test-model-a" and ledger["cost"] == pytest.approx(sum(BY_HAND))


def test_wt_run_without_usage_says_cost_unknown(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(PRICING)
    env = {"WT_TEST_MODEL_LABEL": "test-model-a"}
    with serving([{"content": "done", "tool_calls": []}]) as (_, url):
        env["WT_INJECT_URL"] = url
        done = wt(
            "run", "--runtime", "plugins.usage_plugins:labelled", "--pack", str(FIXTURES / "packs" / "cache"),
            cwd=tmp_path, env=env, tmp=tmp_path,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "cost unknown (the runtime did not report usage for every send)" in done.stdout
    assert "not evaluated: benchmark.prompt_cache_min_share" in done.stdout


@pytest.mark.parametrize(
    "usage",
    [
        {"input_tokens": 200_000, "cache_read_input_tokens": 800_000, "output_tokens": 0},
        {
            "prompt_tokens": 1_000_000,
            "prompt_tokens_details": {"cached_tokens": 800_000},
            "completion_tokens": 0,
        },
        {"input_tokens": 1_000_000, "input_tokens_details": {"cached_tokens": 800_000}, "output_tokens": 0},
    ],
    ids=["anthropic", "openai-chat", "openai-responses"],
)
def test_cached_input_is_priced_once_whichever_spelling_arrives(usage: dict[str, object]) -> None:
    from windtunnel._trace.usage import normalise_call

    cost = call_cost(0, normalise_call(usage, "s"), Price(input=1.0, output=1.0, cache_read=0.1))
    assert cost.cost == pytest.approx(0.2 + 0.08)
