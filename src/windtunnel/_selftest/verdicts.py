"""Self-test verdicts, kept apart from scores: a rejected poison has a failed Score and a PASS verdict."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel

from windtunnel._core import tiers
from windtunnel._core.reference import ReferenceCase, ReferenceKind
from windtunnel._core.tiers import Tier, tier_of
from windtunnel._core.vocabulary import Exit, Verdict, selftest_exit
from windtunnel._runner.execute import RunResult
from windtunnel._scenario.model import Scenario
from windtunnel._score.models import Score
from windtunnel._trace.models import ErrorKind


class CaseVerdict(BaseModel):
    """One reference case's verdict with its ordinary score kept as evidence."""

    schema_version: Literal[1] = 1
    pack: str
    scenario: str
    case: str
    kind: ReferenceKind
    verdict: Verdict
    subkind: ErrorKind | None = None
    detail: str
    score: Score | None = None
    trace: str | None = None
    seconds: float = 0.0
    harness_fault: bool = False
    tier: Tier = "stable"
    """The scenario's run tier; a quarantined case's verdict is recorded and never changes the exit code."""

    @property
    def gating(self) -> bool:
        return tiers.gating(self.tier)

    @classmethod
    def unsupported(cls, pack: str, scenario: Scenario, case: ReferenceCase, runtime: str) -> CaseVerdict:
        """The verdict of a case that `runtime`, having no provision_reference(), cannot play."""
        return cls(
            pack=pack,
            scenario=scenario.name,
            case=case.name,
            kind=case.kind,
            verdict=Verdict.UNSUPPORTED,
            detail=f"runtime {runtime!r} has no provision_reference(); nothing was prepared for this case",
            tier=tier_of(scenario),
        )

    @classmethod
    def from_run(
        cls, pack: str, kind: ReferenceKind, result: RunResult, trace_path: str | None
    ) -> CaseVerdict:
        trace, score = result.trace, result.score
        base = cls(
            pack=pack,
            scenario=trace.scenario,
            case=trace.reference_case or "",
            kind=kind,
            score=score,
            trace=trace_path,
            verdict=Verdict.ERROR,
            detail="",
            tier=trace.tier,
        )
        if trace.error is not None:
            detail = f"{trace.error.kind}: {trace.error.message}"
            return base.model_copy(update={"subkind": trace.error.kind, "detail": detail})
        if kind == "golden":
            verdict = Verdict.PASS if score.passed else Verdict.GOLDEN_FAILED
            detail = "golden passed its gate" if score.passed else f"golden did not pass: {score.summary()}"
        else:
            verdict = Verdict.POISON_PASSED if score.passed else Verdict.PASS
            detail = (
                "poison escaped the gate: every check passed"
                if score.passed
                else f"poison rejected: {score.summary()}"
            )
        return base.model_copy(update={"verdict": verdict, "detail": detail})


def exit_code(cases: Sequence[CaseVerdict]) -> Exit:
    """The selftest exit code (windtunnel._core.vocabulary) over the gating cases; a quarantined case is
    reported and never changes it."""
    gating = [case.verdict for case in cases if case.gating]
    return selftest_exit(gating, quarantined=len(cases) - len(gating))
