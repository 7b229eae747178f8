"""Gate mutation (docs/selftests.md): a gate bites only if it fails mutants of its golden.

Each golden is played first; its mutants (windtunnel._prove.mutants) are then played through the
same `CaseRunner` seam as reference cases, so they too replace only inference. A mutant the gate
fails is `killed`. A mutant the gate passes is a `weak` gate, shown with its mutation and
decisions, unless it is `equivalent`: its run did exactly what the golden's did (`CaseOutcome.effect`:
the same content, world state, and tool calls received by the mocks with the same arguments and
results), so no gate could tell the two apart. A changed argument is never equivalent, even in a
pack with no state probe: the mocks received another call. A mutant that could not be played is
`broken`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import Field

from windtunnel._core.vocabulary import judged_exit
from windtunnel._packs.pack import Pack
from windtunnel._packs.selection import Selected
from windtunnel._prove.material import pack_servers
from windtunnel._prove.models import Record, VersionedRecord
from windtunnel._prove.mutants import Mutant, Operator, derive_mutants
from windtunnel._prove.seam import CaseOutcome, CaseRunner
from windtunnel._scenario.model import Scenario
from windtunnel._scenario.serialize import decisions_to_json

MutantVerdict = Literal["killed", "weak", "equivalent", "broken"]


class MutantResult(Record):
    golden: str
    operator: Operator
    where: str = Field(description="where in the golden's decisions the mutation is")
    detail: str
    verdict: MutantVerdict
    summary: str
    decisions: list[dict[str, Any]]


class ScenarioMutation(Record):
    pack: str
    scenario: str
    mutants: list[MutantResult] = Field(default_factory=list)
    skipped_invalid: int = 0
    problems: list[str] = Field(default_factory=list, description="goldens that could not anchor mutation")

    @property
    def weak(self) -> list[MutantResult]:
        return [mutant for mutant in self.mutants if mutant.verdict == "weak"]


class MutationReport(VersionedRecord):
    scenarios: list[ScenarioMutation] = Field(default_factory=list)

    @property
    def weak_gates(self) -> list[tuple[ScenarioMutation, MutantResult]]:
        return [(scenario, mutant) for scenario in self.scenarios for mutant in scenario.weak]

    @property
    def exit_code(self) -> int:
        """0 every mutant killed or equivalent; 1 a weak gate, a broken mutant or a golden that failed; 2 nothing selected."""
        return judged_exit(
            [
                not scenario.problems and all(m.verdict in ("killed", "equivalent") for m in scenario.mutants)
                for scenario in self.scenarios
            ]
        )


def weak_gate_sentence(scenario: ScenarioMutation, mutant: MutantResult) -> str:
    return (
        f"weak gate: {scenario.pack}/{scenario.scenario} passes a mutant of golden {mutant.golden!r} "
        f"({mutant.operator} at {mutant.where}: {mutant.detail})"
    )


def mutate_gate(items: Sequence[Selected], run_case: CaseRunner) -> MutationReport:
    """Play every golden's mutants through each selected scenario's gate."""
    return MutationReport(scenarios=[_mutate_scenario(item.pack, item.scenario, run_case) for item in items])


def _mutate_scenario(pack: Pack, scenario: Scenario, run_case: CaseRunner) -> ScenarioMutation:
    results: list[MutantResult] = []
    problems: list[str] = []
    skipped = 0
    try:
        tools = [name for server in pack_servers(pack) for name in server.tools]
    except Exception as exc:  # noqa: BLE001 - recorded; the other scenarios still run
        problems.append(f"the pack's tools could not be listed: {type(exc).__name__}: {exc}")
        tools = []
    if not scenario.goldens:
        problems.append("no golden case to mutate")
    for golden in scenario.goldens:
        base, problem = _baseline(pack, scenario, golden.name, run_case)
        if base is None:
            problems.append(problem)
            continue
        derived = derive_mutants(scenario, golden, tools)
        skipped += derived.skipped_invalid
        results += [_play(pack, scenario, mutant, base, run_case) for mutant in derived.mutants]
    return ScenarioMutation(
        pack=pack.name, scenario=scenario.name, mutants=results, skipped_invalid=skipped, problems=problems
    )


def _baseline(
    pack: Pack, scenario: Scenario, golden: str, run_case: CaseRunner
) -> tuple[CaseOutcome | None, str]:
    try:
        base = run_case(pack, scenario, scenario.case(golden))
    except Exception as exc:  # noqa: BLE001 - recorded as a problem of this golden
        return None, f"golden {golden!r} could not be played: {type(exc).__name__}: {exc}"
    if base.error is not None or not base.gate_passed:
        return (
            None,
            f"golden {golden!r} does not pass its gate ({base.summary}); its mutants would prove nothing",
        )
    return base, ""


def _play(
    pack: Pack, scenario: Scenario, mutant: Mutant, base: CaseOutcome, run_case: CaseRunner
) -> MutantResult:
    verdict: MutantVerdict
    try:
        outcome = run_case(pack, scenario, mutant.case)
    except Exception as exc:  # noqa: BLE001 - a mutant that cannot be played is no evidence
        verdict, summary = "broken", f"could not be played: {type(exc).__name__}: {exc}"
    else:
        summary = outcome.summary
        if outcome.error is not None:
            verdict = "broken"
        elif not outcome.gate_passed:
            verdict = "killed"
        elif outcome.effect is not None and outcome.effect == base.effect:
            verdict = "equivalent"
        else:
            verdict = "weak"
    return MutantResult(
        golden=mutant.golden,
        operator=mutant.operator,
        where=f"reference_cases[{mutant.golden}].{mutant.where}",
        detail=mutant.detail,
        verdict=verdict,
        summary=summary,
        decisions=decisions_to_json(mutant.case.decisions),
    )
