"""The suite re-prove over real test packs: each defect's code, crashes, the deadline, the proofs file."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from windtunnel._packs.loader import load_pack
from windtunnel._packs.selection import Selected, Selection, select
from windtunnel._prove.local_executor import LocalCaseRunner
from windtunnel._prove.models import ProofCode, ScenarioProof
from windtunnel._prove.proofs_file import read_proofs
from windtunnel._prove.seam import CaseOutcome
from windtunnel._prove.suite import ProveSummary, prove_exit_code, prove_suite
from windtunnel.api import Pack, ReferenceCase, Scenario
from windtunnel.errors import UsageError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "prove_packs"
REPO = Path(__file__).resolve().parents[2]
T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def shop(*names: str) -> list[Selected]:
    """The named scenarios of the shop test pack, in the order named."""
    pack = load_pack(str(FIXTURES / "shop"))
    return [Selected(pack, pack.scenario(name)) for name in names]


def prove(items: list[Selected], tmp_path: Path, **options: object) -> ProveSummary:
    options.setdefault("run_case", LocalCaseRunner())
    options.setdefault("certification", True)
    return prove_suite(items, proofs_path=tmp_path / "proofs.jsonl", **options)  # type: ignore[arg-type]


def only(summary: ProveSummary) -> ScenarioProof:
    (proof,) = summary.proofs
    return proof


def test_a_clean_scenario_is_proved_with_its_cases_and_sources(tmp_path: Path) -> None:
    proof = only(prove(shop("charge_basket"), tmp_path))
    assert (proof.code, proof.defects, proof.leaks) == (ProofCode.PROVED, [], [])
    assert [(case.case, case.verdict) for case in proof.cases] == [
        ("charge-everything", "pass"),
        ("charge-tea-only", "pass"),
    ]
    assert [source.resolved for source in proof.sources] == [True, True]
    assert not proof.assumed_by_author


def test_no_negative_control_is_refused_in_certification(tmp_path: Path) -> None:
    proof = only(prove(shop("no_control"), tmp_path))
    assert proof.code is ProofCode.NO_NEGATIVE_CONTROL
    assert "'no_control' has no negative control" in proof.defects[0].message


def test_development_mode_warns_about_a_missing_control_and_goes_on(tmp_path: Path) -> None:
    summary = prove(shop("no_control"), tmp_path, certification=False)
    proof = only(summary)
    assert proof.code is ProofCode.PROVED and summary.exit_code == 0
    assert len(proof.warnings) == 1 and "no_negative_control" in proof.warnings[0]
    assert [case.verdict for case in proof.cases] == ["pass"]


@pytest.mark.parametrize(
    ("scenario", "field", "grader_field", "excerpt"),
    [
        (
            "leak_word_run",
            "prompt[1]",
            "reference_cases[charge-tea-only].reason",
            "charges only the tea although the customer asked for the whole basket",
        ),
        ("leak_number", "prompt[0]", "expect.outcome.state[1].value", "37.50"),
        ("leak_nested", "system_prompt", "expect.outcome.state[3].value[1]", "GIFT-42"),
    ],
)
def test_a_leak_is_answer_leaked_with_excerpt_and_both_fields(
    tmp_path: Path, scenario: str, field: str, grader_field: str, excerpt: str
) -> None:
    proof = only(prove(shop(scenario), tmp_path))
    assert proof.code is ProofCode.ANSWER_LEAKED
    defect = proof.defects[0]
    assert (defect.code, defect.field, defect.grader_field, defect.excerpt) == (
        ProofCode.ANSWER_LEAKED,
        field,
        grader_field,
        excerpt,
    )
    assert field in defect.message and grader_field in defect.message


def test_an_unresolved_source_blocks_and_says_which_and_why(tmp_path: Path) -> None:
    proof = only(prove(shop("source_unresolved"), tmp_path))
    assert proof.code is ProofCode.SOURCE_UNRESOLVED
    assert [(d.field, d.excerpt) for d in proof.defects] == [
        ("sources[0]", "charges may be split across baskets"),
        ("sources[1]", "split"),
    ]
    assert "file 'POLICY.md' does not contain the quoted words" in proof.defects[0].message


def test_a_scenario_with_no_counting_source_is_kept_as_assumed_by_the_author(tmp_path: Path) -> None:
    proof = only(prove(shop("assumed"), tmp_path))
    assert proof.code is ProofCode.PROVED and proof.assumed_by_author


class Crashing:
    """Plays cases locally, but the engine 'goes away' for the named scenarios."""

    def __init__(self, *crash: str) -> None:
        self.crash = crash
        self.local = LocalCaseRunner()

    def __call__(self, pack: Pack, scenario: Scenario, case: ReferenceCase) -> CaseOutcome:
        if scenario.name in self.crash:
            raise ConnectionError("engine went away")
        return self.local(pack, scenario, case)


def test_a_crash_records_broken_check_with_the_exception_and_the_suite_goes_on(tmp_path: Path) -> None:
    summary = prove(shop("charge_basket", "assumed", "weak_gate"), tmp_path, run_case=Crashing("assumed"))
    assert [proof.code for proof in summary.proofs] == [
        ProofCode.PROVED,
        ProofCode.BROKEN_CHECK,
        ProofCode.PROVED,
    ]
    broken = summary.proofs[1]
    assert [case.verdict for case in broken.cases] == ["broken_check", "broken_check"]
    assert "ConnectionError: engine went away" in broken.defects[0].message
    assert broken.defects[0].error is not None and "Traceback" in broken.defects[0].error
    assert summary.exit_code == 1


def test_answer_leaked_wins_over_a_crash_in_the_same_scenario(tmp_path: Path) -> None:
    proof = only(prove(shop("leak_number"), tmp_path, run_case=Crashing("leak_number")))
    assert proof.code is ProofCode.ANSWER_LEAKED
    assert set(proof.codes) == {ProofCode.ANSWER_LEAKED, ProofCode.BROKEN_CHECK}


def test_a_golden_that_fails_and_a_control_that_passes_are_named(tmp_path: Path) -> None:
    class Inverted:
        def __call__(self, pack: Pack, scenario: Scenario, case: ReferenceCase) -> CaseOutcome:
            return CaseOutcome(gate_passed=case.kind == "poison", summary="scripted verdict")

    proof = only(prove(shop("charge_basket"), tmp_path, run_case=Inverted()))
    assert proof.code is ProofCode.GOLDEN_FAILED
    assert proof.codes == [ProofCode.GOLDEN_FAILED, ProofCode.NEGATIVE_CONTROL_PASSED]
    assert "although it charges only the tea" in proof.defects[1].message


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


class Slow:
    """Each case takes 100 s on the injected clock."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.local = LocalCaseRunner()
        self.played: list[str] = []

    def __call__(self, pack: Pack, scenario: Scenario, case: ReferenceCase) -> CaseOutcome:
        self.clock.now += timedelta(seconds=100)
        self.played.append(scenario.name)
        return self.local(pack, scenario, case)


def test_out_of_time_the_rest_are_validation_incomplete_keeping_the_margin(tmp_path: Path) -> None:
    clock = Clock()
    slow = Slow(clock)
    names = ("charge_basket", "assumed", "weak_gate", "leak_number")
    summary = prove(
        shop(*names), tmp_path, run_case=slow, clock=clock, margin_s=60, deadline=T0 + timedelta(seconds=700)
    )
    # each scenario takes 200 s: at 400 s, 300 s are left, 240 s after the margin: enough for one more;
    # at 600 s, 100 s are left, 40 s after the margin: not enough for 200 s.
    assert [proof.code for proof in summary.proofs] == [
        ProofCode.PROVED,
        ProofCode.PROVED,
        ProofCode.PROVED,
        ProofCode.VALIDATION_INCOMPLETE,
    ]
    assert "leak_number" not in slow.played
    message = summary.proofs[3].defects[0].message
    assert "100 s were left" in message and "60 s safety margin" in message and "200 s" in message
    assert summary.exit_code == 1
    assert [proof.code for proof in read_proofs(tmp_path / "proofs.jsonl").proofs] == [
        p.code for p in summary.proofs
    ]


def test_within_the_margin_nothing_starts(tmp_path: Path) -> None:
    clock = Clock()
    summary = prove(
        shop("charge_basket", "assumed"),
        tmp_path,
        clock=clock,
        margin_s=300,
        deadline=T0 + timedelta(seconds=299),
    )
    assert {proof.code for proof in summary.proofs} == {ProofCode.VALIDATION_INCOMPLETE}


def test_a_deadline_without_a_time_zone_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="has no time zone"):
        prove(shop("charge_basket"), tmp_path, deadline=datetime(2026, 12, 1, 9, 0))


def test_each_proof_is_on_disk_before_the_next_scenario_starts(tmp_path: Path) -> None:
    seen: list[list[str]] = []
    local = LocalCaseRunner()

    def peeking(pack: Pack, scenario: Scenario, case: ReferenceCase) -> CaseOutcome:
        seen.append([proof.scenario for proof in read_proofs(tmp_path / "proofs.jsonl").proofs])
        return local(pack, scenario, case)

    prove(shop("charge_basket", "assumed"), tmp_path, run_case=peeking)
    assert seen == [[], [], ["charge_basket"], ["charge_basket"]]
    written = read_proofs(tmp_path / "proofs.jsonl")
    assert written.header is not None and written.header.selected == 2 and written.header.certification


def test_exit_codes_are_those_of_selftest(tmp_path: Path) -> None:
    assert prove_exit_code(prove([], tmp_path)) == 2
    assert prove(shop("charge_basket"), tmp_path).exit_code == 0
    assert prove(shop("charge_basket", "leak_number"), tmp_path).exit_code == 1


def test_the_bundled_packs_prove_clean_in_certification(tmp_path: Path) -> None:
    packs = [load_pack(str(REPO / "scenarios" / name)) for name in ("support_desk", "artifacts")]
    summary = prove(select(packs, Selection()), tmp_path)
    assert {proof.scenario: proof.code for proof in summary.proofs} == {
        proof.scenario: ProofCode.PROVED for proof in summary.proofs
    }
    assert len(summary.proofs) == 5 and summary.exit_code == 0
    assert all(proof.sources and not proof.warnings for proof in summary.proofs)
