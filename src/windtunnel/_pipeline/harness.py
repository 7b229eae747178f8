"""Wind Tunnel's own self-checks at the end of a run: the reference control, poisons caught, nothing left."""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence

from windtunnel._bundle.models import CheckRecord, CheckScope, Stage
from windtunnel._conformance.suite import Suite
from windtunnel._core.vocabulary import CheckStatus
from windtunnel._pipeline.config import REFERENCE
from windtunnel._pipeline.context import CertifyOutcome, RuntimeRun, safe


def harness_checks(
    outcome: CertifyOutcome, suite: Suite, leftovers: list[str], *, unmeasurable: Sequence[str] = ()
) -> list[CheckRecord]:
    """The reference control passes, every poison is caught exactly, no container is left behind. Any
    of them failing makes the run HARNESS_INVALID (nothing is signed). `unmeasurable` are the executor's
    `<stage>/<check>` patterns it cannot measure on any runtime (see Executor.unmeasurable)."""
    records = [reference_control(outcome, unmeasurable)]
    records += [poison_caught(run, suite) for run in outcome.runs if suite.is_poison(run.name)]
    records.append(
        CheckRecord(
            id="harness/publish/no-container-left-behind",
            runtime=REFERENCE,
            stage=Stage.PUBLISH,
            scope=CheckScope.HARNESS,
            status=CheckStatus.FAILED if leftovers else CheckStatus.PASSED,
            detail=("left behind: " + ", ".join(leftovers))
            if leftovers
            else "every container and network was removed",
        )
    )
    return records


def reference_control(outcome: CertifyOutcome, unmeasurable: Sequence[str] = ()) -> CheckRecord:
    """The known-good reference passes every scored check, except those the executor cannot measure at
    all: NOT_MEASURED there for every runtime, they keep every runtime from being certified instead of
    blaming the harness (a HARNESS_INVALID would say Wind Tunnel is broken, which it is not)."""
    reference = next(run for run in outcome.runs if run.name == REFERENCE)
    own = [c for c in reference.checks if c.scored and c.scope is CheckScope.RUNTIME]
    excused = [c.id for c in own if c.status is CheckStatus.NOT_MEASURED and _matches(c, unmeasurable)]
    bad = [c.id for c in own if c.status is not CheckStatus.PASSED and c.id not in excused]
    if bad:
        detail = "the known-good reference runtime did not pass: " + ", ".join(bad)
    else:
        detail = "the known-good reference runtime passed every scored check"
    if excused:
        detail += "; this executor cannot measure (so no runtime is certified on them): " + ", ".join(excused)
    return CheckRecord(
        id="harness/selftest/reference-control",
        runtime=REFERENCE,
        stage=Stage.SELFTEST,
        scope=CheckScope.HARNESS,
        status=CheckStatus.FAILED if bad else CheckStatus.PASSED,
        detail=detail,
    )


def _matches(check: CheckRecord, patterns: Sequence[str]) -> bool:
    name = check.id.split("/", 1)[-1]  # <stage>/<check>, without the runtime
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def poison_caught(run: RuntimeRun, suite: Suite) -> CheckRecord:
    """A poison in the certify set must fail exactly its named conformance check."""
    named = ", ".join(suite.caught_by.get(run.name, (suite.poisons[run.name],)))
    by_check = {
        c.id.rsplit("/", 1)[-1]: c.status
        for c in run.checks
        if c.stage is Stage.CONFORMANCE and c.scope is CheckScope.RUNTIME
    }
    judged = {check: suite.judge(run.name, check, status) for check, status in by_check.items()}
    wrong = [f"{check}: {j.message}" for check, j in judged.items() if not j.ok]
    return CheckRecord(
        id=f"harness/conformance/poison-caught/{safe(run.name)}",
        runtime=run.name,
        stage=Stage.CONFORMANCE,
        scope=CheckScope.HARNESS,
        status=CheckStatus.FAILED if wrong or not judged else CheckStatus.PASSED,
        detail="; ".join(wrong) if wrong else f"caught by exactly {named}",
    )
