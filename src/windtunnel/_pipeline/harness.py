"""Wind Tunnel's own self-checks at the end of a run: the reference control, poisons caught, nothing left."""

from __future__ import annotations

from windtunnel._bundle.models import CheckRecord, CheckScope, Stage
from windtunnel._conformance.suite import Suite
from windtunnel._core.vocabulary import CheckStatus
from windtunnel._pipeline.config import REFERENCE
from windtunnel._pipeline.context import CertifyOutcome, RuntimeRun, safe


def harness_checks(outcome: CertifyOutcome, suite: Suite, leftovers: list[str]) -> list[CheckRecord]:
    """The reference control passes, every poison is caught exactly, no container is left behind. Any
    of them failing makes the run HARNESS_INVALID (nothing is signed)."""
    records = [reference_control(outcome)]
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


def reference_control(outcome: CertifyOutcome) -> CheckRecord:
    """The known-good reference passes every scored check: one NOT_MEASURED is a harness failure too, since
    the executor measures every check the reference's abilities allow."""
    reference = next(run for run in outcome.runs if run.name == REFERENCE)
    own = [c for c in reference.checks if c.scored and c.scope is CheckScope.RUNTIME]
    bad = [c.id for c in own if c.status is not CheckStatus.PASSED]
    if bad:
        detail = "the known-good reference runtime did not pass: " + ", ".join(bad)
    else:
        detail = "the known-good reference runtime passed every scored check"
    return CheckRecord(
        id="harness/selftest/reference-control",
        runtime=REFERENCE,
        stage=Stage.SELFTEST,
        scope=CheckScope.HARNESS,
        status=CheckStatus.FAILED if bad else CheckStatus.PASSED,
        detail=detail,
    )


def poison_caught(run: RuntimeRun, suite: Suite) -> CheckRecord:
    """A poison in the certify set must fail exactly its named conformance check."""
    named = ", ".join(suite.caught_by.get(run.name, (suite.poisons[run.name],)))
    # The kit's id after "<runtime>/conformance/": check ids nest ("mcp_client/sampling" is not "sampling").
    prefix = f"{safe(run.name)}/{Stage.CONFORMANCE.value}/"
    by_check = {
        c.id.removeprefix(prefix): c.status
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
