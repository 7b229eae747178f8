"""The publish stage (windtunnel._pipeline.publish): result files, run.json, the tape index, the report,
and the signature (with the signer loaded before the run; never when HARNESS_INVALID)."""

from __future__ import annotations

import json
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.unit.pipeline_steps import OTHER, Executor, build, config, crashing, step
from windtunnel._bundle import KeyOrigin, Signer
from windtunnel._bundle.models import CheckRecord, Stage
from windtunnel._bundle.verify import verify_bundle
from windtunnel._core.vocabulary import CertificationResult, CheckStatus
from windtunnel._pipeline.context import StageContext
from windtunnel._pipeline.plan import Step, execute
from windtunnel._pipeline.publish import publish, tape_index

RESULT_FILES = ("run.json", "checks.json", "junit.xml", "verdict.json", "tapes/index.json", "report.html")


def provided_signer() -> Signer:
    pem = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return Signer.from_pem(pem, source="test key")


def test_a_passing_run_is_published_and_signed_with_the_given_signer(tmp_path: Path) -> None:
    outcome = execute((build(), step(Stage.CONFORMANCE)), config(tmp_path), Executor())
    signer = provided_signer()
    published = publish(config(tmp_path), outcome, signer=signer)
    out = tmp_path / "out"
    assert all((out / name).is_file() for name in RESULT_FILES)
    assert published.verdict.result is CertificationResult.PASSED
    assert published.verdict.signing_key is KeyOrigin.PROVIDED
    assert published.seal is not None and published.seal.archive == tmp_path / "out.tar.gz"
    report = verify_bundle(out, signer.public_pem)
    assert report.valid and report.keyid == signer.keyid, report.reason
    run = json.loads((out / "run.json").read_text())
    assert run["run_id"] == outcome.run_id and [r["name"] for r in run["runtimes"]] == ["reference", OTHER]
    checks = json.loads((out / "checks.json").read_text())["checks"]
    assert {c["id"] for c in checks} >= {f"{OTHER}/build/images", "harness/selftest/reference-control"}


def test_a_harness_invalid_run_is_published_but_never_signed(tmp_path: Path) -> None:
    outcome = execute((build(), crashing(Stage.CONFORMANCE)), config(tmp_path), Executor())
    published = publish(config(tmp_path), outcome)
    out = tmp_path / "out"
    assert published.verdict.result is CertificationResult.HARNESS_INVALID and published.seal is None
    assert all((out / name).is_file() for name in RESULT_FILES)
    assert not (out / "attestations").exists() and not (tmp_path / "out.tar.gz").exists()
    assert (
        f"{OTHER}/conformance/harness-error"
        in json.loads((out / "verdict.json").read_text())["harness_failures"]
    )


def test_the_tape_index_lists_the_tapes_the_tapes_stage_recorded(tmp_path: Path) -> None:
    tape = {"name": "support_desk.refund", "recorded_at": "2026-01-02T03:04:05Z", "interactions": 3}

    def tapes(ctx: StageContext) -> list[CheckRecord]:
        evidence = ctx.write_evidence("support_desk.refund", {"tape": tape})
        return [ctx.check("support_desk.refund", CheckStatus.PASSED, "replayed", evidence=[evidence])]

    execute((build(), Step(Stage.TAPES, tapes)), config(tmp_path), Executor())
    index = tape_index(config(tmp_path))
    assert [(t.name, t.interactions) for t in index.tapes] == [("support_desk.refund", 3)]
