"""The stage plan (windtunnel._pipeline.plan.execute) with small real steps: stage order and evidence,
later stages after a failure, --fail-fast, crashed stages, closing, swept leftovers, the out directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.unit.pipeline_steps import OTHER, Closable, Executor, build, config, crashing, fails_for, step
from windtunnel._bundle import ChecksFile, KeyOrigin, Verdict
from windtunnel._bundle.models import CheckRecord, CheckScope, Stage
from windtunnel._core.vocabulary import CertificationResult, CheckStatus
from windtunnel._pipeline.context import StageContext
from windtunnel._pipeline.events import Event, StageFinished
from windtunnel._pipeline.outdir import prepare_out_dir
from windtunnel._pipeline.plan import PLAN, Step, execute
from windtunnel._pipeline.publish import publish
from windtunnel.errors import EngineUnavailableError, UsageError


def verdict_of(checks: list[CheckRecord]) -> Verdict:
    return Verdict.from_checks(ChecksFile(requirement_set="1", checks=checks), signing_key=KeyOrigin.DEV)


def ids(checks: list[CheckRecord]) -> list[str]:
    return [c.id for c in checks]


def test_the_plan_is_the_designs_stage_order() -> None:
    assert [s.stage for s in PLAN] == [
        Stage.BUILD,
        Stage.CONFORMANCE,
        Stage.CANARY,
        Stage.SELFTEST,
        Stage.TAPES,
    ]


def test_every_runtime_runs_every_stage_in_order_reference_first(tmp_path: Path) -> None:
    lines: list[str] = []
    plan = (build(), step(Stage.CONFORMANCE), step(Stage.CANARY))
    outcome = execute(plan, config(tmp_path), Executor(), progress=lines.append)
    assert [run.name for run in outcome.runs] == ["reference", OTHER]
    assert ids(outcome.runs[1].checks) == [
        f"{OTHER}/build/images",
        f"{OTHER}/conformance/check",
        f"{OTHER}/canary/check",
    ]
    assert lines.index("reference: build") < lines.index("reference: canary") < lines.index(f"{OTHER}: build")
    assert verdict_of(outcome.checks).result is CertificationResult.PASSED


def test_each_stage_reports_its_start_and_its_end_with_its_time_and_checks(tmp_path: Path) -> None:
    events: list[Event] = []
    plan = (build(), step(Stage.CONFORMANCE, fails_for(OTHER)))
    execute(plan, config(tmp_path), Executor(), events=events.append)
    assert [(type(e).__name__, e.runtime, e.stage) for e in events] == [
        (kind, runtime, stage)
        for runtime in ("reference", OTHER)
        for stage in ("build", "conformance")
        for kind in ("StageStarted", "StageFinished")
    ]
    finished = [e for e in events if isinstance(e, StageFinished)]
    assert all(e.seconds >= 0 for e in finished)
    assert finished[-1].checks == ((f"{OTHER}/conformance/check", "failed"),)


def test_later_stages_still_run_after_a_failing_stage(tmp_path: Path) -> None:
    plan = (build(), step(Stage.CONFORMANCE, fails_for(OTHER)), step(Stage.CANARY), step(Stage.SELFTEST))
    outcome = execute(plan, config(tmp_path), Executor())
    other = outcome.runs[1]
    assert [c.stage for c in other.checks] == [Stage.BUILD, Stage.CONFORMANCE, Stage.CANARY, Stage.SELFTEST]
    assert other.failed
    verdict = verdict_of(outcome.checks)
    assert verdict.result is CertificationResult.FAILED
    assert next(r for r in verdict.runtimes if r.name == OTHER).failed_checks == [
        f"{OTHER}/conformance/check"
    ]


def test_fail_fast_stops_a_runtimes_stages_at_its_first_failing_stage(tmp_path: Path) -> None:
    lines: list[str] = []
    plan = (build(), step(Stage.CONFORMANCE, fails_for(OTHER)), step(Stage.CANARY), step(Stage.SELFTEST))
    outcome = execute(plan, config(tmp_path, fail_fast=True), Executor(), progress=lines.append)
    reference, other = outcome.runs
    assert [c.stage for c in other.checks] == [Stage.BUILD, Stage.CONFORMANCE]
    assert [c.stage for c in reference.checks] == [
        Stage.BUILD,
        Stage.CONFORMANCE,
        Stage.CANARY,
        Stage.SELFTEST,
    ]
    assert f"{OTHER}: --fail-fast, skipping canary and later stages" in lines
    assert not (tmp_path / "out" / "evidence" / OTHER / "canary").exists()


def test_each_stage_has_written_its_evidence_before_the_next_starts(tmp_path: Path) -> None:
    def reads_previous(ctx: StageContext) -> list[CheckRecord]:
        path = ctx.bundle / "evidence" / ctx.run.name / "conformance" / "stage.json"
        seen = json.loads(path.read_text()) if path.is_file() else None
        ok = seen is not None and [c["id"] for c in seen["checks"]] == [f"{ctx.run.name}/conformance/check"]
        return [ctx.check("saw-conformance", CheckStatus.PASSED if ok else CheckStatus.FAILED, str(seen))]

    plan = (build(), step(Stage.CONFORMANCE), Step(Stage.CANARY, reads_previous))
    outcome = execute(plan, config(tmp_path), Executor())
    seen = [c for run in outcome.runs for c in run.checks if c.id.endswith("saw-conformance")]
    assert len(seen) == 2 and all(c.status is CheckStatus.PASSED for c in seen), [c.detail for c in seen]
    stage_file = json.loads((tmp_path / "out" / "evidence" / OTHER / "canary" / "stage.json").read_text())
    assert stage_file["stage"] == "canary" and stage_file["seconds"] >= 0


def test_a_crashing_stage_is_a_harness_error_and_the_run_goes_on(tmp_path: Path) -> None:
    built: dict[str, Closable] = {}
    lines: list[str] = []
    plan = (build(built), crashing(Stage.CONFORMANCE), step(Stage.CANARY))
    outcome = execute(plan, config(tmp_path), Executor(), progress=lines.append)
    other = outcome.runs[1]
    crash = next(c for c in other.checks if c.id == f"{OTHER}/conformance/harness-error")
    assert crash.status is CheckStatus.ERROR and crash.scope is CheckScope.HARNESS
    assert "RuntimeError: bug in the conformance stage" in crash.detail
    evidence = json.loads((tmp_path / "out" / crash.evidence[0]).read_text())
    assert "RuntimeError" in "".join(evidence["traceback"])
    assert f"{OTHER}/canary/check" in ids(other.checks)  # the later stage still ran
    assert not other.failed and built[OTHER].closed == 1  # not the runtime's failure; closed anyway
    assert any("conformance crashed: RuntimeError" in line for line in lines)
    verdict = verdict_of(outcome.checks)
    assert verdict.result is CertificationResult.HARNESS_INVALID
    assert f"{OTHER}/conformance/harness-error" in verdict.harness_failures
    assert next(r for r in verdict.runtimes if r.name == OTHER).result is CertificationResult.PASSED


def test_a_crashed_build_skips_the_stages_that_need_a_runtime(tmp_path: Path) -> None:
    outcome = execute((crashing(Stage.BUILD), step(Stage.CONFORMANCE)), config(tmp_path), Executor())
    assert ids(outcome.runs[1].checks) == [f"{OTHER}/build/harness-error"]


def test_a_runtime_that_cannot_be_closed_is_a_harness_error(tmp_path: Path) -> None:
    outcome = execute((build(raises=True),), config(tmp_path), Executor())
    closed = outcome.runs[1].checks[-1]
    assert closed.id == f"harness/publish/closed/{OTHER}" and closed.status is CheckStatus.ERROR
    assert "OSError: close failed" in closed.detail


def test_swept_leftovers_are_shown_and_recorded_in_run_json(tmp_path: Path) -> None:
    lines: list[str] = []
    swept = ["container wt-x-gateway (3f2a1b) run=wt-x (owner pid 4242 gone)"]
    outcome = execute((build(),), config(tmp_path), Executor(swept=swept), progress=lines.append)
    assert outcome.swept == swept
    assert f"removed a leftover of a dead run: {swept[0]}" in lines
    started = json.loads((tmp_path / "out" / "run.json").read_text())  # written before the first stage
    assert started["swept"] == swept and started["run_id"] == outcome.run_id
    publish(config(tmp_path), outcome)
    assert json.loads((tmp_path / "out" / "run.json").read_text())["swept"] == swept


def test_a_container_left_behind_fails_its_harness_check(tmp_path: Path) -> None:
    outcome = execute((build(),), config(tmp_path), Executor(left=["container wt-x-runtime (ab12) run=wt-x"]))
    left = next(c for c in outcome.harness if c.id == "harness/publish/no-container-left-behind")
    assert left.status is CheckStatus.FAILED and "wt-x-runtime" in left.detail
    assert verdict_of(outcome.checks).result is CertificationResult.HARNESS_INVALID


def test_an_executor_that_cannot_list_leftovers_proves_nothing(tmp_path: Path) -> None:
    outcome = execute((build(),), config(tmp_path), Executor(fails=True))
    left = next(c for c in outcome.harness if c.id == "harness/publish/no-container-left-behind")
    assert left.status is CheckStatus.FAILED and "ConnectionError: engine went away" in left.detail


def test_a_rerun_replaces_the_earlier_bundle_and_its_archive(tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = execute((build(), step(Stage.CONFORMANCE)), config(tmp_path), Executor())
    sealed = publish(config(tmp_path), first)
    assert sealed.verdict.result is CertificationResult.PASSED and sealed.seal is not None
    archive = sealed.seal.archive
    assert (out / "attestations").is_dir() and archive.is_file()
    lines: list[str] = []
    second = execute(
        (build(), crashing(Stage.CONFORMANCE)), config(tmp_path), Executor(), progress=lines.append
    )
    published = publish(config(tmp_path), second)
    assert published.verdict.result is CertificationResult.HARNESS_INVALID and published.seal is None
    assert not (out / "attestations").exists() and not (out / "MANIFEST.sha256").exists()
    assert not archive.exists()
    assert json.loads((out / "verdict.json").read_text())["result"] == "HARNESS_INVALID"
    assert f"removed the earlier bundle in {out}" in lines and f"removed {archive}" in lines


def test_a_file_added_to_a_sealed_bundle_is_refused_and_nothing_is_removed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    sealed = publish(config(tmp_path), execute((build(),), config(tmp_path), Executor()))
    assert sealed.seal is not None
    added = out / "evidence" / "notes.md"
    added.write_text("mine")
    before = sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
    with pytest.raises(UsageError, match=r"but also evidence/notes\.md, which that bundle does not list"):
        execute((build(),), config(tmp_path), Executor())
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == before
    assert added.read_text() == "mine" and sealed.seal.archive.is_file()


def test_a_non_empty_directory_that_is_no_bundle_is_refused_untouched(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    (out / "run.json").write_text("{}")  # a run.json alone is no bundle: only the marker says so
    with pytest.raises(UsageError, match="is not empty and holds no Wind Tunnel bundle") as caught:
        execute((build(),), config(tmp_path), Executor())
    assert "how to fix" in str(caught.value)
    assert (out / "notes.txt").read_text() == "mine" and sorted(p.name for p in out.iterdir()) == [
        "notes.txt",
        "run.json",
    ]


def test_a_killed_runs_partial_bundle_is_replaced(tmp_path: Path) -> None:
    out = tmp_path / "out"
    prepare_out_dir(out)  # what a run does first; it was then killed after writing these
    stale = out / "evidence" / OTHER / "conformance" / "killed.json"
    stale.parent.mkdir(parents=True)
    stale.write_text("{}")
    (out / "run.json").write_text("{}")
    execute((build(),), config(tmp_path), Executor())
    assert json.loads((out / "run.json").read_text())["run_id"].startswith("certify-")
    assert not stale.exists() and not stale.parent.exists()


def test_an_unknown_runtime_stops_the_run_before_any_stage(tmp_path: Path) -> None:
    from windtunnel.errors import UnknownRuntimeError

    with pytest.raises(UnknownRuntimeError):
        execute((build(),), config(tmp_path, runtimes=("no-such-runtime",)), Executor())
    assert not (tmp_path / "out" / "evidence").exists()


def test_an_engine_gone_mid_run_stops_the_run_keeping_the_evidence_and_closing_the_runtime(
    tmp_path: Path,
) -> None:
    built: dict[str, Closable] = {}
    executor = Executor(engine_gone_after=1)  # answers after the build, gone after conformance
    with pytest.raises(EngineUnavailableError):
        execute((build(built), step(Stage.CONFORMANCE), step(Stage.CANARY)), config(tmp_path), executor)
    out = tmp_path / "out"
    assert (out / "evidence" / "reference" / "conformance" / "check.json").is_file()  # recorded stays
    assert not (out / "evidence" / "reference" / "canary").exists()  # nothing ran after the engine went
    assert built["reference"].closed == 1 and OTHER not in built
    assert (out / "run.json").is_file() and not (out / "MANIFEST.sha256").exists()


def test_an_interrupt_mid_run_closes_the_runtime_and_removes_what_the_run_left(tmp_path: Path) -> None:
    built: dict[str, Closable] = {}
    removed: list[str] = []

    class Leaving(Executor):
        def leftovers(self, run_id: str) -> list[str]:
            removed.append(run_id)
            return []

    def interrupted(ctx: StageContext) -> list[CheckRecord]:
        raise KeyboardInterrupt("stopped by signal SIGTERM")

    with pytest.raises(KeyboardInterrupt):
        execute((build(built), Step(Stage.CONFORMANCE, interrupted)), config(tmp_path), Leaving())
    assert built["reference"].closed == 1 and len(removed) == 1
    assert (tmp_path / "out" / "evidence" / "reference" / "build" / "build.json").is_file()


def test_each_stage_time_is_kept_in_run_json_and_the_summary(tmp_path: Path) -> None:
    from windtunnel._pipeline.summary import summary_table

    plan = (build(), step(Stage.CONFORMANCE), step(Stage.CANARY))
    cfg = config(tmp_path)
    outcome = execute(plan, cfg, Executor())
    assert list(outcome.runs[1].stage_seconds) == ["build", "conformance", "canary"]
    published = publish(cfg, outcome)
    run_json = json.loads((cfg.out_dir / "run.json").read_text())
    assert [list(r["stage_seconds"]) for r in run_json["runtimes"]] == [
        ["build", "conformance", "canary"]
    ] * 2
    table = summary_table(outcome, published.verdict)
    assert table.count("    time: build ") == 2 and " s, conformance " in table
