"""What a stage sees: the run, the runtime it works on, and a place for its evidence."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from windtunnel._bundle import layout
from windtunnel._bundle.models import CheckRecord, CheckScope, Stage
from windtunnel._conformance.subject import Subject
from windtunnel._conformance.suite import Suite
from windtunnel._core.abilities import ReachRecordingRuntime
from windtunnel._core.tiers import Tier
from windtunnel._core.vocabulary import CheckStatus
from windtunnel._files import write_atomic
from windtunnel._packs.selection import Selected
from windtunnel._pipeline.config import CertifyConfig
from windtunnel._runtimes.resolve import RuntimeDescription
from windtunnel.errors import RuntimeFault, WindTunnelError


def print_nothing(line: str) -> None:
    """The default progress sink."""


safe = layout.safe_part
"""A name as one path part of the bundle (windtunnel._bundle.layout)."""


@dataclass(slots=True)
class RuntimeRun:
    """One runtime's state across the stages: its description, then the built runtime, then its checks.

    `lifecycle` holds the runtime's one lifecycle (lock, post_run, close) from the build stage until
    after its last stage; `runtime` is None when nothing usable was built (or pre_run failed), so the
    later stages have nothing to run against."""

    name: str
    description: RuntimeDescription | None = None
    runtime: Any = None
    subject: Subject | None = None
    images: dict[str, str] = field(default_factory=dict)
    source: str | None = None
    checks: list[CheckRecord] = field(default_factory=list)
    stage_seconds: dict[str, float] = field(default_factory=dict)
    """Wall time of each stage that ran, by stage name (run.json and the certify summary show it)."""
    lifecycle: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)
    reach: ReachRecordingRuntime | None = None
    """The built runtime when its fences record what it tried to reach (also when it never got ready)."""

    def record_problem(self, exc: WindTunnelError) -> None:
        """A post_run() or close() that failed after the stages. The plugin's post_run() is the runtime's
        own code (a failed check of it); a runtime that cannot be closed is a harness error."""
        own = isinstance(exc, RuntimeFault)
        self.checks.append(
            CheckRecord(
                id=f"{safe(self.name)}/publish/post-run"
                if own
                else f"harness/publish/closed/{safe(self.name)}",
                runtime=self.name,
                stage=Stage.PUBLISH,
                scope=CheckScope.RUNTIME if own else CheckScope.HARNESS,
                status=CheckStatus.FAILED if own else CheckStatus.ERROR,
                detail=str(exc),
            )
        )

    @property
    def model_label(self) -> str | None:
        """The model the runtime answers with, as its resolved description says; None: unknown (never guessed)."""
        return self.description.model_label() if self.description is not None else None

    @property
    def failed(self) -> bool:
        """Scored runtime checks only: a harness-scope check (a broken scenario) is not the runtime's failure."""
        return any(
            c.scored and c.scope is CheckScope.RUNTIME and c.status is not CheckStatus.PASSED
            for c in self.checks
        )


@dataclass(slots=True)
class CertifyOutcome:
    """A certify run so far: every runtime's run, the harness self-checks, and what was swept at the start."""

    run_id: str
    started_at: float
    runs: list[RuntimeRun] = field(default_factory=list)
    harness: list[CheckRecord] = field(default_factory=list)
    swept: list[str] = field(default_factory=list)

    @property
    def checks(self) -> list[CheckRecord]:
        return [check for run in self.runs for check in run.checks] + self.harness


@dataclass(slots=True)
class StageContext:
    config: CertifyConfig
    suite: Suite
    selected: list[Selected]
    run: RuntimeRun
    stage: Stage
    run_id: str
    progress: Callable[[str], None] = field(default=print_nothing)

    @property
    def bundle(self) -> Path:
        return self.config.out_dir

    def evidence_dir(self) -> Path:
        """`evidence/<runtime>/<stage>/` in the bundle."""
        return self.bundle / layout.EVIDENCE_DIR / safe(self.run.name) / self.stage.value

    def traces_dir(self) -> Path:
        return self.bundle / layout.TRACES_DIR / safe(self.run.name) / self.stage.value

    def write_evidence(self, name: str, data: Any) -> str:
        """Write JSON evidence now (before the next stage starts); returns its bundle-relative path.
        (Host paths in it are made portable when the bundle is published: windtunnel._pipeline.portable.)"""
        path = self.evidence_dir() / f"{safe(name)}.json"
        write_atomic(path, json.dumps(data, indent=2, default=str, ensure_ascii=False) + "\n")
        return path.relative_to(self.bundle).as_posix()

    def relative(self, path: Path) -> str:
        return path.resolve().relative_to(self.bundle.resolve()).as_posix()

    def check(
        self,
        name: str,
        status: CheckStatus,
        detail: str,
        *,
        evidence: list[str] | None = None,
        scored: bool = True,
        seconds: float = 0.0,
        scope: CheckScope = CheckScope.RUNTIME,
        tier: Tier | None = None,
    ) -> CheckRecord:
        return CheckRecord(
            id=f"{safe(self.run.name)}/{self.stage.value}/{name}",
            runtime=self.run.name,
            stage=self.stage,
            scope=scope,
            scored=scored,
            status=status,
            detail=detail,
            evidence=evidence or [],
            seconds=round(seconds, 3),
            tier=tier,
        )
