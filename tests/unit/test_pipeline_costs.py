"""Certify with pricing and the model ladder: the ladder is checked before any stage; run.json, the
evidence and report.html carry each runtime's model label and the cost of its selftest runs, which a hand
computation matches; an unknown label is an unknown cost. Real plan, real bundle directory, real seal."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest

from tests.unit.pipeline_steps import REPO, Executor, build, config, step
from tests.unit.test_pipeline_publish import provided_signer
from windtunnel._bundle.models import CheckRecord, Stage
from windtunnel._bundle.verify import verify_bundle
from windtunnel._config import Settings
from windtunnel._core.ladder import Ladder
from windtunnel._core.rates import Price
from windtunnel._core.vocabulary import CheckStatus
from windtunnel._files import write_atomic
from windtunnel._pipeline.context import StageContext
from windtunnel._pipeline.plan import Step, execute
from windtunnel._pipeline.publish import publish
from windtunnel._trace.models import ModelCall, Trace, Usage
from windtunnel.errors import ConfigFileError

sys.path.insert(0, str(REPO / "tests" / "fixtures"))
LABELLED = "plugins.usage_plugins:labelled"
PRICE = Price(input=3.0, cache_read=0.3, output=15.0)
BY_HAND = (1200 * 3 + 40 * 15 + 1400 * 3 + 100 * 0.3 + 30 * 15) / 1e6  # two calls, see test_score_pricing


def selftest_with_usage() -> Step:
    """A selftest stage that writes one run's trace per runtime, with per-call usage, as the real one does."""

    def run(ctx: StageContext) -> list[CheckRecord]:
        calls = [
            ModelCall(conversation="s", prompt_tokens=1200, cached_tokens=0, completion_tokens=40),
            ModelCall(conversation="s", prompt_tokens=1500, cached_tokens=100, completion_tokens=30),
        ]
        trace = Trace(
            run_id="r1",
            scenario="s",
            pack="p",
            runtime=ctx.run.name,
            agent_id="a",
            variant_id="v",
            session_id="s",
            started_at="2026-01-01T00:00:00+00:00",
            model_label=ctx.run.model_label,
            usage=Usage(known=True, prompt_tokens=2700, completion_tokens=70, total_tokens=2770),
            model_calls=calls,
        )
        path = ctx.traces_dir() / "p" / "s" / "golden-g.trace.json"
        write_atomic(path, trace.model_dump_json())
        return [ctx.check("p/s/g", CheckStatus.PASSED, "PASS", evidence=[ctx.relative(path)], tier="smoke")]

    return Step(Stage.SELFTEST, run)


def test_run_json_evidence_and_report_carry_model_and_a_hand_checked_cost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WT_TEST_MODEL_LABEL", "test-model-a")
    project = Settings(
        root=tmp_path, source=None, pricing={"test-model-a": PRICE}, ladder=Ladder(models=("test-model-a",))
    )
    settings = dataclasses.replace(config(tmp_path, runtimes=(LABELLED,)), project=project)
    outcome = execute((build(), step(Stage.CONFORMANCE), selftest_with_usage()), settings, Executor())
    signer = provided_signer()
    published = publish(settings, outcome, signer=signer)
    out = tmp_path / "out"
    assert verify_bundle(out, signer.public_pem).valid
    runtimes = {r["name"]: r for r in json.loads((out / "run.json").read_text())["runtimes"]}
    assert runtimes[LABELLED]["model_label"] == "test-model-a"
    assert runtimes[LABELLED]["cost"]["cost"] == pytest.approx(BY_HAND)
    assert runtimes["reference"]["model_label"] is None
    assert runtimes["reference"]["cost"]["cost"] is None
    assert runtimes["reference"]["cost"]["reason"] == "the model label is unknown"
    assert json.loads((out / "run.json").read_text())["tiers"] == ["smoke", "stable"]
    evidence = json.loads(
        (out / "evidence" / "plugins.usage_plugins_labelled" / "selftest" / "cost.json").read_text()
    )
    assert [c["cost"] for c in evidence["runs"][0]["calls"]] == pytest.approx([0.0042, 0.00468])
    report = (out / "report.html").read_text()
    assert f"{BY_HAND:.6f} over 1 run(s)" in report and "test-model-a" in report
    assert "unknown (the model label is unknown)" in report
    assert published.verdict.result.value == "PASSED"
    checks = json.loads((out / "checks.json").read_text())["checks"]
    assert {c["tier"] for c in checks if c["stage"] == "selftest" and c["scope"] == "runtime"} == {"smoke"}


def test_certify_rejects_an_unlisted_model_before_any_stage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WT_TEST_MODEL_LABEL", "test-model-a")
    project = Settings(root=tmp_path, source=None, ladder=Ladder(models=("other",)))
    settings = dataclasses.replace(config(tmp_path, runtimes=(LABELLED,)), project=project)
    ran: list[str] = []

    def noting(ctx: StageContext) -> list[CheckRecord]:
        ran.append(ctx.run.name)
        return []

    with pytest.raises(ConfigFileError, match="answers with model 'test-model-a'"):
        execute((Step(Stage.BUILD, noting),), settings, Executor())
    assert ran == []


def test_the_report_shows_a_quarantined_failure_as_not_gating_and_links_the_cost_evidence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WT_TEST_MODEL_LABEL", "test-model-a")

    def quarantined(ctx: StageContext) -> list[CheckRecord]:
        return [
            ctx.check("p/q/g", CheckStatus.FAILED, "FAIL: broken", scored=False, tier="quarantined"),
            ctx.check("p/s/g", CheckStatus.PASSED, "PASS", tier="smoke"),
        ]

    project = Settings(root=tmp_path, source=None, pricing={"test-model-a": PRICE})
    settings = dataclasses.replace(config(tmp_path, runtimes=(LABELLED,)), project=project)
    outcome = execute((build(), Step(Stage.SELFTEST, quarantined)), settings, Executor())
    published = publish(settings, outcome, signer=provided_signer())
    assert published.verdict.result.value == "PASSED"  # the quarantined failure never gates
    report = ((tmp_path / "out") / "report.html").read_text()
    row = report[report.index('data-check="plugins.usage_plugins_labelled/selftest/p/q/g"') :]
    assert "failed (quarantined: not gating)" in row[: row.index("</tr>")]
    assert 'id="failed-checks"' not in report
    link = "evidence/plugins.usage_plugins_labelled/selftest/cost.json"
    assert f'href="{link}"' in report and (tmp_path / "out" / link).is_file()
    assert "unknown (no run was priced)" in report  # no selftest trace: nothing to price, never 0
