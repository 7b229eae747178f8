"""A sweep (`wt run`): lock, build, pre_run, batches serial or concurrent, post_run even on abort."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from windtunnel._packs.selection import Selected
from windtunnel._runner.batch import BatchSpec, effective_config, run_batch
from windtunnel._runner.execute import RunResult, now
from windtunnel._runner.lock import machine_lock
from windtunnel._runner.output import RunWriter
from windtunnel._runtimes.registry import LoadedPlugin, build_runtime
from windtunnel.errors import UsageError
from windtunnel.spi.agent_runtime import AgentConfig, AgentRuntime

Scheduler = Literal["serial", "concurrent"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SweepOptions:
    config: AgentConfig
    out_root: Path
    lock_dir: Path
    runs: int = 1
    scheduler: Scheduler = "serial"
    max_concurrency: int = 1


@dataclass(slots=True, kw_only=True)
class SweepResult:
    sweep_id: str
    runtime: str
    started_at: str
    ended_at: str = ""
    results: list[RunResult] = field(default_factory=list)
    concurrency: int = 1
    model_label: str | None = None


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


@contextlib.contextmanager
def sweep_lock(loaded: LoadedPlugin, lock_dir: Path) -> Iterator[None]:
    """A finite max_concurrency holds the machine-wide lock on lock_key for the whole sweep."""
    if loaded.max_concurrency is None:
        yield
        return
    with machine_lock(loaded.lock_key(), lock_dir):
        yield


def _hook(loaded: LoadedPlugin, name: str, runtime: AgentRuntime, scenarios: Sequence[Any]) -> None:
    hook = getattr(loaded.plugin, name, None)
    if callable(hook):
        hook(runtime, list(scenarios), loaded.name)


def _batches(
    runtime: AgentRuntime,
    loaded: LoadedPlugin,
    selected: Sequence[Selected],
    options: SweepOptions,
    sweep_id: str,
    *,
    one_per_scenario: bool,
) -> list[BatchSpec]:
    """Group scenarios into batches sharing a pack and an effective config, in selection order."""
    batches: list[BatchSpec] = []
    for item in selected:
        config = effective_config(options.config, item.pack, item.scenario)
        last = batches[-1] if batches else None
        if not one_per_scenario and last and last.pack is item.pack and last.config == config:
            batches[-1] = BatchSpec(
                runtime=runtime,
                runtime_name=loaded.name,
                pack=item.pack,
                config=config,
                scenarios=(*last.scenarios, item.scenario),
                runs=options.runs,
                sweep_id=sweep_id,
            )
        else:
            batches.append(
                BatchSpec(
                    runtime=runtime,
                    runtime_name=loaded.name,
                    pack=item.pack,
                    config=config,
                    scenarios=(item.scenario,),
                    runs=options.runs,
                    sweep_id=sweep_id,
                )
            )
    return batches


def run_sweep(loaded: LoadedPlugin, selected: Sequence[Selected], options: SweepOptions) -> SweepResult:
    """Run every selected scenario. Each run is written as it ends, so an abort loses nothing recorded."""
    sweep_id = uuid.uuid4().hex[:8]
    limit = effective_concurrency(options, loaded.max_concurrency)
    writer = RunWriter(options.out_root / sweep_id)
    result = SweepResult(sweep_id=sweep_id, runtime=loaded.name, started_at=now(), concurrency=limit)
    scenarios = [item.scenario for item in selected]
    try:
        with sweep_lock(loaded, options.lock_dir):
            runtime = build_runtime(loaded)
            result.model_label = loaded.model_label()
            try:
                _hook(loaded, "pre_run", runtime, scenarios)
                batches = _batches(runtime, loaded, selected, options, sweep_id, one_per_scenario=limit > 1)
                if limit == 1:
                    for batch in batches:
                        run_batch(batch, writer)
                else:
                    _run_concurrently(batches, writer, limit)
            finally:
                _hook(loaded, "post_run", runtime, scenarios)
    finally:
        result.results = list(writer.results)
        result.ended_at = now()
    return result


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
