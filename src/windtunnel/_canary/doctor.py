"""`wt doctor`: bring-up diagnostics for one runtime, then the reset canary.

Steps, in order, each reported as it ends: engine (containerised runtimes), build (images, stack),
tools (every mock of the packs lists its tools, and a reference-capable runtime calls one of each through
its own tool wiring: see doctor_tools), reset (a provisioned handle wipes), canary (seed, reset, recall).
Healthy only when every step passed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from windtunnel._canary.canary import run_reset_canary
from windtunnel._canary.doctor_tools import tools_step
from windtunnel._packs.pack import Pack
from windtunnel._runner.batch import safe_teardown, started_mcps, with_mcp_specs
from windtunnel._runtimes.registry import LoadedPlugin, build_runtime
from windtunnel.errors import WindTunnelError
from windtunnel.spi.agent_runtime import AgentConfig, AgentRuntime


@dataclass(frozen=True, slots=True)
class Step:
    name: str
    ok: bool
    detail: str


@dataclass(slots=True)
class DoctorReport:
    runtime: str
    steps: list[Step] = field(default_factory=list)

    @property
    def healthy(self) -> bool:
        return bool(self.steps) and all(step.ok for step in self.steps)


class _StepFailed(Exception):
    pass


@contextmanager
def _step(report: DoctorReport, name: str, on_step: Callable[[Step], None]) -> Iterator[list[str]]:
    detail: list[str] = []
    try:
        yield detail
    except WindTunnelError as exc:
        step = Step(name, False, str(exc))
    except Exception as exc:  # noqa: BLE001 - a diagnosis reports every failure, whatever raised it
        step = Step(name, False, f"{type(exc).__name__}: {exc}")
    else:
        step = Step(name, True, "; ".join(detail) or "ok")
    report.steps.append(step)
    on_step(step)
    if not step.ok:
        raise _StepFailed(name)


def diagnose(loaded: LoadedPlugin, packs: Sequence[Pack], on_step: Callable[[Step], None]) -> DoctorReport:
    report = DoctorReport(runtime=loaded.name)
    runtime: Any = None
    try:
        from windtunnel._drivers.plugin import ContainerRuntimePlugin

        if isinstance(loaded.plugin, ContainerRuntimePlugin):
            with _step(report, "engine", on_step) as detail:
                from windtunnel._drivers.docker_env import docker_client, engine_version

                detail.append(f"docker {engine_version(docker_client())}")
        with _step(report, "build", on_step) as detail:
            runtime = build_runtime(loaded)
            detail.append(f"built {type(runtime).__name__}")
        with _step(report, "tools", on_step) as detail:
            detail.extend(tools_step(runtime, packs))
        with _step(report, "reset", on_step) as detail:
            _reset(runtime)
            detail.append("reset_state() answered")
        with _step(report, "canary", on_step) as detail:
            result = run_reset_canary(runtime, AgentConfig())
            if result.leaked:
                raise WindTunnelError(f"LEAK: {result.detail} (nonce {result.nonce})")
            detail.append(result.detail)
    except _StepFailed:
        pass
    finally:
        close = getattr(runtime, "close", None)
        if callable(close):
            close()
    return report


def _reset(runtime: AgentRuntime) -> None:
    with started_mcps(runtime, []) as mcps:
        handle = runtime.provision(with_mcp_specs(AgentConfig(), mcps), list(mcps))
        try:
            handle.reset_state()
            handle.reset_state()
        finally:
            safe_teardown(handle, "doctor")
