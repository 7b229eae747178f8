"""A sweep (`wt run`): batches serial or concurrent inside the one runtime lifecycle (windtunnel._runner.lifecycle)."""

from __future__ import annotations

import dataclasses
import logging
import uuid
from collections.abc import Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from windtunnel._core.agent_runtime import AgentConfig, AgentRuntime
from windtunnel._core.tiers import DEFAULT_FLAKY_RETRIES
from windtunnel._packs.selection import Selected
from windtunnel._runner.batch import BatchSpec, effective_config, failed_batch, run_batch
from windtunnel._runner.execute import RunResult, now
from windtunnel._runner.lifecycle import open_runtime
from windtunnel._runner.output import RunWriter
from windtunnel._runtimes.resolve import RuntimeDescription
from windtunnel._trace.models import ErrorKind
from windtunnel.errors import RuntimeFault, UsageError, WindTunnelError

Scheduler = Literal["serial", "concurrent"]
log = logging.getLogger("windtunnel.runner")


@dataclass(frozen=True, slots=True, kw_only=True)
class SweepOptions:
    config: AgentConfig
    out_root: Path
    lock_dir: Path
    runs: int = 1
    scheduler: Scheduler = "serial"
    max_concurrency: int = 1
    flaky_retries: int = DEFAULT_FLAKY_RETRIES


@dataclass(slots=True, kw_only=True)
class SweepResult:
    """What a sweep came to; `problems` are failures of the sweep itself (hooks, a stopped sweep)."""

    sweep_id: str
    runtime: str
    started_at: str
    ended_at: str = ""
    results: list[RunResult] = field(default_factory=list)
    retried: list[RunResult] = field(default_factory=list)
    model_label: str | None = None
    problems: list[str] = field(default_factory=list)

    def problem(self, exc: BaseException, *, stopped: bool = False) -> None:
        text = str(exc) if isinstance(exc, WindTunnelError) else f"{type(exc).__name__}: {exc}"
        text = f"the sweep stopped: {text}" if stopped else text
        log.error("%s", text)
        self.problems.append(text)

    @property
    def passed(self) -> bool:
        """Every gating run passed and the sweep itself had no problem; no run at all is no pass.
        Quarantined runs are recorded and never change this (windtunnel._core.tiers)."""
        gating = [r for r in self.results if r.score.gating]
        return bool(self.results) and not self.problems and all(r.score.passed for r in gating)


def effective_concurrency(options: SweepOptions, plugin_limit: int | None) -> int:
    """Never above the plugin's max_concurrency (None = no limit); serial is always 1."""
    if options.max_concurrency < 1:
        raise UsageError(
            f"--max-concurrency is {options.max_concurrency}",
            hint="pass a positive number",
            field="--max-concurrency",
        )
    if options.scheduler == "serial":
        return 1
    if plugin_limit is None:
        return options.max_concurrency
    return min(options.max_concurrency, plugin_limit)


def _batches(
    runtime: AgentRuntime,
    runtime_name: str,
    selected: Sequence[Selected],
    options: SweepOptions,
    sweep_id: str,
    *,
    one_per_scenario: bool,
    model_label: str | None = None,
) -> list[BatchSpec]:
    """Group scenarios into batches sharing a pack and an effective config, in selection order."""
    batches: list[BatchSpec] = []
    for item in selected:
        config = effective_config(options.config, item.pack, item.scenario)
        last = batches[-1] if batches else None
        if not one_per_scenario and last and last.pack is item.pack and last.config == config:
            batches[-1] = dataclasses.replace(last, scenarios=(*last.scenarios, item.scenario))
        else:
            batches.append(
                BatchSpec(
                    runtime=runtime,
                    runtime_name=runtime_name,
                    pack=item.pack,
                    config=config,
                    scenarios=(item.scenario,),
                    runs=options.runs,
                    sweep_id=sweep_id,
                    model_label=model_label,
                    flaky_retries=options.flaky_retries,
                )
            )
    return batches


def run_sweep(
    description: RuntimeDescription, selected: Sequence[Selected], options: SweepOptions
) -> SweepResult:
    """Run every selected scenario. Each run is written as it ends, so an abort loses nothing recorded.

    Failures of the sweep itself never escape as tracebacks and never lose the report: a pre_run()
    that raises records every selected run as an ERROR (setup) with the cause; a post_run() or close()
    that raises, or a batch that stops the sweep (a failed wipe), is a sweep problem in
    `SweepResult.problems`. Either way the sweep does not pass.
    """
    sweep_id = uuid.uuid4().hex[:8]
    limit = effective_concurrency(options, description.max_concurrency)
    writer = RunWriter(options.out_root / sweep_id)
    result = SweepResult(sweep_id=sweep_id, runtime=description.name, started_at=now())
    scenarios = [item.scenario for item in selected]
    try:
        with open_runtime(description, lock_dir=options.lock_dir, on_problem=result.problem) as opened:
            result.model_label = label = opened.model_label()
            try:
                opened.pre_run(scenarios)
            except RuntimeFault as exc:
                result.problem(exc)
                for batch in _batches(
                    opened.runtime,
                    opened.name,
                    selected,
                    options,
                    sweep_id,
                    one_per_scenario=True,
                    model_label=label,
                ):
                    failed_batch(batch, ErrorKind.SETUP, exc, writer)
            else:  # batches are made after pre_run(), which may still set up the packs
                batches = _batches(
                    opened.runtime,
                    opened.name,
                    selected,
                    options,
                    sweep_id,
                    one_per_scenario=limit > 1,
                    model_label=label,
                )
                _run_batches(batches, writer, limit, result)
    finally:
        result.results = list(writer.results)
        result.retried = list(writer.retried)
        result.ended_at = now()
    return result


def _run_batches(batches: Sequence[BatchSpec], writer: RunWriter, limit: int, result: SweepResult) -> None:
    try:
        if limit == 1:
            for batch in batches:
                run_batch(batch, writer)
        else:
            _run_concurrently(batches, writer, limit)
    except Exception as exc:  # noqa: BLE001 - a fatal error (a failed wipe) stops the sweep; report it
        result.problem(exc, stopped=True)


def _run_concurrently(batches: Sequence[BatchSpec], writer: RunWriter, limit: int) -> None:
    with ThreadPoolExecutor(max_workers=limit, thread_name_prefix="wt-job") as pool:
        futures = [pool.submit(run_batch, batch, writer) for batch in batches]
        done, pending = wait(futures, return_when=FIRST_EXCEPTION)
        for future in pending:
            future.cancel()
        for future in done:
            error = future.exception()
            if error is not None:
                raise error
