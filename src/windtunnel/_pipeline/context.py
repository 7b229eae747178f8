"""What a stage sees: the run, the runtime it works on, and a place for its evidence."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from windtunnel._bundle.models import CheckRecord, CheckScope, CheckStatus, Stage
from windtunnel._conformance.subject import Subject
from windtunnel._conformance.suite import Suite
from windtunnel._packs.selection import Selected
from windtunnel._pipeline.config import CertifyConfig
from windtunnel._runner.output import write_atomic
from windtunnel._runtimes.registry import LoadedPlugin
from windtunnel._scenario.tiers import Tier


def print_nothing(line: str) -> None:
    """The default progress sink."""


_UNSAFE = re.compile(r"[^0-9A-Za-z._-]")


def safe(part: str) -> str:
    return _UNSAFE.sub("_", part) or "_"


@dataclass(slots=True)
class RuntimeRun:
    """One runtime's state across the stages: the plugin, then the built runtime, then its checks."""

    name: str
    loaded: LoadedPlugin | None = None
    runtime: Any = None
    subject: Subject | None = None
    images: dict[str, str] = field(default_factory=dict)
    source: str | None = None
    checks: list[CheckRecord] = field(default_factory=list)
    model_label: str | None = None

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
        return self.bundle / "evidence" / safe(self.run.name) / self.stage.value

    def traces_dir(self) -> Path:
        return self.bundle / "traces" / safe(self.run.name) / self.stage.value

    def write_evidence(self, name: str, data: Any) -> str:
        """Write JSON evidence now (before the next stage starts); returns its bundle-relative path."""
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
