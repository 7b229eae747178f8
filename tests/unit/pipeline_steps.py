"""Small real steps and a real executor with no containers, for the stage plan's unit tests.

The steps are ordinary `Step`s: they record checks and write evidence into a real bundle directory the
way the stages do; the build step opens each runtime in the real runtime lifecycle, with a plugin that
builds a `Closable` in place of the resolved one (so the reference control needs no Docker here); the
executor is an ordinary `Executor` whose leftovers are given.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from windtunnel._bundle.models import CheckRecord, Stage
from windtunnel._core.vocabulary import CheckStatus
from windtunnel._pipeline.config import CertifyConfig
from windtunnel._pipeline.context import StageContext
from windtunnel._pipeline.plan import Step
from windtunnel._runner.lifecycle import open_runtime
from windtunnel.errors import EngineUnavailableError

REPO = Path(__file__).resolve().parents[2]
OTHER = "in_memory"
"""The runtime under certification in these tests (registered; the reference always runs too)."""


@dataclass
class Executor:
    swept: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)
    fails: bool = False
    engine_gone_after: int | None = None
    """check_engine() raises from this call on (counted from 0), as when the engine stops mid-run."""
    engine_checks: int = 0

    def prepare(self, run_id: str) -> list[str]:
        return list(self.swept)

    def check_engine(self) -> None:
        self.engine_checks += 1
        if self.engine_gone_after is not None and self.engine_checks > self.engine_gone_after:
            raise EngineUnavailableError("no Docker engine answered (in a test)", hint="start one")

    def leftovers(self, run_id: str) -> list[str]:
        if self.fails:
            raise ConnectionError("engine went away")
        return list(self.left)


@dataclass
class Closable:
    """What the fake build step builds: it only remembers being closed."""

    closed: int = 0
    raises: bool = False

    def close(self) -> None:
        self.closed += 1
        if self.raises:
            raise OSError("close failed")


@dataclass
class ClosablePlugin:
    raises: bool = False

    def build(self, runtime_name: str, label: str, soul_path: Path | None) -> Closable:
        return Closable(raises=self.raises)


def config(tmp_path: Path, *, fail_fast: bool = False, runtimes: Sequence[str] = (OTHER,)) -> CertifyConfig:
    return CertifyConfig(
        runtimes=tuple(runtimes),
        pack_refs=(str(REPO / "scenarios" / "support_desk"),),  # loaded, never run by these steps
        root=tmp_path,
        out_dir=tmp_path / "out",
        suite_dir=REPO / "conformance",
        fail_fast=fail_fast,
        lock_dir=tmp_path / "locks",
    )


def build(built: dict[str, Closable] | None = None, *, raises: bool = False) -> Step:
    def run(ctx: StageContext) -> list[CheckRecord]:
        assert ctx.run.description is not None  # execute() resolved it
        described = dataclasses.replace(ctx.run.description, plugin=ClosablePlugin(raises=raises))
        opened = ctx.run.lifecycle.enter_context(
            open_runtime(described, lock_dir=ctx.config.lock_dir, on_problem=ctx.run.record_problem)
        )
        ctx.run.runtime = opened.runtime
        if built is not None:
            built[ctx.run.name] = ctx.run.runtime
        return [ctx.check("images", CheckStatus.PASSED, "built", evidence=[ctx.write_evidence("build", {})])]

    return Step(Stage.BUILD, run)


def step(stage: Stage, status_for: Callable[[str], CheckStatus] | None = None, name: str = "check") -> Step:
    """One check per runtime; PASSED unless `status_for(runtime)` says otherwise."""

    def run(ctx: StageContext) -> list[CheckRecord]:
        status = status_for(ctx.run.name) if status_for else CheckStatus.PASSED
        evidence = ctx.write_evidence(name, {"status": status.value})
        return [ctx.check(name, status, f"{name} {status.value}", evidence=[evidence])]

    return Step(stage, run)


def crashing(stage: Stage, runtime: str = OTHER) -> Step:
    def run(ctx: StageContext) -> list[CheckRecord]:
        if ctx.run.name == runtime:
            raise RuntimeError(f"bug in the {stage.value} stage")
        return [ctx.check("check", CheckStatus.PASSED, "fine")]

    return Step(stage, run)


def fails_for(runtime: str) -> Callable[[str], CheckStatus]:
    return lambda name: CheckStatus.FAILED if name == runtime else CheckStatus.PASSED
