"""The stage plan as code: a tuple of named steps per runtime, then harness checks, then publish.

`execute(plan, config, executor)` runs it. Each stage's evidence is in the bundle directory before the
next stage starts. A failing stage marks the runtime FAILED; later stages still run for diagnosis unless
`fail_fast`. A stage that crashes is recorded as a harness error of that stage (the run is then
HARNESS_INVALID) and the run goes on. The build stage opens each runtime in the one runtime lifecycle
(machine lock, build, pre_run; windtunnel._runner.lifecycle), which closes after its last stage (post_run,
close) on every way out. One executor runs it (windtunnel._pipeline.docker_executor, against any engine);
the Dagger module (pipeline/) runs this same `wt certify` against its engine service, with no plan of its own.
"""

from __future__ import annotations

import time
import traceback
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from windtunnel._bundle.models import CheckRecord, CheckScope, Stage
from windtunnel._conformance.suite import Suite
from windtunnel._core.vocabulary import CheckStatus
from windtunnel._files import disk_fault
from windtunnel._packs.loader import discover_packs
from windtunnel._packs.selection import Selected, Selection, select
from windtunnel._pipeline.config import CertifyConfig
from windtunnel._pipeline.context import CertifyOutcome, RuntimeRun, StageContext, print_nothing
from windtunnel._pipeline.events import EventSink, StageFinished, StageStarted, ignore
from windtunnel._pipeline.harness import harness_checks
from windtunnel._pipeline.outdir import prepare_out_dir
from windtunnel._pipeline.publish import write_started
from windtunnel._pipeline.stage_tapes import tapes_stage
from windtunnel._pipeline.stages import (
    build_stage,
    canary_stage,
    conformance_stage,
    reach_record,
    selftest_stage,
)
from windtunnel._runtimes.abilities import ImagePlugin

__all__ = ["PLAN", "CertifyOutcome", "Executor", "Step", "execute", "harness_checks"]


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

    def check_engine(self) -> None:
        """Raise EngineUnavailableError when the engine this run uses stopped answering."""
        ...


def execute(
    plan: Sequence[Step],
    config: CertifyConfig,
    executor: Executor,
    *,
    progress: Callable[[str], None] = print_nothing,
    events: EventSink = ignore,
) -> CertifyOutcome:
    """Run the plan for every runtime (reference control first), then the harness self-checks.

    What can be checked before a stage runs is checked first, and raises: the out directory (an earlier
    bundle there is removed first, so none survives a failed run), the suite, the packs, every runtime's
    plugin (resolved by the one resolver), every runtime's prebuilt image. From the first stage on only an
    interrupt stops the run.
    """
    for line in prepare_out_dir(config.out_dir):
        progress(f"removed {line}")
    outcome = CertifyOutcome(run_id=f"certify-{uuid.uuid4().hex[:10]}", started_at=time.time())
    suite = Suite.load(config.suite_dir, config.requirement_set)
    selected = select(discover_packs(config.pack_refs, base=config.root), Selection(tiers=config.tiers))
    runs = [RuntimeRun(name=d.name, description=d) for d in config.descriptions()]
    outcome.swept = executor.prepare(outcome.run_id)
    for line in outcome.swept:
        progress(f"removed a leftover of a dead run: {line}")
    ensure_images(runs)
    write_started(config, outcome)
    try:
        for run in runs:
            outcome.runs.append(run)
            _run_runtime(plan, config, executor, suite, selected, run, outcome.run_id, progress, events)
    except BaseException:  # a stop signal or the engine gone: whatever of this run is left goes now
        _leftovers(executor, outcome.run_id)
        raise
    outcome.harness = harness_checks(outcome, suite, _leftovers(executor, outcome.run_id))
    return outcome


def _run_runtime(
    plan: Sequence[Step],
    config: CertifyConfig,
    executor: Executor,
    suite: Suite,
    selected: list[Selected],
    run: RuntimeRun,
    run_id: str,
    progress: Callable[[str], None],
    events: EventSink = ignore,
) -> None:
    def context_of(stage: Stage) -> StageContext:
        return StageContext(
            config=config,
            suite=suite,
            selected=selected,
            run=run,
            stage=stage,
            run_id=run_id,
            progress=progress,
        )

    with (
        run.lifecycle
    ):  # opened by the build stage: post_run and close after the last stage, on every way out
        for step in plan:
            if run.checks and (step.stage is not Stage.BUILD and run.runtime is None):
                break  # nothing usable was built: the later stages have nothing to run against
            if config.fail_fast and run.failed:
                progress(f"{run.name}: --fail-fast, skipping {step.stage.value} and later stages")
                break
            progress(f"{run.name}: {step.stage.value}")
            context = context_of(step.stage)
            events(StageStarted(run.name, step.stage.value))
            records, seconds = _run_step(step, context)
            checks = tuple((r.id, r.status.value) for r in records)
            events(StageFinished(run.name, step.stage.value, seconds, checks))
            executor.check_engine()  # an engine that went away stops the run: nothing more can be measured
    # Closed now, so every fence's record was read: what the runtime tried to reach outside its peers.
    reach_record(context_of(Stage.PUBLISH))


def ensure_images(runs: Sequence[RuntimeRun]) -> None:
    """Before any stage: every prebuilt image a runtime of this run names (an ImagePlugin's) is in the
    engine (a usage error saying how to load it if not)."""
    wanted = {
        run.name: ref
        for run in runs
        if run.description is not None
        and isinstance(run.description.plugin, ImagePlugin)
        and (ref := run.description.plugin.prebuilt_ref()) is not None
    }
    if not wanted:
        return
    from windtunnel._engine.docker_env import docker_client
    from windtunnel._engine.prebuilt import ensure_image

    client = docker_client()
    for name, ref in wanted.items():
        ensure_image(client, name, ref)


def _run_step(step: Step, context: StageContext) -> tuple[list[CheckRecord], float]:
    """One stage; its records and its evidence are in the bundle before the next stage starts. Returns the
    records and the stage's seconds."""
    started = time.perf_counter()
    try:
        records = step.run(context)
    except Exception as exc:  # a crashed stage is Wind Tunnel's fault: recorded, the run goes on
        if disk_fault(exc):
            raise  # the disk under --out, not the stage: nothing more can be recorded, so the run stops
        context.progress(f"{context.run.name}: {step.stage.value} crashed: {type(exc).__name__}: {exc}")
        records = [_crashed(context, exc)]
    context.run.checks += records
    seconds = round(time.perf_counter() - started, 3)
    context.run.stage_seconds[step.stage.value] = seconds
    context.write_evidence(
        "stage",
        {
            "stage": step.stage.value,
            "seconds": seconds,
            "checks": [r.model_dump(mode="json") for r in records],
        },
    )
    return records, seconds


def _crashed(context: StageContext, exc: Exception) -> CheckRecord:
    """A harness-scope error: never counted against the runtime, but nothing is certified on a harness
    that crashed (DESIGN.md: a harness error makes the run HARNESS_INVALID)."""
    evidence = context.write_evidence(
        "harness-error",
        {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exception(exc)},
    )
    return context.check(
        "harness-error",
        CheckStatus.ERROR,
        f"the {context.stage.value} stage crashed ({type(exc).__name__}: {exc}): Wind Tunnel's fault, "
        "not the runtime's; the traceback is in the evidence",
        evidence=[evidence],
        scope=CheckScope.HARNESS,
    )


def _leftovers(executor: Executor, run_id: str) -> list[str]:
    try:
        return executor.leftovers(run_id)
    except Exception as exc:  # noqa: BLE001 - not knowing is no proof that nothing was left behind
        return [f"unknown: the executor could not list this run's containers ({type(exc).__name__}: {exc})"]
