"""The proof records: codes, findings and the versioned ScenarioProof written to the proofs file."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from windtunnel._core.tiers import Tier

PROOF_SCHEMA_VERSION: Literal[1] = 1


class ProofCode(StrEnum):
    """What a proof found. `proved` is the only good one."""

    PROVED = "proved"
    ANSWER_LEAKED = "answer_leaked"
    NO_NEGATIVE_CONTROL = "no_negative_control"
    SOURCE_UNRESOLVED = "source_unresolved"
    GOLDEN_FAILED = "golden_failed"
    NEGATIVE_CONTROL_PASSED = "negative_control_passed"
    BROKEN_CHECK = "broken_check"
    VALIDATION_INCOMPLETE = "validation_incomplete"


PRECEDENCE: tuple[ProofCode, ...] = (
    ProofCode.ANSWER_LEAKED,  # docs/selftests.md: a leak wins over every other code, so no code hides it
    ProofCode.NO_NEGATIVE_CONTROL,
    ProofCode.SOURCE_UNRESOLVED,
    ProofCode.GOLDEN_FAILED,
    ProofCode.NEGATIVE_CONTROL_PASSED,
    # missing evidence ranks below every confirmed defect: a confirmed defect is what the author fixes first
    ProofCode.BROKEN_CHECK,
    ProofCode.VALIDATION_INCOMPLETE,
)


def headline(codes: list[ProofCode]) -> ProofCode:
    """The one code a proof is shown under: the highest-ranked defect, or `proved` when there is none."""
    for code in PRECEDENCE:
        if code in codes:
            return code
    return ProofCode.PROVED


class Record(BaseModel):
    """A value of the proofs files: frozen, and refusing a field it does not know."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class VersionedRecord(Record):
    """A record written as a whole (a line of the proofs file, the mutation report): it names its schema."""

    schema_version: Literal[1] = PROOF_SCHEMA_VERSION


LeakRule = Literal["word_run", "target_fact", "expected_value"]


class Leak(Record):
    """Grader-only material found in what the agent sees.

    `excerpt` is the words as they stand in the agent-visible text; `visible_field` names that text
    (`prompt[1]`, `tool:issue_refund.description`); `grader_field` names where the grader-only
    material came from (`reference_cases[refund-the-mug].decisions[2].content`).
    """

    rule: LeakRule
    excerpt: str
    visible_field: str
    grader_field: str

    def sentence(self) -> str:
        what = {
            "word_run": "an 8-word run of grader-only text",
            "target_fact": "a multi-word target fact",
            "expected_value": "a computed expected value",
        }[self.rule]
        return f"{self.visible_field} gives the answer away: {what} {self.excerpt!r} from {self.grader_field}"


class SourceResult(Record):
    """One cited source and whether it resolved; `matched_digest` is `sha256:<hex>` of the text it matched in."""

    field: str
    kind: str
    quote: str
    path: str | None = None
    ref: str | None = None
    resolved: bool
    counts: bool = Field(description="whether it counts as a source (a blank assumption does not)")
    reason: str | None = None
    matched_digest: str | None = None


class Defect(Record):
    """One reason a scenario is not proved, with where it was found."""

    code: ProofCode
    message: str
    field: str | None = None
    grader_field: str | None = None
    excerpt: str | None = None
    error: str | None = Field(default=None, description="the exception, for broken_check")


CaseVerdict = Literal["pass", "golden_failed", "negative_control_passed", "broken_check"]


class CaseProof(Record):
    """One reference case played through the gate: a golden must pass it, a negative control must fail it."""

    case: str
    kind: Literal["golden", "poison"]
    verdict: CaseVerdict
    gate_passed: bool | None
    summary: str


class ScenarioProof(VersionedRecord):
    """The proof of one scenario, one line of the proofs file."""

    record: Literal["scenario_proof"] = "scenario_proof"
    pack: str
    scenario: str
    code: ProofCode
    certification: bool
    defects: list[Defect] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    leaks: list[Leak] = Field(default_factory=list)
    sources: list[SourceResult] = Field(default_factory=list)
    assumed_by_author: bool = Field(
        default=False, description="no source counts: the scenario stands on its author's word"
    )
    cases: list[CaseProof] = Field(default_factory=list)
    started_at: str | None = None
    duration_s: float = 0.0
    tier: Tier = Field(
        default="stable", description="the scenario's run tier; a quarantined scenario's proof never gates"
    )

    @property
    def proved(self) -> bool:
        return self.code is ProofCode.PROVED

    @property
    def codes(self) -> list[ProofCode]:
        return [defect.code for defect in self.defects]


class ProofsHeader(VersionedRecord):
    """The first line of a proofs file: what was asked for."""

    record: Literal["header"] = "header"
    started_at: str
    certification: bool
    selected: int
    deadline: str | None = None
    margin_s: float = 0.0
