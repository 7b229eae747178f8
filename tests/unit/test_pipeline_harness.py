"""Wind Tunnel's self-checks (windtunnel._pipeline.harness): the reference control, poisons caught
exactly, containers left behind. Checks are real records, the suite the
repository's own."""

from __future__ import annotations

from pathlib import Path

from windtunnel._bundle import ChecksFile, KeyOrigin, Verdict
from windtunnel._bundle.models import CheckRecord, CheckScope, Stage
from windtunnel._conformance.kit import CHECK_IDS
from windtunnel._conformance.suite import Suite
from windtunnel._core.vocabulary import CertificationResult, CheckStatus
from windtunnel._pipeline.context import CertifyOutcome, RuntimeRun
from windtunnel._pipeline.harness import harness_checks, poison_caught, reference_control

REPO = Path(__file__).resolve().parents[2]
SUITE = Suite.load(REPO / "conformance")


def _single_check_poison() -> tuple[str, str]:
    """A poison the suite names exactly one check for (its fault breaks nothing else)."""
    return next((name, checks[0]) for name, checks in SUITE.caught_by.items() if len(checks) == 1)


def record(runtime: str, stage: Stage, name: str, status: CheckStatus = CheckStatus.PASSED) -> CheckRecord:
    return CheckRecord(id=f"{runtime}/{stage.value}/{name}", runtime=runtime, stage=stage, status=status)


def outcome(*runs: RuntimeRun) -> CertifyOutcome:
    return CertifyOutcome(run_id="certify-test", started_at=0.0, runs=list(runs))


def reference(**statuses: CheckStatus) -> RuntimeRun:
    checks = [
        record("reference", Stage.CONFORMANCE, c, statuses.get(c, CheckStatus.PASSED)) for c in CHECK_IDS
    ]
    return RuntimeRun(name="reference", checks=[*checks, record("reference", Stage.TAPES, "support_desk.t")])


def verdict(checks: list[CheckRecord]) -> Verdict:
    return Verdict.from_checks(ChecksFile(requirement_set="1", checks=checks), signing_key=KeyOrigin.DEV)


def test_a_passing_reference_and_nothing_left_behind_pass() -> None:
    done = outcome(reference())
    records = harness_checks(done, SUITE, [])
    assert [(r.id, r.status) for r in records] == [
        ("harness/selftest/reference-control", CheckStatus.PASSED),
        ("harness/publish/no-container-left-behind", CheckStatus.PASSED),
    ]


def test_a_reference_that_fails_or_is_not_measured_fails_the_control() -> None:
    for status in (CheckStatus.FAILED, CheckStatus.NOT_MEASURED, CheckStatus.ERROR):
        control = reference_control(outcome(reference(sampling=status)))
        assert control.status is CheckStatus.FAILED
        assert "reference/conformance/sampling" in control.detail


def test_no_check_of_the_reference_is_excused_not_even_recovery_egress_or_tapes() -> None:
    # Every executor measures these (docs/dagger.md): a NOT_MEASURED on the reference is a harness failure.
    run = reference(recovery=CheckStatus.NOT_MEASURED, egress_closed=CheckStatus.NOT_MEASURED)
    run.checks[-1] = record("reference", Stage.TAPES, "support_desk.t", CheckStatus.NOT_MEASURED)
    control = reference_control(outcome(run))
    assert control.status is CheckStatus.FAILED
    for check in ("conformance/recovery", "conformance/egress_closed", "tapes/support_desk.t"):
        assert f"reference/{check}" in control.detail
    result = verdict([*run.checks, control])
    assert result.result is CertificationResult.HARNESS_INVALID


def poison_run(name: str, failing: str) -> RuntimeRun:
    return RuntimeRun(
        name=name,
        checks=[
            record(
                name, Stage.CONFORMANCE, check, CheckStatus.FAILED if check == failing else CheckStatus.PASSED
            )
            for check in CHECK_IDS
        ],
    )


def test_a_poison_caught_by_exactly_its_check_passes_and_otherwise_fails() -> None:
    name, named = _single_check_poison()
    assert poison_caught(poison_run(name, named), SUITE).status is CheckStatus.PASSED
    not_caught = poison_caught(poison_run(name, failing="none"), SUITE)
    assert not_caught.status is CheckStatus.FAILED and named in not_caught.detail
    other = next(check for check in CHECK_IDS if check != named)
    assert poison_caught(poison_run(name, other), SUITE).status is CheckStatus.FAILED


def test_a_check_is_told_apart_from_a_nested_check_of_the_same_last_name() -> None:
    # sampling and mcp_client/sampling: the poison fails the first and passes the second (it was read as
    # one "sampling", the later record winning, and the poison called not caught).
    assert {"sampling", "mcp_client/sampling"} <= set(CHECK_IDS)
    run = poison_run("reference-poison-ignore_sampling", "sampling")
    caught = poison_caught(run, SUITE)
    assert caught.status is CheckStatus.PASSED, caught.detail


def test_a_poison_is_judged_on_its_runtime_checks_only() -> None:
    name, named = _single_check_poison()
    run = poison_run(name, named)
    crash = CheckRecord(
        id=f"{name}/conformance/harness-error",
        runtime=name,
        stage=Stage.CONFORMANCE,
        scope=CheckScope.HARNESS,
        status=CheckStatus.ERROR,
    )
    run.checks.append(crash)
    assert poison_caught(run, SUITE).status is CheckStatus.PASSED


def test_harness_checks_include_every_poison_and_leftovers() -> None:
    name, named = _single_check_poison()
    records = harness_checks(
        outcome(reference(), poison_run(name, named)), SUITE, ["container c1 (ab) run=r"]
    )
    by_id = {r.id: r for r in records}
    assert by_id[f"harness/conformance/poison-caught/{name}"].status is CheckStatus.PASSED
    left = by_id["harness/publish/no-container-left-behind"]
    assert left.status is CheckStatus.FAILED and "container c1" in left.detail
