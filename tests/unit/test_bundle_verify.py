"""verify_bundle: a sealed bundle verifies; every tampering is rejected with its own check and reason."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.unit.test_bundle_samples import NOW, write_sample
from windtunnel._bundle import KeyOrigin, Signer, seal_bundle, verify_bundle
from windtunnel._bundle.canonical import canonical_json, sha256_hex
from windtunnel._bundle.dsse import IN_TOTO_PAYLOAD_TYPE, sign_envelope
from windtunnel._bundle.errors import SigningKeyError
from windtunnel._bundle.sigstore import sigstore_bundle
from windtunnel._core.vocabulary import CertificationResult

ATTESTATION = "attestations/certification.intoto.jsonl"
SIGSTORE = "attestations/certification.sigstore.json"


def provided_signer() -> Signer:
    pem = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return Signer.from_pem(pem)


@pytest.fixture
def signer() -> Signer:
    return provided_signer()


@pytest.fixture
def sealed(tmp_path: Path, signer: Signer) -> Path:
    root = tmp_path / "bundle"
    root.mkdir()
    write_sample(root)
    seal_bundle(root, signer=signer, now=NOW)
    return root


def envelope(root: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((root / ATTESTATION).read_text())
    return loaded


def write_envelope(root: Path, data: dict[str, Any]) -> None:
    (root / ATTESTATION).write_text(json.dumps(data) + "\n")


def statement(root: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(base64.b64decode(envelope(root)["payload"]))
    return loaded


def resign(root: Path, signer: Signer, edit: Callable[[dict[str, Any]], None]) -> None:
    """What an attacker holding the key could do: edit the statement and sign it again."""
    data = statement(root)
    edit(data)
    signed = sign_envelope(IN_TOTO_PAYLOAD_TYPE, canonical_json(data), signer.sign, signer.keyid)
    write_envelope(root, signed.to_dict())
    (root / SIGSTORE).write_text(json.dumps(sigstore_bundle(signed, keyid=signer.keyid)))


def check(root: Path, signer: Signer) -> tuple[str | None, str]:
    report = verify_bundle(root, signer.public_pem, now=NOW)
    assert report.valid is (report.check is None)
    return report.check, report.reason or ""


def test_a_sealed_bundle_verifies(sealed: Path, signer: Signer) -> None:
    report = verify_bundle(sealed, signer.public_pem, now=NOW)
    assert report.valid, report.reason
    assert report.keyid == signer.keyid
    assert report.key_origin is KeyOrigin.PROVIDED
    assert report.result is CertificationResult.PASSED
    assert report.passed[:3] == ("signature.count", "signature.payload_type", "signature.valid")
    assert report.passed[-2:] == ("secrets", "privacy")


def test_the_archive_verifies_too(sealed: Path, signer: Signer) -> None:
    report = verify_bundle(sealed.with_name("bundle.tar.gz"), signer.public_pem, now=NOW)
    assert report.valid, report.reason


def test_a_flipped_payload_byte_breaks_the_signature(sealed: Path, signer: Signer) -> None:
    data = envelope(sealed)
    payload = bytearray(base64.b64decode(data["payload"]))
    payload[40] ^= 0x01
    data["payload"] = base64.b64encode(bytes(payload)).decode()
    write_envelope(sealed, data)
    assert check(sealed, signer)[0] == "signature.valid"
    assert "does not verify with key" in check(sealed, signer)[1]


def test_the_wrong_key_is_rejected(sealed: Path) -> None:
    other = Signer.ephemeral()
    report = verify_bundle(sealed, other.public_pem, now=NOW)
    assert (report.check, report.valid) == ("signature.valid", False)
    assert other.keyid in (report.reason or "")


def test_a_second_signature_is_rejected(sealed: Path, signer: Signer) -> None:
    data = envelope(sealed)
    data["signatures"].append(dict(data["signatures"][0]))
    write_envelope(sealed, data)
    code, reason = check(sealed, signer)
    assert code == "signature.count"
    assert "2 signatures, expected exactly one" in reason


def test_a_second_envelope_line_is_rejected(sealed: Path, signer: Signer) -> None:
    line = (sealed / ATTESTATION).read_text()
    (sealed / ATTESTATION).write_text(line + line)
    assert check(sealed, signer) == (
        "signature.count",
        f"{ATTESTATION} holds 2 envelopes, expected exactly one",
    )


def test_a_changed_payload_type_is_rejected(sealed: Path, signer: Signer) -> None:
    data = envelope(sealed)
    data["payloadType"] = "application/json"
    write_envelope(sealed, data)
    code, reason = check(sealed, signer)
    assert code == "signature.payload_type"
    assert "'application/json'" in reason


def test_a_changed_subject_digest_in_the_payload_breaks_the_signature(sealed: Path, signer: Signer) -> None:
    data = envelope(sealed)
    stmt = statement(sealed)
    stmt["subject"][0]["digest"]["sha256"] = "0" * 64
    data["payload"] = base64.b64encode(canonical_json(stmt)).decode()
    write_envelope(sealed, data)
    assert check(sealed, signer)[0] == "signature.valid"


def test_a_resigned_wrong_subject_digest_is_caught_against_the_file(sealed: Path, signer: Signer) -> None:
    def edit(stmt: dict[str, Any]) -> None:
        for subject in stmt["subject"]:
            if subject["name"] == "checks.json":
                subject["digest"]["sha256"] = "0" * 64

    resign(sealed, signer, edit)
    code, reason = check(sealed, signer)
    assert code == "subjects.digest"
    assert reason.startswith("checks.json has sha256 ")


def test_a_changed_file_is_caught(sealed: Path, signer: Signer) -> None:
    (sealed / "report.html").write_text("<p>PASSED, honest</p>")
    code, reason = check(sealed, signer)
    assert code == "subjects.digest"
    assert "report.html" in reason


def test_an_added_file_is_rejected(sealed: Path, signer: Signer) -> None:
    (sealed / "traces" / "extra.json").write_text("{}")
    assert check(sealed, signer) == (
        "subjects.unlisted",
        "traces/extra.json is in the bundle but is not a signed subject",
    )


def test_an_added_file_under_attestations_is_rejected(sealed: Path, signer: Signer) -> None:
    (sealed / "attestations" / "other.jsonl").write_text("{}")
    assert check(sealed, signer)[0] == "subjects.unlisted"


def test_a_removed_file_is_rejected(sealed: Path, signer: Signer) -> None:
    (sealed / "traces" / "reference" / "run-1.json").unlink()
    assert check(sealed, signer) == (
        "subjects.missing",
        "traces/reference/run-1.json is a signed subject but the file is missing from the bundle",
    )


def test_a_removed_signature_file_is_unsigned(sealed: Path, signer: Signer) -> None:
    (sealed / ATTESTATION).unlink()
    code, reason = check(sealed, signer)
    assert code == "signature.count"
    assert "unsigned" in reason


def test_a_symlink_is_rejected(sealed: Path, signer: Signer) -> None:
    (sealed / "link.json").symlink_to(sealed / "run.json")
    assert check(sealed, signer)[0] == "bundle.layout"


def test_a_sigstore_bundle_with_another_envelope_is_rejected(sealed: Path, signer: Signer) -> None:
    data = json.loads((sealed / SIGSTORE).read_text())
    data["dsseEnvelope"]["payload"] = base64.b64encode(b"{}").decode()
    (sealed / SIGSTORE).write_text(json.dumps(data))
    assert check(sealed, signer) == (
        "sigstore.bundle",
        f"{SIGSTORE} carries a different envelope than the verified attestation",
    )


def test_a_sigstore_bundle_with_tlog_entries_or_another_hint_is_rejected(
    sealed: Path, signer: Signer
) -> None:
    original = (sealed / SIGSTORE).read_text()
    data = json.loads(original)
    data["verificationMaterial"]["publicKey"]["hint"] = "ff" * 32
    (sealed / SIGSTORE).write_text(json.dumps(data))
    assert "publicKey.hint" in check(sealed, signer)[1]
    data = json.loads(original)
    data["verificationMaterial"]["tlogEntries"] = [{}]
    (sealed / SIGSTORE).write_text(json.dumps(data))
    assert "transparency log entries" in check(sealed, signer)[1]


def test_a_manifest_that_disagrees_is_rejected(sealed: Path, signer: Signer) -> None:
    manifest = sealed / "MANIFEST.sha256"

    def edit(stmt: dict[str, Any]) -> None:
        # Re-signed so the subject digest matches the edited MANIFEST: only the manifest check can object.
        for subject in stmt["subject"]:
            if subject["name"] == "MANIFEST.sha256":
                subject["digest"]["sha256"] = sha256_hex(manifest.read_bytes())

    lines = manifest.read_text().splitlines(keepends=True)
    manifest.write_text("".join(line for line in lines if "report.html" not in line))
    resign(sealed, signer, edit)
    assert check(sealed, signer) == (
        "manifest",
        "MANIFEST.sha256 disagrees with the signed subjects at report.html",
    )


def test_resigned_content_that_disagrees_is_rejected(sealed: Path, signer: Signer) -> None:
    # Someone with the key marks a check passed in junit.xml only and re-signs: agreement still fails.
    junit = sealed / "junit.xml"
    junit.write_text(junit.read_text().replace('name="reference/canary/reset-isolates"', 'name="renamed"'))
    _resign_with_fresh_digests(sealed, signer)
    code, reason = check(sealed, signer)
    assert code == "agreement.junit"
    assert "reference/canary/reset-isolates" in reason


def test_a_resigned_predicate_that_differs_from_the_verdict_is_rejected(sealed: Path, signer: Signer) -> None:
    resign(sealed, signer, lambda stmt: stmt["predicate"]["verdict"].update(result="FAILED"))
    assert check(sealed, signer) == (
        "agreement.predicate",
        "the signed predicate's verdict differs from verdict.json",
    )


def test_resigned_image_subjects_must_match_run_json(sealed: Path, signer: Signer) -> None:
    def edit(stmt: dict[str, Any]) -> None:
        stmt["subject"] = [s for s in stmt["subject"] if s["name"] != "image:gateway"]

    resign(sealed, signer, edit)
    assert check(sealed, signer)[0] == "agreement.images"


def test_a_resigned_secret_is_found(sealed: Path, signer: Signer) -> None:
    trace = sealed / "traces" / "reference" / "run-1.json"
    trace.write_text('{"headers": {"authorization": "Bearer abcdefghijklmnopqrstuvwxyz012345"}}\n')
    _resign_with_fresh_digests(sealed, signer)
    assert check(sealed, signer) == (
        "secrets",
        "a credential is in the bundle: traces/reference/run-1.json line 1: bearer-token",
    )


def test_a_bad_key_is_a_usage_error_not_a_report(sealed: Path) -> None:
    with pytest.raises(SigningKeyError):
        verify_bundle(sealed, b"not a key")


def test_a_missing_bundle_is_reported(tmp_path: Path, signer: Signer) -> None:
    report = verify_bundle(tmp_path / "absent", signer.public_pem)
    assert (report.valid, report.check) == (False, "bundle.layout")


def test_a_corrupt_archive_is_reported(tmp_path: Path, signer: Signer) -> None:
    archive = tmp_path / "bundle.tar.gz"
    archive.write_bytes(b"\x1f\x8b not really gzip")
    report = verify_bundle(archive, signer.public_pem)
    assert (report.valid, report.check) == (False, "bundle.layout")


def test_raise_for_invalid(sealed: Path) -> None:
    from windtunnel.errors import VerificationError

    report = verify_bundle(sealed, Signer.ephemeral().public_pem, now=NOW)
    with pytest.raises(VerificationError, match="is invalid") as caught:
        report.raise_for_invalid()
    assert caught.value.context["check"] == "signature.valid"
    verify_bundle(sealed, _key_of(sealed), now=NOW).raise_for_invalid()


def _key_of(root: Path) -> bytes:
    return (root / "keys" / "signer.pub.pem").read_bytes()


def _resign_with_fresh_digests(root: Path, signer: Signer) -> None:
    """Re-hash every file subject and MANIFEST, as a key holder forging content would."""
    manifest_lines = []
    for line in (root / "MANIFEST.sha256").read_text().splitlines():
        name = line.split("  ", 1)[1]
        manifest_lines.append(f"{sha256_hex((root / name).read_bytes())}  {name}\n")
    (root / "MANIFEST.sha256").write_text("".join(manifest_lines))

    def edit(stmt: dict[str, Any]) -> None:
        for subject in stmt["subject"]:
            if not subject["name"].startswith("image:"):
                subject["digest"]["sha256"] = sha256_hex((root / subject["name"]).read_bytes())

    resign(root, signer, edit)


def test_now_must_be_timezone_aware(sealed: Path, signer: Signer) -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        verify_bundle(sealed, signer.public_pem, now=NOW.replace(tzinfo=None))
