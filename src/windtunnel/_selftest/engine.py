"""`wt selftest` in seed 000's order: build once, select, check the capability, pre_run, then per case
fresh MCP/probe wiring, provision_reference() once, the ordinary runner path, teardown before the next."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from windtunnel._packs.pack import Pack
from windtunnel._packs.selection import Selected
from windtunnel._runner.batch import effective_config, make_probe, started_mcps
from windtunnel._runner.execute import now
from windtunnel._runner.library import run_reference_case
from windtunnel._runner.output import RunWriter
from windtunnel._runner.sweep import sweep_lock
from windtunnel._runtimes.registry import LoadedPlugin, build_runtime
from windtunnel._scenario.model import ReferenceCase, Scenario
from windtunnel._selftest.verdicts import CaseVerdict
from windtunnel._trace.models import ErrorKind
from windtunnel.errors import HarnessError, WindTunnelError
from windtunnel.spi.agent_runtime import AgentConfig, AgentRuntime, ReferenceCapableAgentRuntime


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
    loaded: LoadedPlugin, selected: Sequence[Selected], options: SelftestOptions
) -> SelftestReport:
    """Run every selected reference case; each verdict is reported (and its trace written) as it is made."""
    run_id = uuid.uuid4().hex[:8]
    report = SelftestReport(
        runtime=loaded.name, run_id=run_id, started_at=now(), out_dir=options.out_root / run_id
    )
    items = reference_items(selected)
    with sweep_lock(loaded, options.lock_dir):
        runtime = build_runtime(loaded)
        if not isinstance(runtime, ReferenceCapableAgentRuntime):
            for pack, scenario, case in items:
                _add(
                    report,
                    options,
                    CaseVerdict.unsupported(pack.name, scenario.name, case.name, case.kind, loaded.name),
                )
            report.ended_at = now()
            return report
        scenarios = [item.scenario for item in selected]
        _hook(loaded, "pre_run", runtime, scenarios)
        try:
            writer = RunWriter(report.out_dir)
            for pack, scenario, case in items:
                _add(
                    report,
                    options,
                    run_case(runtime, loaded.name, pack, scenario, case, options.config, writer, run_id),
                )
        finally:
            _hook(loaded, "post_run", runtime, scenarios)
    report.ended_at = now()
    return report


def _add(report: SelftestReport, options: SelftestOptions, verdict: CaseVerdict) -> None:
    report.cases.append(verdict)
    if options.on_case is not None:
        options.on_case(verdict)


def _hook(loaded: LoadedPlugin, name: str, runtime: AgentRuntime, scenarios: list[Scenario]) -> None:
    hook = getattr(loaded.plugin, name, None)
    if callable(hook):
        hook(runtime, scenarios, loaded.name)


def run_case(
    runtime: ReferenceCapableAgentRuntime,
    runtime_name: str,
    pack: Pack,
    scenario: Scenario,
    case: ReferenceCase,
    config: AgentConfig,
    writer: RunWriter,
    run_id: str = "",
) -> CaseVerdict:
    """One reference case with fresh mocks and probe; harness faults become ERROR (setup), never a verdict."""
    started = time.perf_counter()
    try:
        with started_mcps(runtime, pack.plans()) as mcps:
            probe = make_probe(pack, mcps)
            result = run_reference_case(
                runtime,
                scenario,
                case,
                effective_config(config, pack, scenario),
                mcps=mcps,
                state_probe=probe,
                runtime_name=runtime_name,
                sweep_id=run_id,
                out_dir=writer.root,
            )
    except Exception as exc:  # noqa: BLE001 - one broken case must not stop the others; it is an ERROR
        cause = exc if isinstance(exc, WindTunnelError) else HarnessError(f"{type(exc).__name__}: {exc}")
        verdict = CaseVerdict.error(
            pack.name, scenario.name, case.name, case.kind, ErrorKind.SETUP, str(cause)
        ).model_copy(update={"harness_fault": isinstance(cause, HarnessError)})
    else:
        verdict = CaseVerdict.from_run(pack.name, case.kind, result, str(writer.trace_path(result)))
    return verdict.model_copy(update={"seconds": time.perf_counter() - started})
