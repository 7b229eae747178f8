"""The runtime stages: build, conformance, canary, selftest. Each returns its check records and has
written its evidence into the bundle before it returns."""

from __future__ import annotations

import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from windtunnel._bundle.models import CheckRecord
from windtunnel._canary.canary import run_reset_canary
from windtunnel._conformance.kit import CHECKS, run_check
from windtunnel._conformance.subject import Subject
from windtunnel._core.abilities import ImageDigestsRuntime, ReachRecordingRuntime, StateProbingRuntime
from windtunnel._core.agent_runtime import AgentConfig, ReferenceCapableAgentRuntime
from windtunnel._core.vocabulary import CheckStatus, Verdict
from windtunnel._pipeline import control_cache
from windtunnel._pipeline.config import REFERENCE
from windtunnel._pipeline.context import StageContext
from windtunnel._pipeline.stage_prove import CaseKey, prove_checks
from windtunnel._runner.lifecycle import open_runtime, provisioned
from windtunnel._runner.output import RunWriter
from windtunnel._selftest.engine import run_case
from windtunnel._selftest.verdicts import CaseVerdict
from windtunnel.errors import HarnessError, RuntimeFault, WindTunnelError


def build_stage(ctx: StageContext) -> list[CheckRecord]:
    """Open the runtime in its one lifecycle (machine lock, build: images offline, network, gateway), call
    its plugin's pre_run(), then see it get ready (one provisioned handle, torn down). The lifecycle stays
    open through the later stages (see plan.execute).

    What fails here is the runtime's own (its image did not build, its container never got ready: FAILED,
    with the build log's tail or the container's last lines in the evidence, and the other runtimes go on)
    unless it is Wind Tunnel's own machinery (base image, windtunnel image, engine: a harness ERROR)."""
    started = time.perf_counter()
    run = ctx.run
    try:
        # execute() resolves every runtime up front; a step run alone does it here.
        if run.description is None:
            run.description = ctx.config.description_of(run.name)
        opened = run.lifecycle.enter_context(
            open_runtime(
                run.description,
                lock_dir=ctx.config.lock_dir,
                label=ctx.run_id,
                on_problem=run.record_problem,
                prestart=True,  # the stages provision handle after handle
            )
        )
    except HarnessError as exc:
        return [ctx.check("images", CheckStatus.ERROR, str(exc), seconds=time.perf_counter() - started)]
    except WindTunnelError as exc:
        return [_not_built(ctx, exc, time.perf_counter() - started)]
    description = run.description
    runtime = opened.runtime
    run.images = dict(runtime.image_digests) if isinstance(runtime, ImageDigestsRuntime) else {}
    run.reach = runtime if isinstance(runtime, ReachRecordingRuntime) else None
    run.source = description.source
    evidence = ctx.write_evidence(
        "build", {"plugin": description.origin, "images": run.images, "source": run.source}
    )
    detail = ", ".join(f"{name} {digest[:19]}" for name, digest in run.images.items()) or "built (no images)"
    records = [
        ctx.check(
            "images", CheckStatus.PASSED, detail, evidence=[evidence], seconds=time.perf_counter() - started
        )
    ]
    try:
        opened.pre_run([item.scenario for item in ctx.selected])
    except RuntimeFault as exc:  # nothing may run on a runtime whose setup failed; post_run still comes
        return [*records, ctx.check("pre-run", CheckStatus.FAILED, str(exc))]
    ready = _ready(ctx, runtime)
    if ready.status is not CheckStatus.PASSED:
        return [*records, ready]  # nothing can run on it: the later stages are skipped
    run.runtime = runtime
    run.subject = Subject(
        name=run.name,
        runtime=runtime,
        supported=description.supported,
        unsupported=description.unsupported,
        manifest=description.manifest_shown,
        wire=description.wire,
        faults=description.fault_policy,
        mcp=description.mcp_client,
    )
    return [*records, ready]


def _not_built(ctx: StageContext, exc: WindTunnelError, seconds: float) -> CheckRecord:
    """The runtime's own build failed: FAILED, its first line as the detail, the log's tail as evidence."""
    first = exc.message.splitlines()[0] if exc.message else type(exc).__name__
    tail = [str(line) for line in getattr(exc, "log_tail", None) or exc.message.splitlines()[1:]]
    evidence = ctx.write_evidence(
        "build", {"error": f"{type(exc).__name__}: {first}", "hint": exc.hint, "log_tail": tail}
    )
    where = "; the build log's last lines are in the evidence" if tail else ""
    return ctx.check("images", CheckStatus.FAILED, f"{first}{where}", evidence=[evidence], seconds=seconds)


def _ready(ctx: StageContext, runtime: Any) -> CheckRecord:
    """One handle provisioned with the default config and torn down: a runtime that never gets ready fails
    here, once, instead of in every later check."""
    started = time.perf_counter()
    try:
        with provisioned(runtime, AgentConfig(), runtime_name=ctx.run.name):
            pass
    except HarnessError as exc:
        return ctx.check("ready", CheckStatus.ERROR, str(exc), seconds=time.perf_counter() - started)
    except Exception as exc:  # noqa: BLE001 - provision() and teardown() are the runtime's own code
        first, *rest = str(exc).splitlines() or [""]
        evidence = ctx.write_evidence("ready", {"error": f"{type(exc).__name__}: {first}", "details": rest})
        return ctx.check(
            "ready",
            CheckStatus.FAILED,
            f"it never got ready: {first}",
            evidence=[evidence],
            seconds=time.perf_counter() - started,
        )
    return ctx.check(
        "ready", CheckStatus.PASSED, "provisioned and torn down", seconds=time.perf_counter() - started
    )


REACH_LINES_SHOWN = 12


def reach_record(ctx: StageContext) -> None:
    """After the runtime is closed (every fence's record read): what its containers tried to reach outside
    their peers (names its resolver refused, connections its fence blocked), as evidence and an unscored
    INFO check listing it. `egress_closed` is the check that nothing got through; this is the record."""
    if ctx.run.reach is None:
        return
    attempts = ctx.run.reach.reach_attempts()
    lines = [attempt.line() for attempt in attempts]
    evidence = ctx.write_evidence(
        "reach",
        {
            "attempts": [asdict(attempt) for attempt in attempts],
            "lines": lines,
            "counted": "lookups: queries the fence's resolver refused (NXDOMAIN, never forwarded); connections: "
            "packets the fence rejected (one per TCP connection attempt, one per UDP datagram). An address "
            "with no route at all fails in the kernel before any packet exists, so only its name shows.",
        },
    )
    shown = "; ".join(lines[:REACH_LINES_SHOWN]) or "tried to reach nothing outside its peers"
    if len(lines) > REACH_LINES_SHOWN:
        shown += f"; and {len(lines) - REACH_LINES_SHOWN} more (see the evidence)"
    ctx.run.checks.append(ctx.check("reach", CheckStatus.INFO, shown, evidence=[evidence], scored=False))


def conformance_stage(ctx: StageContext) -> list[CheckRecord]:
    """Every check of the kit; the requirement set says which are scored."""
    assert ctx.run.subject is not None
    records = []
    for check in CHECKS:
        ctx.progress(f"{ctx.run.name}: conformance {check.id}")
        result = run_check(check, ctx.run.subject)
        evidence = ctx.write_evidence(check.id, result.model_dump(mode="json"))
        records.append(
            ctx.check(
                check.id,
                result.status,
                f"{result.title}: {result.detail} [{result.clause}]",
                evidence=[evidence],
                # INFO (an optional part absent) is recorded, never scored.
                scored=check.id in ctx.suite.requirements.scored and result.status is not CheckStatus.INFO,
                seconds=result.seconds,
            )
        )
    return records


def canary_stage(ctx: StageContext) -> list[CheckRecord]:
    """The reset canary in recall mode, and in hermetic mode when the runtime exposes its state."""
    runtime = ctx.run.runtime
    records = []
    modes: list[tuple[str, dict[str, object]]] = [("recall", {"probe_recall": True})]
    probe = runtime.state_probe() if isinstance(runtime, StateProbingRuntime) else None
    if probe is not None:
        modes.append(("hermetic", {"probe_recall": False, "state_probe": probe}))
    for mode, options in modes:
        started = time.perf_counter()
        try:
            result = run_reset_canary(runtime, AgentConfig(), **options)  # type: ignore[arg-type]
        except HarnessError as exc:
            records.append(ctx.check(mode, CheckStatus.ERROR, str(exc)))
            continue
        except WindTunnelError as exc:
            records.append(ctx.check(mode, CheckStatus.FAILED, f"the canary run failed: {exc}"))
            continue
        evidence = ctx.write_evidence(
            mode,
            {
                "leaked": result.leaked,
                "detail": result.detail,
                "nonce": result.nonce,
                "evidence": result.evidence,
            },
        )
        status = CheckStatus.FAILED if result.leaked else CheckStatus.PASSED
        records.append(
            ctx.check(mode, status, result.detail, evidence=[evidence], seconds=time.perf_counter() - started)
        )
    if len(modes) == 1:
        records.append(
            ctx.check(
                "hermetic", CheckStatus.NOT_MEASURED, "the runtime exposes no state probe", scored=False
            )
        )
    return records


_VERDICT_STATUS = {
    Verdict.PASS: CheckStatus.PASSED,
    Verdict.GOLDEN_FAILED: CheckStatus.FAILED,
    Verdict.POISON_PASSED: CheckStatus.FAILED,
    Verdict.UNSUPPORTED: CheckStatus.NOT_MEASURED,
}


def selftest_stage(ctx: StageContext) -> list[CheckRecord]:
    """Every reference case of the selected packs through the live stack; on the reference runtime, then
    every selected scenario's proof (`wt prove`) as a harness check. The reference control's result is
    reused while its inputs are unchanged (windtunnel._pipeline.control_cache), and recorded as cached."""
    cache_dir = ctx.config.control_cache
    if ctx.run.name != REFERENCE or cache_dir is None or ctx.suite.is_poison(ctx.run.name):
        return _played_selftest(ctx)
    key = control_cache.control_key(
        images=ctx.run.images,
        selected=ctx.selected,
        suite_dir=ctx.config.suite_dir,
        requirement_set=ctx.config.requirement_set,
        tiers=ctx.config.tiers,
        certification=ctx.config.certification,
    )
    if key is None:
        return _played_selftest(ctx)
    cached = control_cache.load(cache_dir, key)
    if cached is not None:
        ctx.progress(
            f"{ctx.run.name}: selftest reused from run {cached.run_id} ({cached.ran_at}), key {key[:12]}"
        )
        note = {"cached": True, "key": key, "run_id": cached.run_id, "ran_at": cached.ran_at}
        return control_cache.replayed(cached, ctx.write_evidence("cached-control", note))
    records = _played_selftest(ctx)
    if control_cache.keepable(records):
        control_cache.store(cache_dir, key, ctx.run_id, ctx.config.clock(), records)
    return records


def _played_selftest(ctx: StageContext) -> list[CheckRecord]:
    """The selftest stage played through the live stack, as selftest_stage describes it."""
    runtime = ctx.run.runtime
    if not isinstance(runtime, ReferenceCapableAgentRuntime):
        return [
            ctx.check(
                "reference-cases",
                CheckStatus.NOT_MEASURED,
                f"{ctx.run.name} has no provision_reference(): reference cases cannot run",
            )
        ]
    writer = RunWriter(ctx.traces_dir())
    records = []
    played: dict[CaseKey, CaseVerdict] = {}
    label = ctx.run.model_label  # from the runtime's description, asked once
    for item in ctx.selected:
        for case in item.scenario.reference_cases:
            ctx.progress(f"{ctx.run.name}: selftest {item.pack.name}/{item.scenario.name}[{case.name}]")
            verdict = run_case(
                runtime,
                ctx.run.name,
                item.pack,
                item.scenario,
                case,
                AgentConfig(),
                writer,
                ctx.run_id,
                model_label=label,
            )
            played[(item.pack.name, item.scenario.name, case.name)] = verdict
            status = _VERDICT_STATUS.get(verdict.verdict)
            if status is None:  # ERROR: the runtime's fault unless Wind Tunnel's own setup failed
                status = CheckStatus.ERROR if verdict.harness_fault else CheckStatus.FAILED
            paths = [ctx.relative(Path(verdict.trace))] if verdict.trace else []
            evidence = ctx.write_evidence(
                f"{item.pack.name}.{item.scenario.name}.{case.name}",
                # the trace as the bundle holds it: a path relative to the bundle, never this machine's
                verdict.model_copy(update={"trace": paths[0] if paths else None}).model_dump(mode="json"),
            )
            records.append(
                ctx.check(
                    f"{item.pack.name}/{item.scenario.name}/{case.name}",
                    status,
                    f"{verdict.verdict.value}: {verdict.detail}",
                    evidence=[evidence, *paths],
                    seconds=verdict.seconds,
                    scored=verdict.gating,  # a quarantined case is recorded, never gating
                    tier=verdict.tier,
                )
            )
    if ctx.run.name == REFERENCE:  # the suite is proved once per run, on the known-good control's verdicts
        records += prove_checks(ctx, played)
    return records
