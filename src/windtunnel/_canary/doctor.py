"""`wt doctor`: bring-up diagnostics for one runtime, then the reset canary.

Steps, in order, each reported as it ends: engine (containerised runtimes), build (images, stack),
tools (every mock of the packs lists its tools, and a reference-capable runtime calls one of each through
its own tool wiring: see doctor_tools), reset (a provisioned handle wipes), canary (seed, reset, recall).
Healthy only when every step passed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from windtunnel._canary.canary import run_reset_canary
from windtunnel._canary.doctor_tools import tools_step
from windtunnel._core.agent_runtime import AgentConfig, AgentRuntime
from windtunnel._packs.pack import Pack
from windtunnel._runner.lifecycle import open_runtime, provisioned
from windtunnel._runtimes.abilities import ImagePlugin
from windtunnel._runtimes.resolve import RuntimeDescription
from windtunnel.errors import WindTunnelError


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


def diagnose(
    description: RuntimeDescription,
    packs: Sequence[Pack],
    on_step: Callable[[Step], None],
    *,
    lock_dir: Path,
) -> DoctorReport:
    """Every step in order until one fails; the runtime lives in the one lifecycle (lock, build, pre_run,
    post_run, close), and a post_run() or close() that fails is a failed step of its own."""
    report = DoctorReport(runtime=description.name)

    def problem(exc: WindTunnelError) -> None:
        step = Step("cleanup", False, str(exc))
        report.steps.append(step)
        on_step(step)

    with contextlib.ExitStack() as lifecycle:
        try:
            if isinstance(description.plugin, ImagePlugin):  # its images are made in the engine
                with _step(report, "engine", on_step) as detail:
                    from windtunnel._engine.docker_env import docker_client, engine_version

                    detail.append(f"docker {engine_version(docker_client())}")
            with _step(report, "build", on_step) as detail:
                opened = lifecycle.enter_context(
                    open_runtime(description, lock_dir=lock_dir, on_problem=problem)
                )
                opened.pre_run([scenario for pack in packs for scenario in pack.scenarios])
                detail.append(f"built {type(opened.runtime).__name__}")
            _diagnose_built(opened.runtime, packs, report, on_step)
        except _StepFailed:
            pass
    return report


def _diagnose_built(
    runtime: AgentRuntime, packs: Sequence[Pack], report: DoctorReport, on_step: Callable[[Step], None]
) -> None:
    with _step(report, "tools", on_step) as detail:
        detail.extend(tools_step(runtime, packs))
    with _step(report, "reset", on_step) as detail:
        with provisioned(runtime, AgentConfig(), runtime_name="doctor") as handle:
            handle.reset_state()
            handle.reset_state()
        detail.append("reset_state() answered")
    with _step(report, "canary", on_step) as detail:
        result = run_reset_canary(runtime, AgentConfig())
        if result.leaked:
            raise WindTunnelError(f"LEAK: {result.detail} (nonce {result.nonce})")
        detail.append(result.detail)
