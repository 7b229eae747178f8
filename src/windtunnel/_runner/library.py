"""The library entry points: run_scenario() and run_reference_case(), the ordinary runner path, and
play_reference_case(), one case of a pack with fresh mocks."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from windtunnel._core.agent_runtime import (
    AgentConfig,
    AgentRuntime,
    MCPHandle,
    StateProbe,
)
from windtunnel._core.reference import ReferenceCase
from windtunnel._packs.pack import Pack
from windtunnel._runner.batch import effective_config, fresh_mocks, reference_context, run_provisioned
from windtunnel._runner.execute import RunContext, RunResult
from windtunnel._runner.lifecycle import with_mcp_specs
from windtunnel._runner.output import RunWriter
from windtunnel._scenario.model import Scenario


def run_scenario(
    runtime: AgentRuntime,
    scenario: Scenario,
    config: AgentConfig | None = None,
    *,
    mcps: Sequence[MCPHandle] | None = None,
    state_probe: StateProbe | None = None,
    runs: int = 1,
    runtime_name: str = "runtime",
    out_dir: Path | None = None,
    model_label: str | None = None,
) -> list[RunResult]:
    """Provision once, reset before every run, run `runs` times, tear down once (docs/writing-a-runtime.md).

    `mcps` are already-started MCP handles; recording ones are reset before each run and their
    evidence is cross-checked against the runtime's report. With `out_dir`, each run's trace and
    score sidecar are written there as the run ends. `model_label` scopes the traces and scores to
    the model the runtime answers with (None: unknown, never guessed).
    """
    handles = list(mcps or [])
    context = RunContext(
        scenario=scenario,
        runtime_name=runtime_name,
        config=with_mcp_specs(config or AgentConfig(), handles),
        mcps=handles,
        state_probe=state_probe,
        model_label=model_label,
    )
    writer = RunWriter(out_dir) if out_dir is not None else None
    return run_provisioned(runtime, context, writer, runs)


def run_reference_case(
    runtime: AgentRuntime,
    scenario: Scenario,
    case: ReferenceCase | str,
    config: AgentConfig | None = None,
    *,
    mcps: Sequence[MCPHandle] | None = None,
    state_probe: StateProbe | None = None,
    runtime_name: str = "runtime",
    out_dir: Path | None = None,
    sweep_id: str = "",
    model_label: str | None = None,
) -> RunResult:
    """Provision with provision_reference() for this case and run the ordinary path once; a runtime without
    provision_reference() is a UsageError (docs/writing-a-runtime.md)."""
    chosen = scenario.case(case) if isinstance(case, str) else case
    handles = list(mcps or [])
    config = with_mcp_specs(config or AgentConfig(), handles)
    context = reference_context(
        scenario,
        chosen,
        runtime_name=runtime_name,
        config=config,
        mcps=handles,
        state_probe=state_probe,
        sweep_id=sweep_id,
        model_label=model_label,
    )
    writer = RunWriter(out_dir) if out_dir is not None else None
    return run_provisioned(runtime, context, writer)[0]


def play_reference_case(
    runtime: AgentRuntime,
    pack: Pack,
    scenario: Scenario,
    case: ReferenceCase,
    config: AgentConfig,
    *,
    runtime_name: str,
    out_dir: Path | None,
    sweep_id: str = "",
    model_label: str | None = None,
) -> RunResult:
    """One reference case of `pack` with its mocks started fresh and a fresh state probe, `config` with the
    pack's and scenario's agent settings (the selftest engine's and the container prover's path)."""
    with fresh_mocks(runtime, pack) as (mcps, probe):
        return run_reference_case(
            runtime,
            scenario,
            case,
            effective_config(config, pack, scenario),
            mcps=mcps,
            state_probe=probe,
            runtime_name=runtime_name,
            out_dir=out_dir,
            sweep_id=sweep_id,
            model_label=model_label,
        )
