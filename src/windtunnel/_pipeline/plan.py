"""The stage plan as code: a tuple of named steps per runtime, then harness checks, then publish.

`execute(plan, config, executor)` runs it. Each stage's evidence is in the bundle directory before the
next stage starts. A failing stage marks the runtime FAILED; later stages still run for diagnosis unless
`fail_fast`. Both executors (Docker here, Dagger in pipeline/) share this plan and everything but container
plumbing.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from windtunnel._bundle.models import CheckRecord, CheckScope, CheckStatus, Stage
from windtunnel._conformance.model import CheckStatus as KitStatus
from windtunnel._conformance.suite import Suite
from windtunnel._packs.loader import discover_packs
from windtunnel._packs.selection import Selected, Selection, select
from windtunnel._pipeline.config import REFERENCE, CertifyConfig
from windtunnel._pipeline.context import RuntimeRun, StageContext, print_nothing, safe
from windtunnel._pipeline.stage_tapes import tapes_stage
from windtunnel._pipeline.stages import build_stage, canary_stage, conformance_stage, selftest_stage


@dataclass(frozen=True, slots=True)
class Step:
    stage: Stage
    run: Callable[[StageContext], list[CheckRecord]]


PLAN: tuple[Step, ...] = (
    Step(Stage.BUILD, build_stage),
    Step(Stage.CONFORMANCE, conformance_stage),
    Step(Stage.CANARY, canary_stage),
    Step(Stage.SELFTEST, selftest_stage),
    Step(Stage.TAPES, tapes_stage),
)
"""Per runtime, in this order (DESIGN.md "The pipeline"); publish follows for the whole run."""


class Executor(Protocol):
    """Container plumbing around the plan: what is left behind, and cleaning it up."""

    def prepare(self, run_id: str) -> list[str]:
        """Remove leftovers of earlier runs that died; return what was removed."""
        ...

    def leftovers(self, run_id: str) -> list[str]:
        """Containers or networks of this run still present (after every runtime was closed)."""
        ...


@dataclass(slots=True)
class CertifyOutcome:
    run_id: str
    started_at: float
    runs: list[RuntimeRun] = field(default_factory=list)
    harness: list[CheckRecord] = field(default_factory=list)
    swept: list[str] = field(default_factory=list)

    @property
    def checks(self) -> list[CheckRecord]:
        return [check for run in self.runs for check in run.checks] + self.harness


def execute(
    plan: Sequence[Step],
    config: CertifyConfig,
    executor: Executor,
    *,
    progress: Callable[[str], None] = print_nothing,
) -> CertifyOutcome:
    """Run the plan for every runtime (reference control first), then the harness self-checks."""
    run_id = f"certify-{uuid.uuid4().hex[:10]}"
    outcome = CertifyOutcome(run_id=run_id, started_at=time.time())
    config.out_dir.mkdir(parents=True, exist_ok=True)
    suite = Suite.load(config.suite_dir, config.requirement_set)
    outcome.swept = executor.prepare(run_id)
    selected = select(discover_packs(config.pack_refs, base=config.root), Selection())
    for name in config.all_runtimes:
        run = RuntimeRun(name=name)
        outcome.runs.append(run)
        _run_runtime(plan, config, suite, selected, run, run_id, progress)
    outcome.harness = harness_checks(outcome, suite, executor.leftovers(run_id))
    return outcome


def _run_runtime(
    plan: Sequence[Step],
    config: CertifyConfig,
    suite: Suite,
    selected: list[Selected],
    run: RuntimeRun,
    run_id: str,
    progress: Callable[[str], None],
) -> None:
    try:
        for step in plan:
            if run.checks and (step.stage is not Stage.BUILD and run.runtime is None):
                break  # nothing was built: the later stages have nothing to run against
            if config.fail_fast and run.failed:
                progress(f"{run.name}: --fail-fast, skipping {step.stage.value} and later stages")
                break
            progress(f"{run.name}: {step.stage.value}")
            started = time.perf_counter()
            context = StageContext(
                config=config,
                suite=suite,
                selected=selected,
                run=run,
                stage=step.stage,
                run_id=run_id,
                progress=progress,
            )
            records = step.run(context)
            run.checks += records
            context.write_evidence(
                "stage",
                {
                    "stage": step.stage.value,
                    "seconds": time.perf_counter() - started,
                    "checks": [r.model_dump(mode="json") for r in records],
                },
            )
    finally:
        close = getattr(run.runtime, "close", None)
        if callable(close):
            close()
        post_run = getattr(getattr(run.loaded, "plugin", None), "post_run", None)
        if callable(post_run) and run.runtime is not None and not callable(close):
            post_run(run.runtime, [], run.name)


def harness_checks(outcome: CertifyOutcome, suite: Suite, leftovers: list[str]) -> list[CheckRecord]:
    """Wind Tunnel's own self-checks: the reference control passes, every poison is caught exactly, no
    container is left behind. Any of them failing makes the run HARNESS_INVALID (nothing is signed)."""
    records = [_reference_control(outcome)]
    records += [_poison_caught(run, suite) for run in outcome.runs if suite.is_poison(run.name)]
    records.append(
        CheckRecord(
            id="harness/publish/no-container-left-behind",
            runtime=REFERENCE,
            stage=Stage.PUBLISH,
            scope=CheckScope.HARNESS,
            status=CheckStatus.FAILED if leftovers else CheckStatus.PASSED,
            detail=("left behind: " + ", ".join(leftovers))
            if leftovers
            else "every container and network was removed",
        )
    )
    return records


def _reference_control(outcome: CertifyOutcome) -> CheckRecord:
    reference = next(run for run in outcome.runs if run.name == REFERENCE)
    bad = [
        c.id
        for c in reference.checks
        if c.scored and c.scope is CheckScope.RUNTIME and c.status is not CheckStatus.PASSED
    ]
    return CheckRecord(
        id="harness/selftest/reference-control",
        runtime=REFERENCE,
        stage=Stage.SELFTEST,
        scope=CheckScope.HARNESS,
        status=CheckStatus.FAILED if bad else CheckStatus.PASSED,
        detail=("the known-good reference runtime did not pass: " + ", ".join(bad))
        if bad
        else "the known-good reference runtime passed every scored check",
    )


def _poison_caught(run: RuntimeRun, suite: Suite) -> CheckRecord:
    """A poison in the certify set must fail exactly its named conformance check."""
    named = suite.poisons[run.name]
    by_check = {c.id.rsplit("/", 1)[-1]: c.status for c in run.checks if c.stage is Stage.CONFORMANCE}
    judged = {check: suite.judge(run.name, check, _kit(status)) for check, status in by_check.items()}
    wrong = [f"{check}: {j.message}" for check, j in judged.items() if not j.ok]
    return CheckRecord(
        id=f"harness/conformance/poison-caught/{safe(run.name)}",
        runtime=run.name,
        stage=Stage.CONFORMANCE,
        scope=CheckScope.HARNESS,
        status=CheckStatus.FAILED if wrong or not judged else CheckStatus.PASSED,
        detail="; ".join(wrong) if wrong else f"caught by exactly {named}",
    )


def _kit(status: CheckStatus) -> KitStatus:
    return {
        CheckStatus.PASSED: KitStatus.SUCCESS,
        CheckStatus.FAILED: KitStatus.FAILURE,
        CheckStatus.NOT_MEASURED: KitStatus.NOT_MEASURED,
        CheckStatus.ERROR: KitStatus.HARNESS_ERROR,
    }[status]
