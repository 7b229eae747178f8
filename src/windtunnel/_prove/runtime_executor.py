"""The container-backed executor: plays each case (or mutant) through a reference-capable runtime.

It is the selftest engine's path (`windtunnel._runner.library.play_reference_case`) with the run's result kept:
fresh mocks and a fresh state probe per case, `provision_reference()` with the case's decisions, the
ordinary runner path, teardown before the next. Only inference is scripted (the gateway serves the
case's decisions); the agent loop, the MCP mocks, the evidence cross-check and the gate stay live.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path

from windtunnel._core.agent_runtime import AgentConfig, ReferenceCapableAgentRuntime
from windtunnel._core.reference import ReferenceCase
from windtunnel._packs.pack import Pack
from windtunnel._prove.seam import CaseOutcome
from windtunnel._runner.library import play_reference_case
from windtunnel._runner.lifecycle import open_runtime
from windtunnel._runtimes.resolve import RuntimeDescription
from windtunnel._scenario.model import Scenario
from windtunnel.errors import UsageError


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
        model_label: str | None = None,
    ) -> None:
        self.runtime = runtime
        self.runtime_name = runtime_name
        self.out_dir = out_dir
        self.config = config or AgentConfig()
        self.run_id = run_id
        self.model_label = model_label

    def __call__(self, pack: Pack, scenario: Scenario, case: ReferenceCase) -> CaseOutcome:
        # Errors propagate: the proving core records a case that could not be played as broken_check.
        result = play_reference_case(  # fresh fixtures for every case
            self.runtime,
            pack,
            scenario,
            case,
            self.config,
            runtime_name=self.runtime_name,
            out_dir=self.out_dir,
            sweep_id=self.run_id,
            model_label=self.model_label,
        )
        return CaseOutcome.from_result(result)


@contextlib.contextmanager
def runtime_case_runner(
    description: RuntimeDescription,
    scenarios: Sequence[Scenario],
    *,
    out_dir: Path,
    lock_dir: Path,
    run_id: str = "",
) -> Iterator[RuntimeCaseRunner]:
    """The runtime in the one lifecycle (lock, build, pre_run, post_run and close) and its case runner.

    Raises UsageError when the runtime cannot play reference cases (it has no provision_reference()).
    """
    with open_runtime(description, lock_dir=lock_dir) as opened:
        opened.scenarios = list(scenarios)
        runtime = opened.runtime
        if not isinstance(runtime, ReferenceCapableAgentRuntime):
            raise UsageError(
                f"runtime {opened.name!r} has no provision_reference(), so it cannot play reference cases",
                hint="prove with the bundled 'reference' runtime (the default), or --local to play in-process",
                runtime=opened.name,
            )
        opened.pre_run(scenarios)
        yield RuntimeCaseRunner(
            runtime, opened.name, out_dir, run_id=run_id, model_label=opened.model_label()
        )
