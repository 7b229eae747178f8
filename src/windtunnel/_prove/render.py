"""How `wt prove` shows its proofs and its gate mutation: text for people, JSON for tools."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from windtunnel._core.vocabulary import Exit
from windtunnel._prove.models import Defect, ScenarioProof
from windtunnel._prove.mutation import MutationReport, weak_gate_sentence
from windtunnel._prove.suite import ProveSummary


@dataclass(frozen=True, slots=True)
class ProveRun:
    """One `wt prove`: where it ran, its proofs, and its mutation report when asked for."""

    runtime: str
    certification: bool
    summary: ProveSummary
    mutation: MutationReport | None
    traces: Path

    @property
    def exit_code(self) -> int:
        """Selftest's codes: 0 all proved (and no weak gate), 1 any defect, 2 nothing selected."""
        code = self.summary.exit_code
        if code == Exit.USAGE or self.mutation is None:
            return code
        return max(code, self.mutation.exit_code)


def proof_line(proof: ScenarioProof) -> str:
    """The proof's headline: its code, the scenario, and how it is grounded."""
    where = f"{proof.pack}/{proof.scenario}" + (
        " (quarantined: not gating)" if proof.tier == "quarantined" else ""
    )
    if proof.code.value == "validation_incomplete":
        return f"{proof.code.value.upper():24} {where}"
    unresolved = sum(not source.resolved for source in proof.sources)
    counting = Counter(source.kind for source in proof.sources if source.counts)
    if unresolved:
        grounding = f"{unresolved} cited source(s) do not resolve"
    elif proof.assumed_by_author:
        grounding = "assumed by the author (no source)"
    else:
        grounding = "grounded in " + ", ".join(f"{n} {kind}" for kind, n in sorted(counting.items()))
    played = f"{len(proof.cases)} case(s) played" if proof.cases else "no case played"
    return f"{proof.code.value.upper():24} {where}  {played}; {grounding}"


def _defect_lines(defect: Defect) -> list[str]:
    lines = [f"    {defect.code.value}: {defect.message}"]
    located = [
        f"field: {defect.field}" if defect.field else "",
        f"grader field: {defect.grader_field}" if defect.grader_field else "",
        f"excerpt: {defect.excerpt!r}" if defect.excerpt is not None else "",
    ]
    if any(located):
        lines.append("      " + "; ".join(part for part in located if part))
    return lines


def proof_lines(proof: ScenarioProof) -> list[str]:
    lines = [proof_line(proof)]
    lines += [f"    warning: {warning}" for warning in proof.warnings]
    for defect in proof.defects:
        lines += _defect_lines(defect)
    return lines


def mutation_lines(report: MutationReport) -> list[str]:
    verdicts = Counter(m.verdict for s in report.scenarios for m in s.mutants)
    counts = ", ".join(f"{count} {name}" for name, count in sorted(verdicts.items())) or "no mutants"
    lines = [f"gate mutation: {counts}"]
    for scenario, mutant in report.weak_gates:
        sentence = weak_gate_sentence(scenario, mutant).removeprefix("weak gate: ")
        lines.append(f"WEAK GATE                {sentence}")
        lines.append(f"    the gate said: {mutant.summary}")
        lines.append(f"    mutant decisions: {json.dumps(mutant.decisions, ensure_ascii=False)}")
    for scenario in report.scenarios:
        broken = [m for m in scenario.mutants if m.verdict == "broken"]
        lines += [
            f"BROKEN MUTANT            {scenario.pack}/{scenario.scenario}: {m.where}: {m.summary}"
            for m in broken
        ]
        lines += [
            f"NOT MUTATED              {scenario.pack}/{scenario.scenario}: {p}" for p in scenario.problems
        ]
    return lines


def render_text(run: ProveRun) -> str:
    lines = [line for proof in run.summary.proofs for line in proof_lines(proof)]
    if run.mutation is not None:
        lines += mutation_lines(run.mutation)
    counts = ", ".join(f"{n} {code}" for code, n in sorted(run.summary.by_code().items())) or "nothing proved"
    mode = "certification" if run.certification else "development"
    lines.append(
        f"prove {run.runtime} ({mode}): {counts}; proofs in {run.summary.proofs_path}; traces in {run.traces}"
    )
    return "\n".join(lines)


def render_json(run: ProveRun) -> str:
    return json.dumps(
        {
            "runtime": run.runtime,
            "certification": run.certification,
            "exit_code": run.exit_code,
            "proofs_file": str(run.summary.proofs_path),
            "traces": str(run.traces),
            "summary": run.summary.by_code(),
            "proofs": [proof.model_dump(mode="json") for proof in run.summary.proofs],
            "mutation": run.mutation.model_dump(mode="json") if run.mutation is not None else None,
        },
        indent=2,
        ensure_ascii=False,
    )
