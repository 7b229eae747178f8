"""Batches (docs/writing-a-runtime.md): mocks started, provision once, reset before each run, teardown once."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from windtunnel._core.agent_runtime import AgentConfig, AgentHandle, AgentRuntime, MCPHandle, StateProbe
from windtunnel._core.foreign import foreign_code
from windtunnel._core.reference import ReferenceCase
from windtunnel._core.tiers import LIVE_FLAKY, tier_of
from windtunnel._packs.pack import Pack
from windtunnel._runner.execute import RunContext, RunResult, WipeFailed, failed_result, run_once
from windtunnel._runner.lifecycle import provisioned, started_mcps, with_mcp_specs
from windtunnel._runner.output import RunWriter
from windtunnel._scenario.model import Scenario
from windtunnel._trace.models import ErrorKind
from windtunnel.errors import HarnessError, RuntimeFault, UsageError, WindTunnelError

log = logging.getLogger("windtunnel.runner")


@dataclass(frozen=True, slots=True, kw_only=True)
class BatchSpec:
    """One batch: scenarios of one pack that share one provisioned handle."""

    runtime: AgentRuntime
    runtime_name: str
    pack: Pack
    scenarios: Sequence[Scenario]
    config: AgentConfig
    runs: int = 1
    sweep_id: str = ""
    model_label: str | None = None
    flaky_retries: int = 0
    """How often a failed live-flaky run is tried again; each attempt is written (windtunnel._core.tiers)."""


def effective_config(base: AgentConfig, pack: Pack, scenario: Scenario | None = None) -> AgentConfig:
    """The config a batch is provisioned with: the caller's, then the pack's agent setup, then the scenario's."""
    root = pack.root or Path()
    system_prompt = (
        (scenario.system_prompt if scenario else None) or base.system_prompt or pack.agent.system_prompt
    )
    persona = base.persona_doc or (root / pack.agent.persona_doc if pack.agent.persona_doc else None)
    skills = tuple(base.skills) or tuple(root / skill for skill in pack.agent.skills)
    return dataclasses.replace(base, system_prompt=system_prompt, persona_doc=persona, skills=skills)


def make_probe(pack: Pack, mcps: Sequence[MCPHandle]) -> StateProbe | None:
    if pack.state_probe_factory is None:
        return None
    hint = "make the factory build a probe from the started MCP handles without calling them"
    with foreign_code(HarnessError, f"pack {pack.name!r}: state_probe_factory", hint=hint, pack=pack.name):
        return pack.state_probe_factory(mcps)


@contextlib.contextmanager
def fresh_mocks(runtime: AgentRuntime, pack: Pack) -> Iterator[tuple[list[MCPHandle], StateProbe | None]]:
    """The pack's mocks started with fresh fixtures (stopped afterwards, whatever happened) and its state
    probe over them."""
    with started_mcps(runtime, pack.plans()) as mcps:
        yield mcps, make_probe(pack, mcps)


def run_batch(spec: BatchSpec, writer: RunWriter) -> list[RunResult]:
    """Run every scenario `spec.runs` times on one handle; each result is written as soon as it exists.

    When the batch cannot be set up (a mock factory or the state probe factory raised, the mocks
    did not start, provision() raised), each of its runs is written as an ERROR carrying the
    cause (setup for the pack's part, runtime for provision()), and the sweep goes on.
    """
    results: list[RunResult] = []
    with contextlib.ExitStack() as stack:
        try:
            mcps, probe = stack.enter_context(fresh_mocks(spec.runtime, spec.pack))
        except Exception as exc:  # noqa: BLE001 - recorded as every run's error; the sweep goes on
            log.error(
                "%s",
                _shown(exc)
                if isinstance(exc, WindTunnelError)
                else f"pack {spec.pack.name!r} could not be set up: {_shown(exc)}",
            )
            return failed_batch(spec, ErrorKind.SETUP, exc, writer)
        config = with_mcp_specs(spec.config, mcps)
        try:
            handle = stack.enter_context(
                provisioned(spec.runtime, config, mcps, runtime_name=spec.runtime_name)
            )
        except Exception as exc:  # noqa: BLE001 - recorded as every run's error; the sweep goes on
            kind = ErrorKind.SETUP if isinstance(exc, UsageError) else ErrorKind.RUNTIME
            error = _provision_error(spec, exc)
            log.error("%s", _shown(error))
            return failed_batch(spec, kind, error, writer)
        for scenario in spec.scenarios:
            for index in range(spec.runs):
                context = RunContext(
                    scenario=scenario,
                    runtime_name=spec.runtime_name,
                    config=config,
                    mcps=mcps,
                    state_probe=probe,
                    run_index=index,
                    sweep_id=spec.sweep_id,
                    model_label=spec.model_label,
                )
                results.append(_run_with_retries(handle, context, writer, spec.flaky_retries))
    return results


def _shown(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, WindTunnelError) else f"{type(exc).__name__}: {exc}"


def _provision_error(spec: BatchSpec, exc: Exception) -> Exception:
    if isinstance(exc, WindTunnelError):
        return exc
    return RuntimeFault(
        f"runtime {spec.runtime_name!r}: provision() raised {type(exc).__name__}: {exc}",
        hint="provision() must stand up the agent or raise a windtunnel error saying why; see its logs",
        runtime=spec.runtime_name,
    )


def failed_batch(spec: BatchSpec, kind: ErrorKind, exc: BaseException, writer: RunWriter) -> list[RunResult]:
    """Every run of a batch that could not start, written as an ERROR with `exc` as its cause."""
    results = []
    for scenario in spec.scenarios:
        for index in range(spec.runs):
            context = RunContext(
                scenario=scenario,
                runtime_name=spec.runtime_name,
                config=spec.config,
                run_index=index,
                sweep_id=spec.sweep_id,
                model_label=spec.model_label,
            )
            result = failed_result(context, kind, exc)
            writer.write(result)
            results.append(result)
    return results


def _run_with_retries(handle: AgentHandle, context: RunContext, writer: RunWriter, retries: int) -> RunResult:
    """A live-flaky run that did not pass is tried again, up to `retries` times, on a fresh session; every
    attempt is written (its trace says which attempt it was) and the last one is the run's result. Other
    tiers run once: a retry would hide a real failure."""
    retried = retries if tier_of(context.scenario) == LIVE_FLAKY else 0
    for attempt in range(retried):
        current = dataclasses.replace(context, attempt=attempt)
        try:
            result = run_once(handle, current)
        except WipeFailed as failed:
            writer.write(failed.result)
            raise failed.error from None
        if result.score.passed:
            writer.write(result)
            return result
        log.warning("live-flaky %s attempt %d did not pass; trying again", context.scenario.name, attempt)
        writer.write(result, superseded=True)
    return _run_and_write(handle, dataclasses.replace(context, attempt=retried), writer)


def _run_and_write(handle: AgentHandle, context: RunContext, writer: RunWriter) -> RunResult:
    try:
        result = run_once(handle, context)
    except WipeFailed as failed:
        writer.write(failed.result)
        raise failed.error from None
    writer.write(result)
    return result


def run_provisioned(
    runtime: AgentRuntime,
    context: RunContext,
    writer: RunWriter | None,
    runs: int = 1,
) -> list[RunResult]:
    """Provision (provision_reference() for the context's reference case), run `runs` times on that
    handle, tear down: the library-level path."""
    results = []
    with provisioned(
        runtime,
        context.config,
        context.mcps,
        runtime_name=context.runtime_name,
        case=context.reference_case,
    ) as handle:
        for index in range(runs):
            run = dataclasses.replace(context, run_index=index)
            if writer is None:
                try:
                    results.append(run_once(handle, run))
                except WipeFailed as failed:
                    raise failed.error from None
            else:
                results.append(_run_and_write(handle, run, writer))
    return results


def reference_context(
    scenario: Scenario,
    case: ReferenceCase,
    *,
    runtime_name: str,
    config: AgentConfig,
    mcps: Sequence[MCPHandle],
    state_probe: StateProbe | None,
    sweep_id: str = "",
    model_label: str | None = None,
) -> RunContext:
    return RunContext(
        scenario=scenario,
        runtime_name=runtime_name,
        config=config,
        mcps=mcps,
        state_probe=state_probe,
        reference_case=case,
        sweep_id=sweep_id,
        model_label=model_label,
    )
