"""seal_bundle: what it writes, what it signs, and what it refuses to sign."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.unit.test_bundle_samples import GATEWAY_IMAGE, IMAGE, NOW, sample_checks, write_sample
from windtunnel._bundle import BundleSealError, KeyOrigin, Signer, seal_bundle, verify_bundle
from windtunnel._bundle.canonical import canonical_json, sha256_hex
from windtunnel._bundle.models import CheckRecord, CheckScope, ChecksFile, Stage
from windtunnel._bundle.statement import PREDICATE_TYPE, STATEMENT_TYPE
from windtunnel._core.vocabulary import CheckStatus


def bundle_dir(tmp_path: Path, **options: Any) -> Path:
    root = tmp_path / "out"
    root.mkdir()
    write_sample(root, **options)
    return root


def signed_statement(root: Path) -> dict[str, Any]:
    envelope = json.loads((root / "attestations/certification.intoto.jsonl").read_text())
    loaded: dict[str, Any] = json.loads(base64.b64decode(envelope["payload"]))
    return loaded


def test_seal_writes_the_documented_layout(tmp_path: Path) -> None:
    root = bundle_dir(tmp_path, origin=KeyOrigin.DEV)
    result = seal_bundle(root, signer=Signer.ephemeral(), now=NOW)
    for name in (
        "MANIFEST.sha256",
        "VERIFY.md",
        "keys/signer.pub.pem",
        "attestations/certification.intoto.jsonl",
        "attestations/certification.sigstore.json",
    ):
        assert (root / name).is_file(), name
    assert result.archive == tmp_path / "out.tar.gz"
    assert result.archive.is_file()
    assert result.dev_key
    assert result.result.value == "PASSED"


def test_subjects_cover_every_file_but_the_attestations_and_every_image(tmp_path: Path) -> None:
    root = bundle_dir(tmp_path)
    seal_bundle(root, signer=Signer.from_pem(_pkcs8()), now=NOW)
    stmt = signed_statement(root)
    assert stmt["_type"] == STATEMENT_TYPE
    assert stmt["predicateType"] == PREDICATE_TYPE
    subjects = {s["name"]: s["digest"]["sha256"] for s in stmt["subject"]}
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    expected_files = [f for f in files if not f.startswith("attestations/")]
    assert sorted(n for n in subjects if not n.startswith("image:")) == expected_files
    for name in expected_files:
        assert subjects[name] == sha256_hex((root / name).read_bytes())
    assert subjects["image:reference"] == IMAGE.removeprefix("sha256:")
    assert subjects["image:gateway"] == GATEWAY_IMAGE.removeprefix("sha256:")
    assert [s["name"] for s in stmt["subject"]] == sorted(subjects)


def test_the_payload_is_rfc8785_canonical(tmp_path: Path) -> None:
    root = bundle_dir(tmp_path)
    seal_bundle(root, signer=Signer.from_pem(_pkcs8()), now=NOW)
    envelope = json.loads((root / "attestations/certification.intoto.jsonl").read_text())
    payload = base64.b64decode(envelope["payload"])
    assert canonical_json(json.loads(payload)) == payload


def test_the_predicate_carries_the_verdict_and_the_signer(tmp_path: Path) -> None:
    root = bundle_dir(tmp_path, origin=KeyOrigin.DEV)
    signer = Signer.ephemeral()
    seal_bundle(root, signer=signer, now=NOW)
    predicate = signed_statement(root)["predicate"]
    assert predicate["verdict"] == json.loads((root / "verdict.json").read_text())
    assert predicate["signer"] == {"keyid": signer.keyid, "origin": "unverified dev key"}
    assert predicate["run"]["run_id"] == "run-0001"
    assert "Unverified dev key" in (root / "VERIFY.md").read_text()


def test_the_sigstore_bundle_is_v03_with_the_same_signature(tmp_path: Path) -> None:
    root = bundle_dir(tmp_path)
    signer = Signer.from_pem(_pkcs8())
    seal_bundle(root, signer=signer, now=NOW)
    envelope = json.loads((root / "attestations/certification.intoto.jsonl").read_text())
    bundle = json.loads((root / "attestations/certification.sigstore.json").read_text())
    assert bundle["mediaType"] == "application/vnd.dev.sigstore.bundle.v0.3+json"
    assert bundle["verificationMaterial"] == {"publicKey": {"hint": signer.keyid}, "tlogEntries": []}
    assert bundle["dsseEnvelope"]["payload"] == envelope["payload"]
    assert bundle["dsseEnvelope"]["payloadType"] == envelope["payloadType"] == "application/vnd.in-toto+json"
    assert bundle["dsseEnvelope"]["signatures"] == [{"sig": envelope["signatures"][0]["sig"]}]
    assert envelope["signatures"][0]["keyid"] == signer.keyid


@pytest.mark.skipif(shutil.which("sha256sum") is None, reason="sha256sum not installed")
def test_the_manifest_checks_with_sha256sum(tmp_path: Path) -> None:
    root = bundle_dir(tmp_path)
    seal_bundle(root, signer=Signer.from_pem(_pkcs8()), now=NOW)
    done = subprocess.run(
        ["sha256sum", "--strict", "-c", "MANIFEST.sha256"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    listed = [line.split("  ", 1)[1] for line in (root / "MANIFEST.sha256").read_text().splitlines()]
    assert listed == sorted(listed)
    assert "report.html" in listed
    assert "MANIFEST.sha256" not in listed
    assert not any(name.startswith("attestations/") for name in listed)


def test_the_private_key_never_lands_in_the_bundle(tmp_path: Path) -> None:
    root = bundle_dir(tmp_path)
    pem = _pkcs8()
    seal_bundle(root, signer=Signer.from_pem(pem), now=NOW)
    body = pem.decode().splitlines()[1]
    for path in [*root.rglob("*"), tmp_path / "out.tar.gz"]:
        if path.is_file():
            data = path.read_bytes()
            assert b"PRIVATE KEY" not in data, path
            assert body.encode() not in data, path


def test_a_planted_private_key_is_refused(tmp_path: Path) -> None:
    root = bundle_dir(tmp_path)
    (root / "keys").mkdir()
    (root / "keys" / "signer.pem").write_bytes(_pkcs8())
    with pytest.raises(BundleSealError, match=r"keys/signer\.pem line 1: private-key"):
        seal_bundle(root, signer=Signer.from_pem(_pkcs8()), now=NOW)
    assert not (root / "attestations").exists()


def test_a_harness_invalid_verdict_is_never_signed(tmp_path: Path) -> None:
    checks = sample_checks()
    broken = [
        c.model_copy(update={"status": CheckStatus.FAILED}) if c.id == "harness/selftest/poison-caught" else c
        for c in checks.checks
    ]
    root = bundle_dir(tmp_path, checks=ChecksFile(requirement_set="1", checks=broken))
    with pytest.raises(BundleSealError, match="HARNESS_INVALID") as caught:
        seal_bundle(root, signer=Signer.from_pem(_pkcs8()), now=NOW)
    assert "harness/selftest/poison-caught" in str(caught.value)
    assert not (root / "attestations").exists()


def test_a_failed_verdict_is_signed(tmp_path: Path) -> None:
    root = bundle_dir(tmp_path, checks=sample_checks(failing="reference/canary/reset-isolates"))
    signer = Signer.from_pem(_pkcs8())
    assert seal_bundle(root, signer=signer, now=NOW).result.value == "FAILED"
    assert verify_bundle(root, signer.public_pem, now=NOW).valid


def test_the_verdict_must_name_the_key_origin(tmp_path: Path) -> None:
    root = bundle_dir(tmp_path, origin=KeyOrigin.PROVIDED)
    with pytest.raises(BundleSealError, match="unverified dev key"):
        seal_bundle(root, signer=Signer.ephemeral(), now=NOW)


def test_missing_result_files_are_refused(tmp_path: Path) -> None:
    root = bundle_dir(tmp_path)
    (root / "junit.xml").unlink()
    with pytest.raises(BundleSealError, match=r"junit\.xml is missing"):
        seal_bundle(root, signer=Signer.from_pem(_pkcs8()), now=NOW)


def test_the_archive_may_not_be_inside_the_bundle(tmp_path: Path) -> None:
    root = bundle_dir(tmp_path)
    with pytest.raises(BundleSealError, match="inside the bundle"):
        seal_bundle(root, signer=Signer.from_pem(_pkcs8()), archive=root / "b.tar.gz", now=NOW)


def test_too_many_subjects_are_refused(tmp_path: Path) -> None:
    root = bundle_dir(tmp_path)
    for index in range(1030):
        (root / "traces" / f"t{index:04}.json").write_text("{}")
    with pytest.raises(BundleSealError, match="at most 1024"):
        seal_bundle(root, signer=Signer.from_pem(_pkcs8()), now=NOW)


def test_resealing_replaces_the_old_signature(tmp_path: Path) -> None:
    root = bundle_dir(tmp_path)
    first, second = Signer.from_pem(_pkcs8()), Signer.from_pem(_pkcs8())
    seal_bundle(root, signer=first, now=NOW)
    (root / "traces" / "late.json").write_text("{}")
    seal_bundle(root, signer=second, now=NOW)
    assert verify_bundle(root, second.public_pem, now=NOW).valid
    assert verify_bundle(root, first.public_pem, now=NOW).check == "signature.valid"


def test_an_unscored_observation_does_not_change_the_verdict(tmp_path: Path) -> None:
    checks = sample_checks()
    observation = CheckRecord(
        id="reference/conformance/latency",
        runtime="reference",
        stage=Stage.CONFORMANCE,
        scope=CheckScope.RUNTIME,
        scored=False,
        status=CheckStatus.FAILED,
    )
    root = bundle_dir(tmp_path, checks=ChecksFile(requirement_set="1", checks=[*checks.checks, observation]))
    assert seal_bundle(root, signer=Signer.from_pem(_pkcs8()), now=NOW).result.value == "PASSED"


def _pkcs8() -> bytes:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    return ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
