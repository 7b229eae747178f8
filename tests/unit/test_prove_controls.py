"""Negative controls: certification refuses a scenario without a poison case; development warns."""

from __future__ import annotations

from windtunnel._prove.controls import control_check
from windtunnel._prove.models import ProofCode
from windtunnel.api import ReferenceCase, ReferenceDecision, Scenario

GOLDEN = ReferenceCase(name="g", kind="golden", decisions=[ReferenceDecision(content="done")])
POISON = ReferenceCase(
    name="p", kind="poison", reason="says nothing", decisions=[ReferenceDecision(content="?")]
)


def test_certification_refuses_a_scenario_with_no_negative_control() -> None:
    defect, warning = control_check(
        Scenario(name="s", prompt="p", reference_cases=[GOLDEN]), certification=True
    )
    assert defect is not None and defect.code is ProofCode.NO_NEGATIVE_CONTROL
    assert "'s' has no negative control" in defect.message and "kind='poison'" in defect.message
    assert warning is None


def test_development_warns_and_goes_on() -> None:
    defect, warning = control_check(
        Scenario(name="s", prompt="p", reference_cases=[GOLDEN]), certification=False
    )
    assert defect is None
    assert warning is not None and "no_negative_control" in warning


def test_a_poison_case_is_a_negative_control() -> None:
    scenario = Scenario(name="s", prompt="p", reference_cases=[GOLDEN, POISON])
    assert control_check(scenario, certification=True) == (None, None)
