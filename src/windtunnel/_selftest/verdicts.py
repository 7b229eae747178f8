"""Self-test verdicts, kept apart from scores: a rejected poison has a failed Score and a PASS verdict."""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel

from windtunnel._runner.execute import RunResult
from windtunnel._scenario.tiers import Tier
from windtunnel._score.models import Score
from windtunnel._trace.models import ErrorKind


class Verdict(StrEnum):
    PASS = "PASS"  # noqa: S105 - a verdict, not a password
    GOLDEN_FAILED = "GOLDEN_FAILED"
    POISON_PASSED = "POISON_PASSED"
    UNSUPPORTED = "UNSUPPORTED"
    ERROR = "ERROR"


class CaseVerdict(BaseModel):
    """One reference case's verdict with its ordinary score kept as evidence."""

    schema_version: Literal[1] = 1
    pack: str
    scenario: str
    case: str
    kind: Literal["golden", "poison"]
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
        return self.tier != "quarantined"

    @classmethod
    def unsupported(
        cls, pack: str, scenario: str, case: str, kind: Literal["golden", "poison"], runtime: str
    ) -> CaseVerdict:
        return cls(
            pack=pack,
            scenario=scenario,
            case=case,
            kind=kind,
            verdict=Verdict.UNSUPPORTED,
            detail=f"runtime {runtime!r} has no provision_reference(); nothing was prepared for this case",
        )

    @classmethod
    def error(
        cls,
        pack: str,
        scenario: str,
        case: str,
        kind: Literal["golden", "poison"],
        subkind: ErrorKind,
        detail: str,
    ) -> CaseVerdict:
        return cls(
            pack=pack,
            scenario=scenario,
            case=case,
            kind=kind,
            verdict=Verdict.ERROR,
            subkind=subkind,
            detail=detail,
        )

    @classmethod
    def from_run(
        cls, pack: str, kind: Literal["golden", "poison"], result: RunResult, trace_path: str | None
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


EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def exit_code(verdicts: Sequence[CaseVerdict]) -> int:
    """0 every gating case PASS; 1 any gating GOLDEN_FAILED, POISON_PASSED or ERROR; 2 unsupported or none
    selected. Quarantined cases are reported and never change it."""
    if not verdicts:
        return EXIT_USAGE
    kinds = {case.verdict for case in verdicts if case.gating}
    if kinds & {Verdict.GOLDEN_FAILED, Verdict.POISON_PASSED, Verdict.ERROR}:
        return EXIT_FAILED
    if Verdict.UNSUPPORTED in kinds:
        return EXIT_USAGE
    return EXIT_OK
