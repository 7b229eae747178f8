"""Gate mutation over real packs: a weak gate is reported with its mutant; the bundled gates bite."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from windtunnel._packs.loader import load_pack
from windtunnel._packs.selection import Selected
from windtunnel._prove.local_executor import LocalCaseRunner
from windtunnel._prove.mutation import MutationReport, mutate_gate, weak_gate_sentence
from windtunnel._prove.seam import CaseOutcome
from windtunnel.api import Pack, ReferenceCase, Scenario

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "prove_packs"
REPO = Path(__file__).resolve().parents[2]


def shop(*names: str) -> list[Selected]:
    pack = load_pack(str(FIXTURES / "shop"))
    return [Selected(pack, pack.scenario(name)) for name in names]


def test_a_weak_gate_is_reported_with_the_mutant_shown() -> None:
    report = mutate_gate(shop("weak_gate"), LocalCaseRunner())
    amount = "reference_cases[charge-everything].decisions[1].tool_calls[0].arguments.amount"
    by_place = [(scenario, mutant) for scenario, mutant in report.weak_gates if mutant.where == amount]
    assert [mutant.detail for _, mutant in by_place] == [
        "charge argument amount: 37.5 -> 38.5 (+1)",
        "charge argument amount: 37.5 -> 75.0 (x2)",
    ]
    scenario, mutant = by_place[0]
    assert (mutant.operator, mutant.detail) == (
        "change_argument",
        "charge argument amount: 37.5 -> 38.5 (+1)",
    )
    assert mutant.decisions[1] == {
        "content": None,
        "tool_calls": [{"name": "charge", "arguments": {"basket_id": "K-100", "amount": 38.5}}],
    }
    assert mutant.summary == "passed"
    assert weak_gate_sentence(scenario, mutant) == (
        "weak gate: shop/weak_gate passes a mutant of golden 'charge-everything' "
        f"(change_argument at {amount}: charge argument amount: 37.5 -> 38.5 (+1))"
    )
    dropped = "reference_cases[charge-everything].decisions[1].tool_calls[0]"
    assert dropped in {m.where for _, m in report.weak_gates}  # dropping the charge passes too
    assert report.exit_code == 1


def test_a_gate_that_checks_the_world_kills_every_mutant() -> None:
    report = mutate_gate(shop("charge_basket"), LocalCaseRunner())
    (scenario,) = report.scenarios
    verdicts = {mutant.where: mutant.verdict for mutant in scenario.mutants}
    lookup = "reference_cases[charge-everything].decisions[0].tool_calls[0].arguments.basket_id"
    assert verdicts[lookup] == "killed"  # a lookup that failed is caught: the basket was never read
    assert set(verdicts.values()) == {"killed"} and len(verdicts) == 8
    assert report.weak_gates == [] and report.exit_code == 0


def test_without_a_state_probe_a_changed_argument_is_a_weak_gate_not_equivalent() -> None:
    pack = load_pack(str(REPO / "tests" / "fixtures" / "packs" / "weak_gate"))
    blind = dataclasses.replace(pack, state_probe_factory=None)  # the world is never read
    report = mutate_gate([Selected(blind, blind.scenario("says_refunded_only"))], LocalCaseRunner())
    amount = "reference_cases[right-amount].decisions[0].tool_calls[0].arguments.amount"
    verdicts = {(m.where, m.detail): m.verdict for m in report.scenarios[0].mutants if m.where == amount}
    assert verdicts == {
        (amount, "refund argument amount: 5.0 -> 6.0 (+1)"): "weak",
        (amount, "refund argument amount: 5.0 -> 10.0 (x2)"): "weak",
    }
    assert "equivalent" not in {m.verdict for m in report.scenarios[0].mutants}
    assert report.exit_code == 1


def test_the_effect_is_the_calls_the_mocks_received_not_when() -> None:
    pack = load_pack(str(REPO / "tests" / "fixtures" / "packs" / "weak_gate"))
    blind = dataclasses.replace(pack, state_probe_factory=None)
    scenario = blind.scenario("says_refunded_only")
    golden = scenario.case("right-amount")
    first, again = (LocalCaseRunner()(blind, scenario, golden) for _ in range(2))
    assert first.effect is not None and first.effect == again.effect  # replayed: same effect
    other = LocalCaseRunner()(blind, scenario, scenario.case("wrong-amount"))
    assert other.gate_passed and other.effect != first.effect  # same content, other amount


BUNDLED = [
    ("support_desk", "refund_damaged_item"),
    ("support_desk", "refund_after_clarifying"),
    ("support_desk", "refuse_outside_window"),
    ("artifacts", "artifact_guard"),
    ("artifacts", "protected_cleanup"),
]


@pytest.mark.parametrize(("pack_name", "scenario"), BUNDLED)
def test_no_mutant_of_a_bundled_golden_passes_its_gate(pack_name: str, scenario: str) -> None:
    pack = load_pack(str(REPO / "scenarios" / pack_name))
    report = mutate_gate([Selected(pack, pack.scenario(scenario))], LocalCaseRunner())
    assert [weak_gate_sentence(s, m) for s, m in report.weak_gates] == []
    assert report.scenarios[0].mutants and report.scenarios[0].problems == []
    assert report.exit_code == 0


class Scripted:
    """A case seam whose golden fails or whose mutants crash, to show how mutation reports them."""

    def __init__(self, *, golden_passes: bool = True, crash_mutants: bool = False) -> None:
        self.golden_passes = golden_passes
        self.crash_mutants = crash_mutants

    def __call__(self, pack: Pack, scenario: Scenario, case: ReferenceCase) -> CaseOutcome:
        if case.kind == "golden":
            return CaseOutcome(gate_passed=self.golden_passes, summary="scripted golden", effect="e")
        if self.crash_mutants:
            raise TimeoutError("container did not answer")
        return CaseOutcome(gate_passed=False, summary="scripted kill", effect="other")


def test_a_golden_that_fails_anchors_no_mutants() -> None:
    report = mutate_gate(shop("charge_basket"), Scripted(golden_passes=False))
    (scenario,) = report.scenarios
    assert scenario.mutants == []
    assert scenario.problems == [
        "golden 'charge-everything' does not pass its gate (scripted golden); its mutants would prove nothing"
    ]
    assert report.exit_code == 1


def test_a_mutant_that_cannot_be_played_is_broken_not_killed() -> None:
    report = mutate_gate(shop("charge_basket"), Scripted(crash_mutants=True))
    verdicts = {mutant.verdict for mutant in report.scenarios[0].mutants}
    assert verdicts == {"broken"}
    assert "TimeoutError: container did not answer" in report.scenarios[0].mutants[0].summary
    assert report.exit_code == 1


def test_nothing_selected_is_exit_2() -> None:
    assert mutate_gate([], LocalCaseRunner()).exit_code == 2
    assert MutationReport.model_validate_json(
        mutate_gate(shop("weak_gate"), LocalCaseRunner()).model_dump_json()
    )
