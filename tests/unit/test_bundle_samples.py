"""A filled bundle directory as the pipeline would write it, for the bundle tests (and its own sanity tests)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from windtunnel._bundle import (
    CheckRecord,
    CheckScope,
    ChecksFile,
    HostInfo,
    KeyOrigin,
    RunInfo,
    RuntimeInfo,
    Stage,
    TapeEntry,
    TapeIndex,
    Verdict,
    junit_for,
)
from windtunnel._core.vocabulary import CertificationResult, CheckStatus

STARTED = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
NOW = STARTED + timedelta(hours=2)
IMAGE = "sha256:" + "ab" * 32
GATEWAY_IMAGE = "sha256:" + "cd" * 32


def sample_checks(*, failing: str | None = None) -> ChecksFile:
    """Checks of one runtime and the harness; `failing` names a runtime check to mark failed."""
    specs = [
        ("reference/build/image", "reference", Stage.BUILD, CheckScope.RUNTIME),
        ("reference/conformance/tool-calls-surface", "reference", Stage.CONFORMANCE, CheckScope.RUNTIME),
        ("reference/canary/reset-isolates", "reference", Stage.CANARY, CheckScope.RUNTIME),
        ("reference/tapes/replay", "reference", Stage.TAPES, CheckScope.RUNTIME),
        ("harness/selftest/golden-passes", "reference", Stage.SELFTEST, CheckScope.HARNESS),
        ("harness/selftest/poison-caught", "poison-echo", Stage.SELFTEST, CheckScope.HARNESS),
    ]
    checks = [
        CheckRecord(
            id=check_id,
            runtime=runtime,
            stage=stage,
            scope=scope,
            status=CheckStatus.FAILED if check_id == failing else CheckStatus.PASSED,
            detail="tool call missing from transcript" if check_id == failing else "ok",
            evidence=["traces/reference/run-1.json"] if stage is Stage.CONFORMANCE else [],
        )
        for check_id, runtime, stage, scope in specs
    ]
    return ChecksFile(requirement_set="1", checks=checks)


def write_sample(
    root: Path,
    *,
    origin: KeyOrigin = KeyOrigin.PROVIDED,
    checks: ChecksFile | None = None,
    tape_recorded: datetime | None = None,
) -> Path:
    """Write run.json, checks.json, junit.xml, verdict.json, traces/, tapes/index.json and report.html."""
    checks = checks or sample_checks()
    run = RunInfo(
        run_id="run-0001",
        tool_version="0.10.0",
        suite_version="1.0",
        requirement_set="1",
        git_commit="0123456789abcdef0123456789abcdef01234567",
        host=HostInfo(platform="linux-x86_64", python="3.11.7", engine="docker 20.10"),
        started_at=STARTED,
        ended_at=STARTED + timedelta(minutes=3),
        runtimes=[RuntimeInfo(name="reference", source="runtimes/reference")],
        images={"reference": IMAGE, "gateway": GATEWAY_IMAGE},
    )
    tapes = TapeIndex(
        tapes=[
            TapeEntry(
                name="support_desk/refund",
                path="scenarios/support_desk/tapes/refund.jsonl",
                interactions=3,
                recorded_at=tape_recorded or STARTED - timedelta(days=10),
            )
        ]
    )
    files = {
        "run.json": run.model_dump_json(indent=2),
        "checks.json": checks.model_dump_json(indent=2),
        "junit.xml": junit_for(checks),
        "verdict.json": Verdict.from_checks(checks, signing_key=origin).model_dump_json(indent=2),
        "tapes/index.json": tapes.model_dump_json(indent=2),
        "traces/reference/run-1.json": json.dumps(
            {"schema_version": 1, "turns": [{"user": "refund order 7"}]}
        ),
        "report.html": "<!doctype html><title>Wind Tunnel</title><p>PASSED</p>\n",
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_sample_is_a_passing_certification(tmp_path: Path) -> None:
    write_sample(tmp_path)
    verdict = Verdict.model_validate_json((tmp_path / "verdict.json").read_text())
    assert verdict.result is CertificationResult.PASSED
    assert [r.name for r in verdict.runtimes] == ["reference"]


def test_sample_with_a_failing_check_is_failed(tmp_path: Path) -> None:
    write_sample(tmp_path, checks=sample_checks(failing="reference/canary/reset-isolates"))
    verdict = Verdict.model_validate_json((tmp_path / "verdict.json").read_text())
    assert verdict.result is CertificationResult.FAILED
    assert verdict.runtimes[0].failed_checks == ["reference/canary/reset-isolates"]
