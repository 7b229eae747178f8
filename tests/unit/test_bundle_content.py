"""Cross-file rules: the verdict rule, checks.json vs junit.xml, runtimes, evidence, tape ages, secrets."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from pydantic import ValidationError

from tests.unit.test_bundle_samples import NOW, STARTED, sample_checks, write_sample
from windtunnel._bundle import junit_for
from windtunnel._bundle.content import check_contents, check_secrets, load_contents
from windtunnel._bundle.junit_map import JUnitShapeError, junit_statuses
from windtunnel._bundle.keys import KeyOrigin
from windtunnel._bundle.layout import bundle_files
from windtunnel._bundle.models import CheckRecord, CheckScope, ChecksFile, RunInfo, Stage, Verdict
from windtunnel._bundle.secret_scan import scan_text
from windtunnel._core.vocabulary import CertificationResult, CheckStatus
from windtunnel.errors import VerificationError


def run_checks(root: Path) -> None:
    check_contents(load_contents(root), bundle_files(root), now=NOW)


def failure(root: Path) -> tuple[str, str]:
    with pytest.raises(VerificationError) as caught:
        run_checks(root)
    return caught.value.context["check"], caught.value.message


def record(
    check_id: str, status: CheckStatus, *, runtime: str = "r", scope: CheckScope = CheckScope.RUNTIME
) -> CheckRecord:
    scored = status is not CheckStatus.INFO  # an info record is never scored
    return CheckRecord(
        id=check_id, runtime=runtime, stage=Stage.CONFORMANCE, scope=scope, status=status, scored=scored
    )


def verdict_of(*records: CheckRecord) -> Verdict:
    return Verdict.from_checks(
        ChecksFile(requirement_set="1", checks=list(records)), signing_key=KeyOrigin.DEV
    )


def test_all_passed_is_passed() -> None:
    verdict = verdict_of(
        record("a", CheckStatus.PASSED), record("h", CheckStatus.PASSED, scope=CheckScope.HARNESS)
    )
    assert verdict.result is CertificationResult.PASSED


def test_a_failed_check_fails_its_runtime_only() -> None:
    verdict = verdict_of(record("a", CheckStatus.FAILED), record("b", CheckStatus.PASSED, runtime="other"))
    assert verdict.result is CertificationResult.FAILED
    assert [(r.name, r.result, r.failed_checks) for r in verdict.runtimes] == [
        ("other", CertificationResult.PASSED, []),
        ("r", CertificationResult.FAILED, ["a"]),
    ]


def test_not_measured_is_never_passed() -> None:
    verdict = verdict_of(record("a", CheckStatus.PASSED), record("b", CheckStatus.NOT_MEASURED))
    assert verdict.result is CertificationResult.FAILED
    assert verdict.runtimes[0].failed_checks == ["b"]


def test_a_harness_error_is_not_a_runtime_failure() -> None:
    verdict = verdict_of(record("a", CheckStatus.ERROR), record("b", CheckStatus.PASSED))
    assert verdict.result is CertificationResult.HARNESS_INVALID
    assert verdict.runtimes[0].failed_checks == []
    assert verdict.runtimes[0].harness_errors == ["a"]


def test_a_failed_self_check_is_harness_invalid() -> None:
    verdict = verdict_of(
        record("a", CheckStatus.PASSED), record("p", CheckStatus.FAILED, scope=CheckScope.HARNESS)
    )
    assert verdict.result is CertificationResult.HARNESS_INVALID
    assert verdict.harness_failures == ["p"]


def test_no_runtime_checks_is_not_passed() -> None:
    assert (
        verdict_of(record("h", CheckStatus.PASSED, scope=CheckScope.HARNESS)).result
        is CertificationResult.FAILED
    )


def test_check_ids_are_unique() -> None:
    with pytest.raises(ValidationError, match="repeated: a"):
        ChecksFile(
            requirement_set="1", checks=[record("a", CheckStatus.PASSED), record("a", CheckStatus.FAILED)]
        )


def test_run_json_rejects_bad_digests_and_times(tmp_path: Path) -> None:
    write_sample(tmp_path)
    data = (tmp_path / "run.json").read_text()
    with pytest.raises(ValidationError, match="sha256:<64 lowercase hex>"):
        RunInfo.model_validate_json(data.replace("sha256:abab", "sha256:ABAB"))
    with pytest.raises(ValidationError, match="before started_at"):
        RunInfo.model_validate_json(
            data.replace('"ended_at": "2026-05-01T12:03', '"ended_at": "2026-05-01T11:03')
        )


def test_junit_for_round_trips_every_status() -> None:
    checks = ChecksFile(requirement_set="1", checks=[record(f"c-{s.value}", s) for s in CheckStatus])
    assert junit_statuses(junit_for(checks)) == {f"c-{s.value}": s for s in CheckStatus}


def test_an_info_record_is_skipped_in_junit_and_can_never_be_scored() -> None:
    xml = junit_for(ChecksFile(requirement_set="1", checks=[record("c", CheckStatus.INFO)]))
    assert '<skipped message="info" type="info">' in xml
    with pytest.raises(ValueError, match="never counts as passed or failed"):
        CheckRecord(id="c", runtime="r", stage=Stage.CONFORMANCE, status=CheckStatus.INFO)


def test_junit_with_a_dtd_is_refused() -> None:
    text = '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><testsuites/>'
    with pytest.raises(JUnitShapeError, match="DTD"):
        junit_statuses(text)


def test_junit_with_duplicate_testcases_is_refused() -> None:
    text = '<testsuites><testsuite><testcase name="a"/><testcase name="a"/></testsuite></testsuites>'
    with pytest.raises(JUnitShapeError, match="twice"):
        junit_statuses(text)


def test_the_sample_agrees(tmp_path: Path) -> None:
    write_sample(tmp_path)
    run_checks(tmp_path)


def test_a_status_that_differs_in_junit_is_caught(tmp_path: Path) -> None:
    write_sample(tmp_path)
    failing = sample_checks(failing="reference/canary/reset-isolates")
    (tmp_path / "junit.xml").write_text(junit_for(failing))
    assert failure(tmp_path) == (
        "agreement.junit",
        "check reference/canary/reset-isolates is passed in checks.json but failed in junit.xml",
    )


def test_a_verdict_that_differs_from_the_checks_is_caught(tmp_path: Path) -> None:
    write_sample(tmp_path)
    path = tmp_path / "verdict.json"
    path.write_text(
        path.read_text().replace(
            '"result": "PASSED",\n  "requirement_set"', '"result": "FAILED",\n  "requirement_set"'
        )
    )
    assert failure(tmp_path) == (
        "agreement.verdict",
        "verdict.json says FAILED but the checks in checks.json give PASSED",
    )


def test_per_runtime_details_must_match_too(tmp_path: Path) -> None:
    write_sample(tmp_path)
    path = tmp_path / "verdict.json"
    path.write_text(path.read_text().replace('"failed_checks": []', '"failed_checks": ["x"]', 1))
    assert failure(tmp_path)[0] == "agreement.verdict"


def test_requirement_sets_must_agree(tmp_path: Path) -> None:
    write_sample(tmp_path)
    path = tmp_path / "run.json"
    path.write_text(path.read_text().replace('"requirement_set": "1"', '"requirement_set": "2"'))
    assert failure(tmp_path)[0] == "agreement.requirement_set"


def test_a_certified_runtime_without_checks_is_caught(tmp_path: Path) -> None:
    write_sample(tmp_path)
    path = tmp_path / "run.json"
    path.write_text(
        path.read_text().replace('"runtimes": [', '"runtimes": [{"name": "ghost", "source": null},')
    )
    assert failure(tmp_path) == (
        "agreement.runtimes",
        "run.json certifies ghost but no runtime check judged it",
    )


def test_cited_evidence_must_be_in_the_bundle(tmp_path: Path) -> None:
    write_sample(tmp_path)
    (tmp_path / "traces" / "reference" / "run-1.json").unlink()
    check_id, message = failure(tmp_path)
    assert check_id == "agreement.evidence"
    assert "traces/reference/run-1.json" in message


def test_a_tape_of_29_days_passes_and_of_31_days_fails(tmp_path: Path) -> None:
    write_sample(tmp_path, tape_recorded=STARTED - timedelta(days=29, hours=23))
    run_checks(tmp_path)
    write_sample(tmp_path, tape_recorded=STARTED - timedelta(days=31))
    check_id, message = failure(tmp_path)
    assert check_id == "tapes.age"
    assert message.startswith("tape support_desk/refund was 31 days old when the run started")


def test_tape_age_counts_from_the_run_not_from_now(tmp_path: Path) -> None:
    write_sample(tmp_path, tape_recorded=STARTED - timedelta(days=10))
    check_contents(load_contents(tmp_path), bundle_files(tmp_path), now=NOW + timedelta(days=400))


def test_a_run_that_started_in_the_future_is_caught(tmp_path: Path) -> None:
    write_sample(tmp_path)
    with pytest.raises(VerificationError, match="after now") as caught:
        check_contents(load_contents(tmp_path), bundle_files(tmp_path), now=STARTED - timedelta(hours=1))
    assert caught.value.context["check"] == "run.time"


def test_a_malformed_result_file_names_the_field(tmp_path: Path) -> None:
    write_sample(tmp_path)
    (tmp_path / "checks.json").write_text(
        '{"schema_version": 1, "requirement_set": "1", "checks": [{"id": "a"}]}'
    )
    check_id, message = failure(tmp_path)
    assert check_id == "content.format"
    assert message.startswith("checks.json does not match its schema at checks.0.runtime")


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("key: sk-proj-abcdefghijklmnopqrstuvwx1234", "openai-key"),
        ('"api_key": "sk-abcdefghijklmnopqrstuvwxyz0123456789"', "openai-key"),
        ("aws AKIAIOSFODNN7EXAMPLE here", "aws-access-key"),
        ("-----BEGIN PRIVATE KEY-----", "private-key"),
        ("-----BEGIN OPENSSH PRIVATE KEY-----", "private-key"),
        ("-----BEGIN EC PRIVATE KEY-----", "private-key"),
        ("token ghp_" + "a1" * 18, "github-token"),
        ("github_pat_" + "A" * 30, "github-pat"),
        ("Authorization: Bearer abcdefghij0123456789klmnop", "bearer-token"),  # a token holds a digit
        ("xoxb-1234567890-abcdef", "slack-token"),
        ("AIza" + "B" * 35, "google-api-key"),
    ],
)
def test_known_key_shapes_are_found(line: str, kind: str) -> None:
    assert [f.kind for f in scan_text(f"ok\n{line}\n", path="f")] == [kind]
    assert scan_text(line, path="f")[0].line == 1


@pytest.mark.parametrize(
    "line",
    [
        "task-abcdefghijklmnopqrstuvwxyz",
        "Authorization: Bearer [REDACTED]",
        "a bearer token is redacted at write time",
        "Bearer responsibilities of the account holder",  # prose: no digit, no inner capital
        "-----BEGIN PUBLIC KEY-----",
        "sk-short",
        "AKIA in prose",
        "sha256: 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    ],
)
def test_ordinary_text_is_not_a_secret(line: str) -> None:
    assert scan_text(line, path="f") == []


def test_the_secret_report_never_echoes_the_value(tmp_path: Path) -> None:
    secret = "sk-proj-abcdefghijklmnopqrstuvwx1234"
    (tmp_path / "trace.json").write_text(f'{{"key": "{secret}"}}')
    (tmp_path / "blob.bin").write_bytes(b"\x00" + secret.encode())
    with pytest.raises(VerificationError) as caught:
        check_secrets(tmp_path, ["blob.bin", "trace.json"])
    assert secret not in str(caught.value)
    assert "trace.json line 1: openai-key" in str(caught.value)
