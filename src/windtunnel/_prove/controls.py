"""Negative controls required (docs/selftests.md): a gate is only shown to bite by a case it must fail."""

from __future__ import annotations

from windtunnel._prove.models import Defect, ProofCode
from windtunnel._scenario.model import Scenario


def control_check(scenario: Scenario, *, certification: bool) -> tuple[Defect | None, str | None]:
    """(defect, warning): certification refuses a scenario with no poison case; development warns."""
    if scenario.poisons:
        return None, None
    problem = (
        f"scenario {scenario.name!r} has no negative control: no poison reference case shows its "
        "gate can fail a wrong behaviour"
    )
    fix = "add a ReferenceCase(kind='poison', reason=...) that makes the task-specific mistake"
    if certification:
        return Defect(code=ProofCode.NO_NEGATIVE_CONTROL, message=f"{problem}; {fix}"), None
    return None, f"{problem} (refused in certification mode as no_negative_control); {fix}"
