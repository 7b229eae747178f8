"""Verify a bundle (directory or .tar.gz) against a trusted key: signature first, then digests, then content.

The trust comes from outside the bundle: a public key the verifier holds, or the fingerprint of the key
that must have signed it (then the bundle's own keys/signer.pub.pem is used only if it has that
fingerprint). Never raises for an invalid bundle: the report says valid or names the first failed check
and why. A key or fingerprint that cannot be read is a usage error (SigningKeyError), not a property of
the bundle.
"""

from __future__ import annotations

import tarfile
import tempfile
import zlib
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric import ec

from windtunnel._bundle import layout
from windtunnel._bundle.archive import extract_archive
from windtunnel._bundle.canonical import sha256_file
from windtunnel._bundle.content import (
    Contents,
    check_contents,
    check_privacy,
    check_secrets,
    fail,
    load_contents,
)
from windtunnel._bundle.dsse import IN_TOTO_PAYLOAD_TYPE, Envelope, envelope_from_json
from windtunnel._bundle.errors import SigningKeyError
from windtunnel._bundle.keys import (
    KeyOrigin,
    fingerprint_of,
    keyid_of,
    load_public_key,
    parse_fingerprint,
    signature_valid,
)
from windtunnel._bundle.layout import LayoutError
from windtunnel._bundle.merge_verify import check_merged
from windtunnel._bundle.privacy_scan import HostFacts
from windtunnel._bundle.sigstore import check_sigstore_bundle
from windtunnel._bundle.statement import Statement, parse_statement
from windtunnel._core.vocabulary import CertificationResult
from windtunnel.errors import VerificationError


@dataclass(frozen=True, slots=True, kw_only=True)
class VerifyReport:
    """`check` names the first failed check (e.g. `signature.valid`), `reason` says what was wrong."""

    bundle: str
    valid: bool
    check: str | None = None
    reason: str | None = None
    passed: tuple[str, ...] = ()
    keyid: str | None = None
    key_origin: KeyOrigin | None = None
    result: CertificationResult | None = None
    subjects: int = 0

    @property
    def fingerprint(self) -> str | None:
        """The signing key's fingerprint, `SHA256:<hex keyid>`, as `wt certify` prints it."""
        return fingerprint_of(self.keyid) if self.keyid else None

    def to_dict(self) -> dict[str, Any]:
        """Its fields (enums as their values when dumped) and the key's fingerprint."""
        return asdict(self) | {"passed": list(self.passed), "fingerprint": self.fingerprint}

    def raise_for_invalid(self) -> None:
        if not self.valid:
            raise VerificationError(
                f"bundle {self.bundle} is invalid: {self.reason}",
                hint="do not trust this bundle; re-run `wt certify` to produce a fresh one",
                reason=self.reason,
                check=self.check,
            )


@dataclass(slots=True)
class _Progress:
    passed: list[str] = field(default_factory=list)
    keyid: str | None = None
    key_origin: KeyOrigin | None = None
    result: CertificationResult | None = None
    subjects: int = 0


@dataclass(frozen=True, slots=True)
class _Trust:
    """What the verifier brought: a public key, a pinned keyid (from a fingerprint), or both."""

    key: ec.EllipticCurvePublicKey | None
    pinned: str | None

    def public_key(self, root: Path, progress: _Progress) -> ec.EllipticCurvePublicKey:
        if self.key is not None:
            return self.key
        assert self.pinned is not None
        path = root / layout.PUBLIC_KEY
        if not path.is_file():
            raise fail(
                "key.pinned", f"{layout.PUBLIC_KEY} is missing: no key to match the pinned fingerprint"
            )
        try:
            key = load_public_key(path.read_bytes(), source=layout.PUBLIC_KEY)
        except SigningKeyError as exc:
            raise fail("key.pinned", exc.message) from exc
        progress.keyid = keyid_of(key)
        if progress.keyid != self.pinned:
            raise fail(
                "key.pinned",
                f"the bundle was signed with key {fingerprint_of(progress.keyid)}, not the pinned "
                f"{fingerprint_of(self.pinned)}: another key signed it",
            )
        return key


def verify_bundle(
    path: Path,
    public_key_pem: bytes | None = None,
    *,
    fingerprint: str | None = None,
    now: datetime | None = None,
    host: HostFacts | None = None,
    key_source: str = "the public key",
) -> VerifyReport:
    """Check the bundle at `path` (a directory or its .tar.gz) with the given PEM public key, or with the
    key of `fingerprint` (`SHA256:<hex>`, see keys.parse_fingerprint); with both, the key must have it.
    `host` is what no file may name (default: this machine's home, user and host name); `key_source`
    names the key in errors (e.g. its path)."""
    if now is not None and now.tzinfo is None:
        raise ValueError("verify_bundle(now=...) needs a timezone-aware datetime")
    if public_key_pem is None and fingerprint is None:
        raise ValueError("verify_bundle needs a public key or a key fingerprint to trust")
    trust = _Trust(
        load_public_key(public_key_pem, source=key_source) if public_key_pem is not None else None,
        parse_fingerprint(fingerprint) if fingerprint is not None else None,
    )
    if trust.key is not None and trust.pinned is not None and keyid_of(trust.key) != trust.pinned:
        raise SigningKeyError(
            f"the public key has fingerprint {fingerprint_of(keyid_of(trust.key))}, not the pinned "
            f"{fingerprint_of(trust.pinned)}",
            hint="pass the key and the fingerprint of the same signer, or only one of them",
        )
    progress = _Progress(keyid=keyid_of(trust.key) if trust.key is not None else None)
    try:
        if path.is_file():
            with tempfile.TemporaryDirectory(prefix="wt-verify-") as scratch:
                root = _extract(path, Path(scratch))
                _verify_tree(root, trust, progress, now or datetime.now(UTC), host or HostFacts.here())
        elif path.is_dir():
            _verify_tree(path, trust, progress, now or datetime.now(UTC), host or HostFacts.here())
        else:
            raise fail("bundle.layout", f"{path} is neither a bundle directory nor a .tar.gz")
    except VerificationError as exc:
        return _report(path, progress, exc)
    return _report(path, progress, None)


def _report(path: Path, progress: _Progress, error: VerificationError | None) -> VerifyReport:
    return VerifyReport(
        bundle=str(path),
        valid=error is None,
        check=error.context.get("check", "bundle") if error else None,
        reason=error.context.get("reason", error.message) if error else None,
        passed=tuple(progress.passed),
        keyid=progress.keyid,
        key_origin=progress.key_origin,
        result=progress.result,
        subjects=progress.subjects,
    )


def _extract(archive: Path, into: Path) -> Path:
    try:
        return extract_archive(archive, into)
    except (LayoutError, OSError, EOFError, tarfile.TarError, zlib.error) as exc:
        raise fail("bundle.layout", f"{archive} is not a readable bundle archive: {exc}") from exc


def _verify_tree(root: Path, trust: _Trust, progress: _Progress, now: datetime, host: HostFacts) -> None:
    envelope = _signed_envelope(root, trust.public_key(root, progress), progress)
    statement = parse_statement(envelope.payload)
    progress.passed.append("statement.format")
    progress.subjects = len(statement.subjects)
    files = _files(root)
    _subject_digests(root, statement, files, progress)
    _manifest(root, statement, progress)
    contents = load_contents(root)
    progress.result = contents.verdict.result
    progress.passed.append("content.format")
    check_contents(contents, files, now=now)
    _statement_agrees(statement, contents, progress)
    check_merged(root, statement, contents, files)
    progress.passed.append("agreement")
    check_secrets(root, files)
    progress.passed.append("secrets")
    check_privacy(root, files, host)
    progress.passed.append("privacy")


def _signed_envelope(root: Path, public_key: ec.EllipticCurvePublicKey, progress: _Progress) -> Envelope:
    envelope = _one_envelope(root)
    if len(envelope.signatures) != 1:
        raise fail(
            "signature.count",
            f"{layout.ATTESTATION} has {len(envelope.signatures)} signatures, expected exactly one",
        )
    progress.passed.append("signature.count")
    if envelope.payload_type != IN_TOTO_PAYLOAD_TYPE:
        raise fail(
            "signature.payload_type",
            f"payloadType is {envelope.payload_type!r}, expected {IN_TOTO_PAYLOAD_TYPE!r}",
        )
    progress.passed.append("signature.payload_type")
    if not signature_valid(public_key, envelope.signatures[0].sig, envelope.pae()):
        raise fail(
            "signature.valid",
            f"the signature in {layout.ATTESTATION} does not verify with key {progress.keyid}: the payload "
            "was changed or it was signed by another key",
        )
    progress.passed.append("signature.valid")
    sigstore = root / layout.SIGSTORE_BUNDLE
    if not sigstore.is_file():
        raise fail("sigstore.bundle", f"{layout.SIGSTORE_BUNDLE} is missing")
    check_sigstore_bundle(
        sigstore.read_text(encoding="utf-8"),
        envelope=envelope,
        keyid=progress.keyid or "",
        source=layout.SIGSTORE_BUNDLE,
    )
    progress.passed.append("sigstore.bundle")
    return envelope


def _one_envelope(root: Path) -> Envelope:
    path = root / layout.ATTESTATION
    if not path.is_file():
        raise fail("signature.count", f"{layout.ATTESTATION} is missing: the bundle is unsigned")
    lines = [line for line in path.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()]
    if len(lines) != 1:
        raise fail(
            "signature.count", f"{layout.ATTESTATION} holds {len(lines)} envelopes, expected exactly one"
        )
    return envelope_from_json(lines[0], source=layout.ATTESTATION)


def _files(root: Path) -> list[str]:
    try:
        return layout.subject_files(layout.bundle_files(root))
    except LayoutError as exc:
        raise fail("bundle.layout", str(exc)) from exc


def _subject_digests(root: Path, statement: Statement, files: list[str], progress: _Progress) -> None:
    # A merged bundle's shards/ files are named by their shards' statements (check_merged checks them).
    present = set(layout.signed_directly(files, merged=bool(statement.statement_subjects)))
    for name, digest in sorted(statement.file_subjects.items()):
        if name not in present:
            raise fail(
                "subjects.missing", f"{name} is a signed subject but the file is missing from the bundle"
            )
        actual = sha256_file(root / name)
        if actual != digest:
            raise fail(
                "subjects.digest", f"{name} has sha256 {actual}, but the signed statement says {digest}"
            )
    progress.passed.append("subjects.digest")
    if unlisted := sorted(present - set(statement.file_subjects)):
        raise fail("subjects.unlisted", f"{unlisted[0]} is in the bundle but is not a signed subject")
    progress.passed.append("subjects.complete")


def _manifest(root: Path, statement: Statement, progress: _Progress) -> None:
    try:
        listed = layout.parse_manifest((root / layout.MANIFEST).read_text(encoding="utf-8"))
    except (LayoutError, UnicodeDecodeError) as exc:
        raise fail("manifest", str(exc)) from exc
    expected = {name: d for name, d in statement.file_subjects.items() if name != layout.MANIFEST}
    if listed != expected:
        differing = sorted(set(listed.items()) ^ set(expected.items()))
        raise fail("manifest", f"{layout.MANIFEST} disagrees with the signed subjects at {differing[0][0]}")
    progress.passed.append("manifest")


def _statement_agrees(statement: Statement, contents: Contents, progress: _Progress) -> None:
    images = {name: digest.removeprefix("sha256:") for name, digest in contents.run.images.items()}
    if statement.image_subjects != images:
        raise fail(
            "agreement.images",
            f"the signed image subjects {sorted(statement.image_subjects)} differ from run.json images "
            f"{sorted(images)} (or their digests differ)",
        )
    predicate = statement.predicate
    if predicate.get("verdict") != contents.verdict.model_dump(mode="json"):
        raise fail("agreement.predicate", "the signed predicate's verdict differs from verdict.json")
    signer = predicate.get("signer")
    origin = signer.get("origin") if isinstance(signer, dict) else None
    if not isinstance(signer, dict) or signer.get("keyid") != progress.keyid:
        raise fail(
            "agreement.predicate", "the signed predicate names another signer key than the verifying key"
        )
    if origin != contents.verdict.signing_key.value:
        raise fail(
            "agreement.predicate",
            f"the predicate says the key is {origin!r} but verdict.json says {contents.verdict.signing_key.value!r}",
        )
    progress.key_origin = contents.verdict.signing_key
