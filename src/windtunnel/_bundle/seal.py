"""Seal a bundle directory the pipeline has filled: key, VERIFY.md, MANIFEST, signed statement, archive.

Order matters: everything a subject covers is written first, then the statement is signed, then the
attestation files (the only non-subjects) and the archive are written, and the result is verified.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from windtunnel._bundle import layout
from windtunnel._bundle.archive import write_archive
from windtunnel._bundle.canonical import canonical_json, sha256_file
from windtunnel._bundle.content import Contents, check_contents, check_privacy, check_secrets, load_contents
from windtunnel._bundle.dsse import IN_TOTO_PAYLOAD_TYPE, sign_envelope
from windtunnel._bundle.errors import BundleSealError
from windtunnel._bundle.keys import KeyOrigin, Signer
from windtunnel._bundle.layout import LayoutError
from windtunnel._bundle.merge_verify import sharding_predicate, statement_subjects
from windtunnel._bundle.privacy_scan import HostFacts
from windtunnel._bundle.sigstore import sigstore_bundle
from windtunnel._bundle.statement import MAX_SUBJECTS, Statement
from windtunnel._bundle.verify import verify_bundle
from windtunnel._bundle.verify_md import verify_md
from windtunnel._core.vocabulary import CertificationResult
from windtunnel._files import write_atomic
from windtunnel.errors import VerificationError

_REWRITTEN = (layout.MANIFEST, layout.PUBLIC_KEY, layout.VERIFY_MD, *sorted(layout.ATTESTATIONS))


@dataclass(frozen=True, slots=True, kw_only=True)
class SealResult:
    directory: Path
    archive: Path
    keyid: str
    key_origin: KeyOrigin
    result: CertificationResult
    subjects: int
    statement: dict[str, Any]

    @property
    def dev_key(self) -> bool:
        return self.key_origin is KeyOrigin.DEV


def default_archive(directory: Path) -> Path:
    """`out/` is archived as `out.tar.gz` beside it."""
    resolved = directory.resolve()
    return resolved.with_name(resolved.name + ".tar.gz")


def seal_bundle(
    directory: Path,
    *,
    signer: Signer,
    archive: Path | None = None,
    now: datetime | None = None,
    host: HostFacts | None = None,
) -> SealResult:
    """Sign the bundle in `directory` (run.json, checks.json, junit.xml, verdict.json... already written).

    Subjects and the predicate come from the files themselves: every file, `image:<name>` for each
    digest in run.json's `images`, and verdict.json as the predicate. Raises BundleSealError when a
    required file is missing or malformed, the files disagree, a credential or a fact of `host` (default:
    this machine) is found, or the verdict is HARNESS_INVALID (never signed). Re-sealing replaces the
    previous key, manifest and attestations.
    """
    if now is not None and now.tzinfo is None:
        raise ValueError("seal_bundle(now=...) needs a timezone-aware datetime")
    root = directory.resolve()
    target = (archive or default_archive(root)).resolve()
    if target.is_relative_to(root):
        raise BundleSealError(
            f"the archive {target} would be inside the bundle {root}",
            hint="write the .tar.gz beside the bundle directory",
        )
    host = host or HostFacts.here()
    contents = _prepare(root, signer, now or datetime.now(UTC), host)
    files = layout.signed_directly(_listing(root), merged=contents.merge is not None)
    _write(root, layout.MANIFEST, layout.render_manifest({name: sha256_file(root / name) for name in files}))
    statement = _statement(root, [*files, layout.MANIFEST], contents, signer)
    _sign(root, statement, signer)
    write_archive(root, target)
    _self_check(root, target, signer, now, host)
    return SealResult(
        directory=root,
        archive=target,
        keyid=signer.keyid,
        key_origin=signer.origin,
        result=contents.verdict.result,
        subjects=len(statement.subjects),
        statement=statement.to_dict(),
    )


def _prepare(root: Path, signer: Signer, now: datetime, host: HostFacts) -> Contents:
    if not root.is_dir():
        raise BundleSealError(f"bundle directory {root} does not exist", hint="write the result files first")
    for name in _REWRITTEN:
        (root / name).unlink(missing_ok=True)
    _write(root, layout.PUBLIC_KEY, signer.public_pem.decode("ascii"))
    _write(root, layout.VERIFY_MD, verify_md(keyid=signer.keyid, origin=signer.origin))
    files = _listing(root)
    try:
        contents = load_contents(root)
        check_contents(contents, files, now=now)
        check_secrets(root, files)
        check_privacy(root, files, host)
    except VerificationError as exc:
        raise BundleSealError(
            f"cannot seal {root}: {exc.message}", hint=_HINTS.get(exc.context.get("check", ""))
        ) from exc
    if contents.verdict.signing_key is not signer.origin:
        raise BundleSealError(
            f"verdict.json says signing_key {contents.verdict.signing_key.value!r} but the signer is a "
            f"{signer.origin.value!r}",
            hint="build the verdict with Verdict.from_checks(checks, signing_key=signer.origin)",
        )
    if contents.verdict.result is CertificationResult.HARNESS_INVALID:
        raise BundleSealError(
            "the verdict is HARNESS_INVALID: Wind Tunnel's own self-checks failed, so nothing is signed",
            hint=f"fix the harness failures: {', '.join(contents.verdict.harness_failures) or 'see checks.json'}",
        )
    return contents


_HINTS = {
    "secrets": "remove or redact the credential before sealing; tapes and traces are redacted at write time",
    "privacy": "write paths relative to the project root and no host names (a Wind Tunnel bug if it wrote it)",
    "content.missing": "the pipeline writes run.json, checks.json, junit.xml and verdict.json before sealing",
    "agreement.junit": "write junit.xml with windtunnel._bundle.junit_for(checks)",
    "agreement.verdict": "write verdict.json with Verdict.from_checks(checks, signing_key=...)",
}


def _listing(root: Path) -> list[str]:
    try:
        return [name for name in layout.subject_files(layout.bundle_files(root)) if name != layout.MANIFEST]
    except LayoutError as exc:
        raise BundleSealError(f"cannot seal {root}: {exc}", hint="a bundle holds regular files only") from exc


def _statement(root: Path, files: list[str], contents: Contents, signer: Signer) -> Statement:
    subjects = {name: sha256_file(root / name) for name in files}
    for name, digest in contents.run.images.items():
        subjects[f"{layout.IMAGE_PREFIX}{name}"] = digest.removeprefix("sha256:")
    if contents.merge is not None:  # a merged bundle signs each shard's statement by its digest
        subjects.update(statement_subjects(contents.merge))
    if len(subjects) > MAX_SUBJECTS:
        raise BundleSealError(
            f"the bundle has {len(subjects)} subjects; cosign and sigstore-go accept at most {MAX_SUBJECTS}",
            hint="pack traces/ into fewer files (for example one archive per runtime) before sealing",
        )
    run = contents.run
    predicate = {
        "verdict": contents.verdict.model_dump(mode="json"),
        "run": run.model_dump(mode="json", include={"run_id", "tool_version", "started_at", "ended_at"}),
        "signer": {"keyid": signer.keyid, "origin": signer.origin.value},
        **sharding_predicate(contents),
    }
    return Statement(subjects=subjects, predicate=predicate)


def _sign(root: Path, statement: Statement, signer: Signer) -> None:
    envelope = sign_envelope(
        IN_TOTO_PAYLOAD_TYPE, canonical_json(statement.to_dict()), signer.sign, signer.keyid
    )
    _write(root, layout.ATTESTATION, json.dumps(envelope.to_dict(), separators=(",", ":")) + "\n")
    bundle = sigstore_bundle(envelope, keyid=signer.keyid)
    _write(root, layout.SIGSTORE_BUNDLE, json.dumps(bundle, indent=2) + "\n")


def _self_check(root: Path, archive: Path, signer: Signer, now: datetime | None, host: HostFacts) -> None:
    for path in (root, archive):
        report = verify_bundle(path, signer.public_pem, now=now, host=host)
        if not report.valid:
            raise BundleSealError(
                f"the sealed bundle {path} does not verify: {report.reason}",
                hint="this is a Wind Tunnel bug; please report it with the bundle",
            )


def _write(root: Path, name: str, text: str) -> None:
    write_atomic(root / name, text)  # a crash never leaves half a file
