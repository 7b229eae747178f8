"""Bad bundles for `wt verify`: tampered, missing and added files, broken signatures, wrong keys and
fingerprints, directories and archives that are no bundle, and bundles a key holder signed although their
content breaks a rule. Each is exit 1 and one line naming the failed check; the bundle is pinned by a key
or fingerprint kept outside it."""

from __future__ import annotations

import base64
import gzip
import io
import json
import shutil
import tarfile
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.badinput.runner import Case, run_case
from tests.unit.test_bundle_samples import STARTED, sample_checks, write_sample
from windtunnel._bundle import KeyOrigin, Signer, junit_for, layout, seal_bundle
from windtunnel._bundle.canonical import canonical_json, sha256_file
from windtunnel._bundle.dsse import IN_TOTO_PAYLOAD_TYPE, sign_envelope
from windtunnel._bundle.keys import fingerprint_of
from windtunnel._bundle.privacy_scan import HostFacts
from windtunnel._bundle.sigstore import sigstore_bundle
from windtunnel._bundle.statement import Statement

SIGNER = Signer.ephemeral()
OTHER = Signer.ephemeral()
PINNED = fingerprint_of(SIGNER.keyid)
Edit = Callable[[Path], None]


@pytest.fixture(scope="module")
def sealed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sealed") / "bundle"
    write_sample(root, origin=SIGNER.origin)
    seal_bundle(root, signer=SIGNER, host=HostFacts())
    return root


def forge(root: Path, signer: Signer = SIGNER) -> None:
    """What a key holder can do: sign whatever the files say, none of the content rules checked."""
    for name in (layout.MANIFEST, *layout.ATTESTATIONS):
        (root / name).unlink(missing_ok=True)
    (root / layout.PUBLIC_KEY).parent.mkdir(exist_ok=True)
    (root / layout.PUBLIC_KEY).write_bytes(signer.public_pem)
    files = layout.subject_files(layout.bundle_files(root))
    (root / layout.MANIFEST).write_text(layout.render_manifest({n: sha256_file(root / n) for n in files}))
    subjects = {name: sha256_file(root / name) for name in [*files, layout.MANIFEST]}
    run = _json(root / layout.RUN)
    for name, digest in (run.get("images") or {}).items():
        subjects[f"{layout.IMAGE_PREFIX}{name}"] = str(digest).removeprefix("sha256:")
    verdict = _json(root / layout.VERDICT)
    predicate = {
        "verdict": verdict,
        "run": {key: run.get(key) for key in ("run_id", "tool_version", "started_at", "ended_at")},
        "signer": {"keyid": signer.keyid, "origin": verdict.get("signing_key", signer.origin.value)},
    }
    statement = Statement(subjects=subjects, predicate=predicate)
    envelope = sign_envelope(
        IN_TOTO_PAYLOAD_TYPE, canonical_json(statement.to_dict()), signer.sign, signer.keyid
    )
    (root / layout.ATTESTATION).write_text(json.dumps(envelope.to_dict()) + "\n")
    (root / layout.SIGSTORE_BUNDLE).write_text(json.dumps(sigstore_bundle(envelope, keyid=signer.keyid)))


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def forged(edit: Edit) -> Edit:
    def both(root: Path) -> None:
        edit(root)
        forge(root)

    return both


def write(name: str, text: str) -> Edit:
    def edit(root: Path) -> None:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)

    return edit


def delete(name: str) -> Edit:
    return lambda root: (root / name).unlink()


def edit_json(name: str, change: Callable[[dict[str, Any]], None]) -> Edit:
    def edit(root: Path) -> None:
        data = json.loads((root / name).read_text())
        change(data)
        (root / name).write_text(json.dumps(data))

    return edit


def envelope_edit(change: Callable[[dict[str, Any]], None]) -> Edit:
    return edit_json(layout.ATTESTATION, change)


def _payload(data: dict[str, Any]) -> None:
    statement = json.loads(base64.b64decode(data["payload"]))
    statement["subject"] = statement["subject"][1:]
    data["payload"] = base64.b64encode(json.dumps(statement).encode()).decode()


def _checks_and_junit(root: Path) -> None:
    checks = sample_checks(failing="reference/tapes/replay")
    (root / layout.CHECKS).write_text(checks.model_dump_json())
    (root / layout.JUNIT).write_text(junit_for(checks))  # verdict.json still says PASSED


def _requirement_set(data: dict[str, Any]) -> None:
    data["requirement_set"] = "9"


def _started_in_future(data: dict[str, Any]) -> None:
    data["started_at"] = "2999-01-01T00:00:00Z"
    data["ended_at"] = "2999-01-01T00:10:00Z"


def _old_live_tape(data: dict[str, Any]) -> None:
    data["tapes"][0]["recorded_at"] = (STARTED - timedelta(days=45)).isoformat()


def _unjudged_runtime(data: dict[str, Any]) -> None:
    data["runtimes"].append({"name": "ghost", "source": None})


def _missing_evidence(data: dict[str, Any]) -> None:
    data["checks"][1]["evidence"] = ["traces/reference/nowhere.json"]


def symlink(root: Path) -> None:
    (root / "traces" / "link.json").symlink_to(root / "run.json")


def resigned_by_other(root: Path) -> None:
    (root / "report.html").write_text("forged")
    forge(root, OTHER)


# (id, edit of the sealed bundle, expected start of the reason line)
TAMPERED: list[tuple[str, Edit, str]] = [
    ("report changed", write("report.html", "changed"), "subjects.digest: report.html has sha256"),
    (
        "run.json changed",
        edit_json("run.json", lambda d: d.update(run_id="other")),
        "subjects.digest: run.json",
    ),
    (
        "verdict flipped",
        edit_json("verdict.json", lambda d: d.update(result="FAILED")),
        "subjects.digest: verdict.json",
    ),
    ("trace removed", delete("traces/reference/run-1.json"), "subjects.missing: traces/reference/run-1.json"),
    ("run.json removed", delete("run.json"), "subjects.missing: run.json"),
    ("tape index removed", delete("tapes/index.json"), "subjects.missing: tapes/index.json"),
    ("file added", write("traces/extra.json", "{}"), "subjects.unlisted: traces/extra.json"),
    ("hidden file added", write(".hidden", "x"), "subjects.unlisted: .hidden"),
    ("manifest changed", write("MANIFEST.sha256", ""), "subjects.digest: MANIFEST.sha256"),
    ("manifest removed", delete("MANIFEST.sha256"), "subjects.missing: MANIFEST.sha256"),
    ("verify.md changed", write("VERIFY.md", "trust me"), "subjects.digest: VERIFY.md"),
    (
        "attestation removed",
        delete(layout.ATTESTATION),
        "signature.count: attestations/certification.intoto.jsonl is missing",
    ),
    (
        "attestation empty",
        write(layout.ATTESTATION, ""),
        "signature.count: attestations/certification.intoto.jsonl holds 0 envelopes",
    ),
    ("attestation garbage", write(layout.ATTESTATION, "not json\n"), "envelope.format"),
    (
        "attestation twice",
        lambda r: write(layout.ATTESTATION, (r / layout.ATTESTATION).read_text() * 2)(r),
        "signature.count",
    ),
    (
        "two signatures",
        envelope_edit(lambda d: d["signatures"].append(d["signatures"][0])),
        "signature.count",
    ),
    ("no signatures", envelope_edit(lambda d: d.update(signatures=[])), "signature.count"),
    ("payload type", envelope_edit(lambda d: d.update(payloadType="text/plain")), "signature.payload_type"),
    ("payload edited", envelope_edit(_payload), "signature.valid"),
    ("signature garbage", envelope_edit(lambda d: d["signatures"][0].update(sig="AAAA")), "signature.valid"),
    ("sigstore bundle removed", delete(layout.SIGSTORE_BUNDLE), "sigstore.bundle"),
    ("sigstore bundle garbage", write(layout.SIGSTORE_BUNDLE, "{}"), "sigstore.bundle"),
    ("symlink inside", symlink, "bundle.layout"),
    ("re-signed by another key", resigned_by_other, "key.pinned: the bundle was signed with key SHA256:"),
    ("key removed", delete(layout.PUBLIC_KEY), "key.pinned: keys/signer.pub.pem is missing"),
    (
        "key garbage",
        write(layout.PUBLIC_KEY, "garbage"),
        "key.pinned: keys/signer.pub.pem is not a PEM public key",
    ),
    # signed by the right key, but breaking a content rule
    ("forged: checks and junit disagree with the verdict", forged(_checks_and_junit), "agreement.verdict"),
    (
        "forged: junit disagrees",
        forged(write("junit.xml", junit_for(sample_checks(failing="reference/tapes/replay")))),
        "agreement.junit",
    ),
    (
        "forged: requirement sets",
        forged(edit_json("checks.json", _requirement_set)),
        "agreement.requirement_set",
    ),
    ("forged: run in the future", forged(edit_json("run.json", _started_in_future)), "run.time"),
    (
        "forged: stale live tape",
        forged(edit_json("tapes/index.json", _old_live_tape)),
        "tapes.age: tape support_desk/refund was 45 days old",
    ),
    ("forged: unjudged runtime", forged(edit_json("run.json", _unjudged_runtime)), "agreement.runtimes"),
    ("forged: evidence missing", forged(edit_json("checks.json", _missing_evidence)), "agreement.evidence"),
    ("forged: checks.json removed", forged(delete("checks.json")), "content.missing: checks.json is missing"),
    (
        "forged: run.json malformed",
        forged(write("run.json", '{"schema_version": 1}')),
        "content.format: run.json does not match its schema",
    ),
    ("forged: verdict not json", forged(write("verdict.json", "{")), "content.format"),
    ("forged: junit not xml", forged(write("junit.xml", "<testsuites")), "content.format"),
    (
        "forged: a secret",
        forged(write("traces/leak.txt", "key sk-" + "a1B2" * 12)),
        "secrets: a credential is in the bundle: traces/leak.txt line 1",
    ),
    (
        "forged: a home path",
        forged(write("traces/where.txt", "ran in /home/alice/proj")),
        "privacy: a bundle file names the machine it ran on: traces/where.txt line 1",
    ),
]


def archive_of(entries: list[tuple[str, bytes | None, str | None]]) -> bytes:
    """A .tar.gz of (name, file bytes or None for a directory, symlink target or None)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data, target in entries:
            info = tarfile.TarInfo(name)
            if target is not None:
                info.type, info.linkname = tarfile.SYMTYPE, target
                tar.addfile(info)
            elif data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _truncated(sealed: Path) -> bytes:
    data = sealed.with_name("bundle.tar.gz").read_bytes()
    return data[: len(data) // 2]


ARCHIVES: list[tuple[str, Callable[[Path], bytes], str]] = [
    ("truncated archive", _truncated, "bundle.layout"),
    ("random bytes", lambda s: bytes(range(256)) * 4, "bundle.layout"),
    ("empty file", lambda s: b"", "bundle.layout"),
    ("gzip but no tar", lambda s: gzip.compress(b"just text"), "bundle.layout"),
    (
        "a symlink entry",
        lambda s: archive_of([("b", None, None), ("b/run.json", None, "/etc/passwd")]),
        "archive entry b/run.json is a link or special file",
    ),
    ("a .. entry", lambda s: archive_of([("../evil.json", b"{}", None)]), "bundle.layout"),
    ("an absolute entry", lambda s: archive_of([("/tmp/evil.json", b"{}", None)]), "bundle.layout"),
    (
        "an unrelated archive",
        lambda s: archive_of([("b", None, None), ("b/notes.txt", b"hi", None)]),
        "key.pinned: keys/signer.pub.pem is missing",
    ),
]


def _directory(files: dict[str, str]) -> Edit:
    def make(root: Path) -> None:
        shutil.rmtree(root)
        root.mkdir()
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)

    return make


NOT_BUNDLES: list[tuple[str, Edit, str]] = [  # verified with the signer's key from outside (--key)
    (
        "an empty directory",
        _directory({}),
        "signature.count: attestations/certification.intoto.jsonl is missing",
    ),
    ("a directory of notes", _directory({"notes.txt": "hi", "run.json": "{}"}), "signature.count"),
    ("only an attestation", _directory({layout.ATTESTATION: "{}\n"}), "envelope.format"),
    ("an attestation that is no JSON", _directory({layout.ATTESTATION: "x\n"}), "envelope.format"),
]


def cases() -> list[tuple[str, Edit | None, Callable[[Path], bytes] | None, list[str], str]]:
    found: list[tuple[str, Edit | None, Callable[[Path], bytes] | None, list[str], str]] = []
    pinned = ["--key-fingerprint", PINNED]
    for name, edit, reason in TAMPERED:
        found.append((name, edit, None, pinned, reason))
    for name, edit, reason in NOT_BUNDLES:
        found.append((name, edit, None, ["--key", "{tmp}/signer.pub.pem"], reason))
        found.append((f"{name}, pinned", edit, None, pinned, "key.pinned: keys/signer.pub.pem is missing"))
    for name, make, reason in ARCHIVES:
        found.append((name, None, make, pinned, reason))
    found.append(("another key by --key", None, None, ["--key", "{tmp}/other.pub.pem"], "signature.valid"))
    found.append(
        ("another fingerprint", None, None, ["--key-fingerprint", fingerprint_of(OTHER.keyid)], "key.pinned")
    )
    return found


CASES = cases()


@pytest.mark.parametrize(("name", "edit", "archive", "trust", "reason"), CASES, ids=[c[0] for c in CASES])
def test_a_bad_bundle_is_invalid_in_one_line(
    sealed: Path,
    tmp_path: Path,
    name: str,
    edit: Edit | None,
    archive: Callable[[Path], bytes] | None,
    trust: list[str],
    reason: str,
) -> None:
    bundle = tmp_path / "bundle"
    shutil.copytree(sealed, bundle, symlinks=True)
    (tmp_path / "other.pub.pem").write_bytes(OTHER.public_pem)
    (tmp_path / "signer.pub.pem").write_bytes(SIGNER.public_pem)  # the user's own copy, outside the bundle
    target = bundle
    if edit is not None:
        edit(bundle)
    if archive is not None:
        target = tmp_path / "bundle.tar.gz"
        target.write_bytes(archive(sealed))
    argv = ["verify", str(target), *trust]
    outcome = run_case(Case(name, argv, 1, reason), tmp_path)
    outcome.refused(1, reason)
    assert outcome.stdout.startswith(f"INVALID {target}\n")
    assert KeyOrigin.DEV.value not in outcome.stdout  # an invalid bundle says nothing about its signer
