"""The container-backed executor: plays each case (or mutant) through a reference-capable runtime.

It is the selftest engine's path (`windtunnel._selftest.engine.run_case`) with the run's result kept:
fresh mocks and a fresh state probe per case, `provision_reference()` with the case's decisions, the
ordinary runner path, teardown before the next. Only inference is scripted (the gateway serves the
case's decisions); the agent loop, the MCP mocks, the evidence cross-check and the gate stay live.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path

from windtunnel._packs.pack import Pack
from windtunnel._prove.seam import CaseOutcome
from windtunnel._runner.batch import effective_config, make_probe, started_mcps
from windtunnel._runner.library import run_reference_case
from windtunnel._runner.sweep import call_hook, sweep_lock
from windtunnel._runtimes.registry import LoadedPlugin, build_runtime
from windtunnel._scenario.model import ReferenceCase, Scenario
from windtunnel.errors import UsageError
from windtunnel.spi.agent_runtime import AgentConfig, ReferenceCapableAgentRuntime


class RuntimeCaseRunner:
    """A CaseRunner over a built reference-capable runtime; traces and scores go to `out_dir`."""

    def __init__(
        self,
        runtime: ReferenceCapableAgentRuntime,
        runtime_name: str,
        out_dir: Path | None = None,
        *,
        config: AgentConfig | None = None,
        run_id: str = "",
    ) -> None:
        self.runtime = runtime
        self.runtime_name = runtime_name
        self.out_dir = out_dir
        self.config = config or AgentConfig()
        self.run_id = run_id

    def __call__(self, pack: Pack, scenario: Scenario, case: ReferenceCase) -> CaseOutcome:
        # Errors propagate: the proving core records a case that could not be played as broken_check.
        with started_mcps(self.runtime, pack.plans()) as mcps:  # fresh fixtures for every case
            result = run_reference_case(
                self.runtime,
                scenario,
                case,
                effective_config(self.config, pack, scenario),
                mcps=mcps,
                state_probe=make_probe(pack, mcps),
                runtime_name=self.runtime_name,
                sweep_id=self.run_id,
                out_dir=self.out_dir,
            )
        return CaseOutcome.from_result(result)


@contextlib.contextmanager
def runtime_case_runner(
    loaded: LoadedPlugin,
    scenarios: Sequence[Scenario],
    *,
    out_dir: Path,
    lock_dir: Path,
    run_id: str = "",
) -> Iterator[RuntimeCaseRunner]:
    """Build the runtime as `wt selftest` does (machine lock, pre_run, post_run) and yield its runner.

    Raises UsageError when the runtime cannot play reference cases (it has no provision_reference()).
    """
    with sweep_lock(loaded, lock_dir):
        runtime = build_runtime(loaded)
        if not isinstance(runtime, ReferenceCapableAgentRuntime):
            call_hook(loaded, "post_run", runtime, scenarios)  # a container plugin removes what build() made
            raise UsageError(
                f"runtime {loaded.name!r} has no provision_reference(), so it cannot play reference cases",
                hint="prove with the bundled 'reference' runtime (the default), or --local to play in-process",
                runtime=loaded.name,
            )
        try:  # pre_run inside: post_run runs after every build, even when pre_run raised
            call_hook(loaded, "pre_run", runtime, scenarios)
            yield RuntimeCaseRunner(runtime, loaded.name, out_dir, run_id=run_id)
        finally:
            call_hook(loaded, "post_run", runtime, scenarios)
