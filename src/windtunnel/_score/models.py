"""The Score sidecar: which checks ran, which failed and why. Separate from selftest verdicts."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, Field

from windtunnel._core.tiers import Tier
from windtunnel._trace.models import TraceError

SCORE_SCHEMA_VERSION = 1

CheckKind = Literal["gate", "outcome", "security", "benchmark", "observation"]


class ScoreStatus(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"


class CheckResult(BaseModel):
    """One check. Observations carry `passed=None`: recorded and compared, never failing the case.

    `evaluated` is false when the evidence to judge it was missing (unknown usage): such a check is
    neither passed nor failed, and its detail starts with "not evaluated".
    """

    id: str
    kind: CheckKind
    passed: bool | None
    evaluated: bool = True
    detail: str
    expected: Any = None
    observed: Any = None


RUN_IDENTITY = frozenset({"run_id", "scenario", "pack", "runtime", "tier", "model_label"})
"""The fields a score takes from the trace it scores: which run, of what, and under which model."""


class Score(BaseModel):
    schema_version: Literal[1] = 1
    run_id: str
    scenario: str
    pack: str | None
    runtime: str
    tier: Tier = Field(
        default="stable", description="the run tier of the scored run; a quarantined score never gates"
    )
    model_label: str | None = Field(
        default=None, description="the model the score is scoped to; null: unknown"
    )
    status: ScoreStatus
    checks: list[CheckResult] = Field(default_factory=list)
    error: TraceError | None = None

    @property
    def passed(self) -> bool:
        return self.status is ScoreStatus.PASSED

    @property
    def gating(self) -> bool:
        """Whether this score may change a verdict or exit code: every tier but quarantined."""
        return self.tier != "quarantined"

    @property
    def failed_checks(self) -> list[CheckResult]:
        return [check for check in self.checks if check.passed is False]

    def summary(self) -> str:
        """One line: status and the first failure or error; a pass names the checks not evaluated."""
        if self.error is not None:
            return f"error ({self.error.kind}): {self.error.message}"
        failed = self.failed_checks
        if failed:
            more = f" (+{len(failed) - 1} more)" if len(failed) > 1 else ""
            return f"failed {failed[0].id}: {failed[0].detail}{more}"
        unjudged = [check.id for check in self.checks if not check.evaluated]
        return f"passed (not evaluated: {', '.join(unjudged)})" if unjudged else "passed"
