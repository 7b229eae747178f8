"""`wt selftest` in the order docs/writing-a-runtime.md gives: build once, select, check the capability,
pre_run, then per case fresh MCP/probe wiring, provision_reference() once, the ordinary runner path,
teardown before the next. Lock, build, post_run and close are the one runtime lifecycle's
(windtunnel._runner.lifecycle).

Every executed case writes a trace and a score sidecar, also when it failed before its first turn.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from windtunnel._core.agent_runtime import AgentConfig, ReferenceCapableAgentRuntime
from windtunnel._core.reference import ReferenceCase
from windtunnel._packs.pack import Pack
from windtunnel._packs.selection import Selected
from windtunnel._runner.batch import effective_config, reference_context
from windtunnel._runner.execute import RunResult, failed_result, now
from windtunnel._runner.library import play_reference_case
from windtunnel._runner.lifecycle import OpenRuntime, open_runtime
from windtunnel._runner.output import RunWriter
from windtunnel._runtimes.resolve import RuntimeDescription
from windtunnel._scenario.model import Scenario
from windtunnel._score.models import Score
from windtunnel._selftest.verdicts import CaseVerdict
from windtunnel._trace.models import ErrorKind, Trace
from windtunnel.errors import HarnessError, ResetFailedError, SelectionError, WindTunnelError


@dataclass(slots=True, kw_only=True)
class SelftestReport:
    runtime: str
    run_id: str
    started_at: str
    out_dir: Path
    ended_at: str = ""
    cases: list[CaseVerdict] = field(default_factory=list)


@dataclass(frozen=True, slots=True, kw_only=True)
class SelftestOptions:
    out_root: Path
    lock_dir: Path
    config: AgentConfig = field(default_factory=AgentConfig)
    on_case: Callable[[CaseVerdict], None] | None = None


def reference_items(selected: Sequence[Selected]) -> list[tuple[Pack, Scenario, ReferenceCase]]:
    return [(item.pack, item.scenario, case) for item in selected for case in item.scenario.reference_cases]


def run_selftest(
    description: RuntimeDescription,
    selected: Sequence[Selected] | Callable[[], Sequence[Selected]],
    options: SelftestOptions,
) -> SelftestReport:
    """Run every selected reference case; each verdict is reported (and its trace written) as it is made.

    The order: build the runtime once, then select (a callable `selected` is called only after the
    build), check the capability, pre_run once, then every case. Once the build succeeded, post_run
    runs whatever happens next, so a plugin's containers never outlive a failed selection or pre_run.
    """
    run_id = uuid.uuid4().hex[:8]
    report = SelftestReport(
        runtime=description.name, run_id=run_id, started_at=now(), out_dir=options.out_root / run_id
    )
    with open_runtime(description, lock_dir=options.lock_dir) as opened:
        chosen = list(selected() if callable(selected) else selected)
        opened.scenarios = [
            item.scenario for item in chosen
        ]  # what post_run gets, also when pre_run never runs
        _run_items(opened, _items(chosen), report, options)
    report.ended_at = now()
    return report


def _items(selected: Sequence[Selected]) -> list[tuple[Pack, Scenario, ReferenceCase]]:
    items = reference_items(selected)
    if not items:
        raise SelectionError(
            "the selection holds no reference cases", hint="select scenarios that define reference_cases"
        )
    return items


def _run_items(
    opened: OpenRuntime,
    items: Sequence[tuple[Pack, Scenario, ReferenceCase]],
    report: SelftestReport,
    options: SelftestOptions,
) -> None:
    runtime = opened.runtime
    if not isinstance(runtime, ReferenceCapableAgentRuntime):
        for pack, scenario, case in items:
            _add(report, options, CaseVerdict.unsupported(pack.name, scenario, case, opened.name))
        return
    opened.pre_run(opened.scenarios)
    writer = RunWriter(report.out_dir)
    label = opened.model_label()
    for pack, scenario, case in items:
        verdict = run_case(
            runtime,
            opened.name,
            pack,
            scenario,
            case,
            options.config,
            writer,
            report.run_id,
            model_label=label,
        )
        _add(report, options, verdict)


def _add(report: SelftestReport, options: SelftestOptions, verdict: CaseVerdict) -> None:
    report.cases.append(verdict)
    if options.on_case is not None:
        options.on_case(verdict)


def run_case(
    runtime: ReferenceCapableAgentRuntime,
    runtime_name: str,
    pack: Pack,
    scenario: Scenario,
    case: ReferenceCase,
    config: AgentConfig,
    writer: RunWriter,
    run_id: str = "",
    *,
    model_label: str | None = None,
) -> CaseVerdict:
    """One reference case with fresh mocks and probe; harness faults become ERROR (setup), never a verdict."""
    started = time.perf_counter()
    try:
        result = play_reference_case(
            runtime,
            pack,
            scenario,
            case,
            config,
            runtime_name=runtime_name,
            out_dir=writer.root,
            sweep_id=run_id,
            model_label=model_label,
        )
    except Exception as exc:  # noqa: BLE001 - one broken case must not stop the others; it is an ERROR
        cause = exc if isinstance(exc, WindTunnelError) else HarnessError(f"{type(exc).__name__}: {exc}")
        context = reference_context(
            scenario,
            case,
            runtime_name=runtime_name,
            config=effective_config(config, pack, scenario),
            mcps=(),
            state_probe=None,
            sweep_id=run_id,
            model_label=model_label,
        )
        result = _recorded_failure(failed_result(context, ErrorKind.SETUP, cause), cause, writer)
        verdict = CaseVerdict.from_run(pack.name, case.kind, result, str(writer.trace_path(result)))
        verdict = verdict.model_copy(update={"harness_fault": isinstance(cause, HarnessError)})
    else:
        verdict = CaseVerdict.from_run(pack.name, case.kind, result, str(writer.trace_path(result)))
    return verdict.model_copy(update={"seconds": time.perf_counter() - started})


def _recorded_failure(failed: RunResult, cause: WindTunnelError, writer: RunWriter) -> RunResult:
    """Write the trace and sidecar of a case that failed outside a turn, like a turn's failure.

    A failed wipe is the one error raised after the runner wrote the run's own record: that record is
    kept, not replaced.
    """
    path = writer.trace_path(failed)
    if isinstance(cause, ResetFailedError) and path.is_file():
        score = path.with_name(path.name.removesuffix(".trace.json") + ".score.json")
        return RunResult(
            trace=Trace.model_validate_json(path.read_text(encoding="utf-8")),
            score=Score.model_validate_json(score.read_text(encoding="utf-8")),
        )
    writer.write(failed)
    return failed
