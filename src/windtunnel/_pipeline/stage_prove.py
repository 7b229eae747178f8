"""Proving inside certify's selftest stage: each selected scenario's proof becomes one harness check.

The golden and poison runs are not repeated: the proof reads the verdicts the selftest stage has just
given each reference case on the reference runtime (`PlayedCases`), and adds the static checks (a
negative control is required in certification mode, no leaked answer, sources resolve). A scenario
that is not proved means the suite itself is broken, so its check is harness-scoped and the run is
HARNESS_INVALID: nothing is signed on the word of a scenario that cannot fail or gives its answer away.
"""

from __future__ import annotations

from collections.abc import Mapping

from windtunnel._bundle.models import CheckRecord, CheckScope, Stage
from windtunnel._core.reference import ReferenceCase
from windtunnel._core.tiers import gating
from windtunnel._core.vocabulary import CheckStatus, Verdict
from windtunnel._packs.pack import Pack
from windtunnel._pipeline.context import StageContext, safe
from windtunnel._prove.models import ProofCode, ScenarioProof
from windtunnel._prove.seam import CaseOutcome
from windtunnel._prove.suite import prove_suite
from windtunnel._scenario.model import Scenario
from windtunnel._selftest.verdicts import CaseVerdict

CaseKey = tuple[str, str, str]
"""(pack, scenario, reference case)."""

_STATUS = {
    ProofCode.PROVED: CheckStatus.PASSED,
    ProofCode.BROKEN_CHECK: CheckStatus.ERROR,
    ProofCode.VALIDATION_INCOMPLETE: CheckStatus.NOT_MEASURED,
}


class PlayedCases:
    """A CaseRunner that plays nothing: it answers with the verdict the selftest stage gave the case."""

    def __init__(self, played: Mapping[CaseKey, CaseVerdict]) -> None:
        self.played = played

    def __call__(self, pack: Pack, scenario: Scenario, case: ReferenceCase) -> CaseOutcome:
        verdict = self.played.get((pack.name, scenario.name, case.name))
        if verdict is None:
            raise LookupError(f"the selftest stage has no verdict for reference case {case.name!r}")
        if verdict.verdict is Verdict.ERROR or verdict.score is None:
            return CaseOutcome(gate_passed=False, summary=verdict.detail, error=verdict.detail)
        return CaseOutcome(gate_passed=verdict.score.passed, summary=verdict.score.summary())


def prove_checks(ctx: StageContext, played: Mapping[CaseKey, CaseVerdict]) -> list[CheckRecord]:
    """One harness check per selected scenario, from its proof; the proofs are written as evidence."""
    proofs_file = ctx.evidence_dir() / "proofs.jsonl"
    summary = prove_suite(
        ctx.selected,
        run_case=PlayedCases(played),
        proofs_path=proofs_file,
        clock=ctx.config.clock,
        certification=ctx.config.certification,
    )
    return [_record(ctx, proof, ctx.relative(proofs_file)) for proof in summary.proofs]


def _record(ctx: StageContext, proof: ScenarioProof, proofs_file: str) -> CheckRecord:
    evidence = ctx.write_evidence(f"prove.{proof.pack}.{proof.scenario}", proof.model_dump(mode="json"))
    return CheckRecord(
        id=f"harness/selftest/prove/{safe(proof.pack)}/{safe(proof.scenario)}",
        runtime=ctx.run.name,
        stage=Stage.SELFTEST,
        scope=CheckScope.HARNESS,
        status=_STATUS.get(proof.code, CheckStatus.FAILED),
        detail=proof_detail(proof),
        evidence=[evidence, proofs_file],
        seconds=round(proof.duration_s, 3),
        scored=gating(proof.tier),  # a quarantined scenario's proof is recorded, never gating
        tier=proof.tier,
    )


def proof_detail(proof: ScenarioProof) -> str:
    """The proof in one line: its code, the first reason, how many more, and how it is grounded."""
    if proof.proved:
        grounded = "assumed by the author (no source)" if proof.assumed_by_author else "sources resolve"
        warned = f"; warning: {proof.warnings[0]}" if proof.warnings else ""
        return f"proved: golden passes, every negative control fails, no leak, {grounded}{warned}"
    first = next(defect for defect in proof.defects if defect.code is proof.code)
    more = len(proof.defects) - 1
    return f"{proof.code.value}: {first.message}" + (f" (and {more} more)" if more else "")
