"""The table `wt certify` prints at the end (windtunnel._pipeline.summary)."""

from __future__ import annotations

from pathlib import Path

from tests.unit.pipeline_steps import OTHER, Executor, build, config, crashing, fails_for, step
from windtunnel._bundle import ChecksFile, KeyOrigin, Verdict
from windtunnel._bundle.models import Stage
from windtunnel._pipeline.plan import Step, execute
from windtunnel._pipeline.summary import summary_table


def table_for(tmp_path: Path, *plan: Step) -> list[str]:
    outcome = execute(plan, config(tmp_path), Executor())
    verdict = Verdict.from_checks(
        ChecksFile(requirement_set="1", checks=outcome.checks), signing_key=KeyOrigin.DEV
    )
    return summary_table(outcome, verdict).splitlines()


def test_one_row_per_runtime_with_passed_over_scored_per_stage(tmp_path: Path) -> None:
    lines = table_for(tmp_path, build(), step(Stage.CONFORMANCE, fails_for(OTHER)), step(Stage.CANARY))
    assert lines[0].split() == ["runtime", "build", "conformance", "canary", "selftest", "tapes", "result"]
    reference = next(line for line in lines if line.startswith("reference "))
    assert reference.split() == ["reference", "1/1", "1/1", "1/1", "-", "-", "PASSED"]
    other = next(line for line in lines if line.startswith(f"{OTHER} "))
    assert other.split() == [OTHER, "1/1", "0/1", "1/1", "-", "-", "FAILED"]
    assert f"    failed       {OTHER}/conformance/check: check failed" in lines
    assert lines[-1] == "verdict: FAILED"


def test_harness_checks_and_crashes_are_listed(tmp_path: Path) -> None:
    lines = table_for(tmp_path, build(), crashing(Stage.CONFORMANCE))
    assert any(
        line.startswith(f"    error        {OTHER}/conformance/harness-error: the conformance stage crashed")
        for line in lines
    )
    assert (
        "harness: passed   harness/selftest/reference-control: the known-good reference runtime passed every scored check"
        in lines
    )
    assert lines[-1] == "verdict: HARNESS_INVALID"
