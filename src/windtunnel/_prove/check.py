"""Proving one scenario: its negative controls, leaks and sources, then its reference cases played."""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any

from windtunnel._core.reference import ReferenceCase
from windtunnel._packs.pack import Pack
from windtunnel._prove.controls import control_check
from windtunnel._prove.grounding import ground
from windtunnel._prove.leaks import find_leaks
from windtunnel._prove.models import (
    CaseProof,
    CaseVerdict,
    Defect,
    Leak,
    ProofCode,
    ScenarioProof,
    SourceResult,
    headline,
)
from windtunnel._prove.seam import CaseRunner
from windtunnel._scenario.model import Scenario

log = logging.getLogger("windtunnel.prove")
Clock = Callable[[], datetime]


@dataclass
class _Findings:
    """What the checks of one scenario found so far; each field is the ScenarioProof field of that name."""

    defects: list[Defect] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    leaks: list[Leak] = field(default_factory=list)
    sources: list[SourceResult] = field(default_factory=list)
    assumed_by_author: bool = False
    cases: list[CaseProof] = field(default_factory=list)

    def as_proof_fields(self) -> dict[str, Any]:
        return {item.name: getattr(self, item.name) for item in fields(self)}


def prove_scenario(
    pack: Pack, scenario: Scenario, run_case: CaseRunner, *, certification: bool, clock: Clock
) -> ScenarioProof:
    """Every check of one scenario; a check that crashes is recorded as broken_check and the rest still run."""
    started = clock()
    found = _Findings()
    defect, warning = control_check(scenario, certification=certification)
    found.defects += [defect] if defect else []
    if warning:
        log.warning("%s", warning)
        found.warnings.append(warning)
    _guarded(found, "leaked-answer check", lambda: _check_leaks(pack, scenario, found))
    _guarded(found, "source check", lambda: _check_sources(pack, scenario, found))
    _play_cases(pack, scenario, run_case, found)
    return ScenarioProof(
        pack=pack.name,
        scenario=scenario.name,
        code=headline([item.code for item in found.defects]),
        certification=certification,
        **found.as_proof_fields(),
        started_at=started.isoformat(),
        duration_s=(clock() - started).total_seconds(),
    )


def broken(stage: str, exc: BaseException) -> Defect:
    return Defect(
        code=ProofCode.BROKEN_CHECK,
        message=f"the {stage} crashed: {type(exc).__name__}: {exc}",
        error="".join(traceback.format_exception(exc))[-4000:],
    )


def _guarded(found: _Findings, stage: str, check: Callable[[], None]) -> None:
    try:
        check()
    except Exception as exc:  # noqa: BLE001 - a crash is recorded as broken_check, and proving goes on
        found.defects.append(broken(stage, exc))


def _check_leaks(pack: Pack, scenario: Scenario, found: _Findings) -> None:
    found.leaks = find_leaks(pack, scenario)
    for leak in found.leaks:
        found.defects.append(
            Defect(
                code=ProofCode.ANSWER_LEAKED,
                message=leak.sentence(),
                field=leak.visible_field,
                grader_field=leak.grader_field,
                excerpt=leak.excerpt,
            )
        )


def _check_sources(pack: Pack, scenario: Scenario, found: _Findings) -> None:
    grounding = ground(pack, scenario)
    found.sources = list(grounding.sources)
    found.assumed_by_author = grounding.assumed_by_author
    for source in grounding.unresolved:
        found.defects.append(
            Defect(
                code=ProofCode.SOURCE_UNRESOLVED,
                message=f"{source.field} ({source.kind}) does not resolve: {source.reason}",
                field=source.field,
                excerpt=source.quote,
            )
        )


def _play_cases(pack: Pack, scenario: Scenario, run_case: CaseRunner, found: _Findings) -> None:
    if not scenario.goldens:
        found.defects.append(
            Defect(
                code=ProofCode.GOLDEN_FAILED,
                message=f"scenario {scenario.name!r} has no golden case, so nothing shows its gate can pass",
            )
        )
    for case in scenario.reference_cases:
        proof, defect = play_case(pack, scenario, case, run_case)
        found.cases.append(proof)
        found.defects += [defect] if defect else []


def play_case(
    pack: Pack, scenario: Scenario, case: ReferenceCase, run_case: CaseRunner
) -> tuple[CaseProof, Defect | None]:
    """Play one reference case: a golden must pass the gate, a negative control must fail it."""
    where = f"reference case {case.name!r} ({case.kind})"
    try:
        outcome = run_case(pack, scenario, case)
    except Exception as exc:  # noqa: BLE001 - one case that cannot be played is recorded, not fatal
        defect = broken(f"run of {where}", exc)
        return _proof(case, "broken_check", None, defect.message), defect
    if outcome.error is not None:
        message = f"{where} could not be played, so it is no evidence either way: {outcome.error}"
        defect = Defect(code=ProofCode.BROKEN_CHECK, message=message, field=case.name)
        return _proof(case, "broken_check", None, outcome.summary), defect
    if case.kind == "golden" and not outcome.gate_passed:
        message = f"{where} did not pass the gate: {outcome.summary}"
        defect = Defect(code=ProofCode.GOLDEN_FAILED, message=message, field=case.name)
        return _proof(case, "golden_failed", False, outcome.summary), defect
    if case.kind == "poison" and outcome.gate_passed:
        why = f" although it {case.reason}" if case.reason.strip() else ""
        message = f"{where} passed the gate{why}: the gate does not catch this wrong behaviour"
        defect = Defect(code=ProofCode.NEGATIVE_CONTROL_PASSED, message=message, field=case.name)
        return _proof(case, "negative_control_passed", True, outcome.summary), defect
    return _proof(case, "pass", outcome.gate_passed, outcome.summary), None


def _proof(case: ReferenceCase, verdict: CaseVerdict, passed: bool | None, summary: str) -> CaseProof:
    return CaseProof(case=case.name, kind=case.kind, verdict=verdict, gate_passed=passed, summary=summary)
