"""The suite re-prove: every selected scenario proved in turn, each proof written as it is made.

A crash on one scenario is recorded as `broken_check` for it and proving goes on. With a deadline,
a scenario is started only while the time left, minus a safety margin, covers an estimate of one
scenario (the longest so far); once it does not, every scenario not yet proved is written
`validation_incomplete`. Exit codes are those of selftest: 0 every scenario proved, 1 any defect
(`validation_incomplete` included: not measured is never passed), 2 nothing selected.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from windtunnel._core.tiers import QUARANTINED, tier_of
from windtunnel._core.vocabulary import judged_exit
from windtunnel._packs.selection import Selected
from windtunnel._prove.check import Clock, broken, prove_scenario
from windtunnel._prove.models import Defect, ProofCode, ProofsHeader, ScenarioProof
from windtunnel._prove.proofs_file import ProofsWriter
from windtunnel._prove.seam import CaseRunner
from windtunnel.errors import UsageError

DEFAULT_MARGIN_S = 300.0
"""docs/selftests.md: 300 s are kept between the last scenario started and the job's deadline."""


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class ProveSummary:
    proofs: tuple[ScenarioProof, ...]
    proofs_path: Path

    def by_code(self) -> dict[str, int]:
        return dict(Counter(proof.code.value for proof in self.proofs))

    @property
    def exit_code(self) -> int:
        return prove_exit_code(self)


def prove_exit_code(summary: ProveSummary) -> int:
    """0 when every selected gating scenario is proved, 1 when any is not, 2 when nothing was selected.
    A quarantined scenario's proof is written and reported, and never changes it."""
    gating = [proof.proved for proof in summary.proofs if proof.tier != QUARANTINED]
    return judged_exit(gating, quarantined=len(summary.proofs) - len(gating))


@dataclass
class _Budget:
    deadline: datetime | None
    clock: Clock
    margin_s: float
    durations: list[float] = field(default_factory=list)
    exhausted: str | None = None

    def refusal(self) -> str | None:
        """Why the next scenario must not start, or None when there is time for it."""
        if self.deadline is None or self.exhausted is not None:
            return self.exhausted
        left = (self.deadline - self.clock()).total_seconds()
        estimate = max(self.durations, default=0.0)
        if left - self.margin_s < estimate:
            self.exhausted = (
                f"not proved: out of time. {left:.0f} s were left before the deadline "
                f"{self.deadline.isoformat()}, which does not cover the {self.margin_s:.0f} s safety margin "
                f"plus {estimate:.0f} s (the longest scenario so far)"
            )
        return self.exhausted


def prove_suite(
    items: Sequence[Selected],
    *,
    run_case: CaseRunner,
    proofs_path: Path,
    deadline: datetime | None = None,
    clock: Clock = utc_now,
    margin_s: float = DEFAULT_MARGIN_S,
    certification: bool,
) -> ProveSummary:
    """Prove every item, writing the proofs file as it goes; see the module docstring."""
    if deadline is not None and deadline.tzinfo is None:
        raise UsageError(
            f"the deadline {deadline.isoformat()} has no time zone",
            hint="give the deadline with an offset, e.g. 2026-12-01T18:00:00+00:00",
            field="deadline",
        )
    budget = _Budget(deadline, clock, margin_s)
    proofs: list[ScenarioProof] = []
    with ProofsWriter(proofs_path) as writer:
        writer.write(
            ProofsHeader(
                started_at=clock().isoformat(),
                certification=certification,
                selected=len(items),
                deadline=deadline.isoformat() if deadline else None,
                margin_s=margin_s,
            )
        )
        for item in items:
            refusal = budget.refusal()
            if refusal is not None:
                proof = _incomplete(item, refusal, certification)
            else:
                started = clock()
                proof = _prove_guarded(item, run_case, certification, clock)
                budget.durations.append((clock() - started).total_seconds())
            proof = proof.model_copy(update={"tier": tier_of(item.scenario)})
            writer.write(proof)
            proofs.append(proof)
    return ProveSummary(tuple(proofs), proofs_path)


def _prove_guarded(item: Selected, run_case: CaseRunner, certification: bool, clock: Clock) -> ScenarioProof:
    try:
        return prove_scenario(item.pack, item.scenario, run_case, certification=certification, clock=clock)
    except Exception as exc:  # noqa: BLE001 - one scenario's crash is recorded; the suite goes on
        return ScenarioProof(
            pack=item.pack.name,
            scenario=item.scenario.name,
            code=ProofCode.BROKEN_CHECK,
            certification=certification,
            defects=[broken("proof", exc)],
        )


def _incomplete(item: Selected, reason: str, certification: bool) -> ScenarioProof:
    return ScenarioProof(
        pack=item.pack.name,
        scenario=item.scenario.name,
        code=ProofCode.VALIDATION_INCOMPLETE,
        certification=certification,
        defects=[Defect(code=ProofCode.VALIDATION_INCOMPLETE, message=reason)],
    )
