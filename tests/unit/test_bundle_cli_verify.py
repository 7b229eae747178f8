"""`wt verify` as users run it: a real subprocess against sealed bundles; exit 0 valid, 1 invalid, 2 usage."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.test_bundle_samples import sample_checks, write_sample
from windtunnel._bundle import Signer, seal_bundle
from windtunnel._bundle.keys import fingerprint_of, keyid_of, load_public_key

REPO = Path(__file__).resolve().parents[2]


def wt(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "windtunnel._cli.main", "verify", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def sealed(tmp_path: Path) -> Path:
    root = tmp_path / "out"
    root.mkdir()
    signer = Signer.ephemeral()
    write_sample(root, origin=signer.origin)
    seal_bundle(root, signer=signer)
    return root


def test_a_valid_bundle_exits_0(sealed: Path) -> None:
    done = wt(str(sealed), "--key", str(sealed / "keys/signer.pub.pem"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith(f"VALID {sealed}")
    assert "verdict: PASSED" in done.stdout
    assert "unverified dev key" in done.stdout


def test_the_archive_exits_0_in_json(sealed: Path) -> None:
    done = wt(
        str(sealed.with_name("out.tar.gz")), "--key", str(sealed / "keys/signer.pub.pem"), "--format", "json"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["valid"] is True
    assert report["key_origin"] == "unverified dev key"
    assert report["result"] == "PASSED"


def test_a_tampered_bundle_exits_1_with_the_reason(sealed: Path) -> None:
    (sealed / "report.html").write_text("changed")
    done = wt(str(sealed), "--key", str(sealed / "keys/signer.pub.pem"))
    assert done.returncode == 1
    assert done.stdout.startswith(f"INVALID {sealed}\n  subjects.digest: report.html has sha256 ")


def test_another_key_exits_1(sealed: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.pub.pem"
    other.write_bytes(Signer.ephemeral().public_pem)
    done = wt(str(sealed), "--key", str(other), "--format", "json")
    assert done.returncode == 1
    assert json.loads(done.stdout)["check"] == "signature.valid"


def test_require_passed_fails_a_valid_failed_verdict(tmp_path: Path) -> None:
    root = tmp_path / "failed"
    root.mkdir()
    signer = Signer.ephemeral()
    write_sample(root, origin=signer.origin, checks=sample_checks(failing="reference/tapes/replay"))
    seal_bundle(root, signer=signer)
    key = str(root / "keys/signer.pub.pem")
    assert wt(str(root), "--key", key).returncode == 0
    done = wt(str(root), "--key", key, "--require-passed")
    assert done.returncode == 1
    assert "verdict: FAILED" in done.stdout


@pytest.mark.parametrize("case", ["missing bundle", "missing key", "bad key", "no key flag"])
def test_usage_errors_exit_2(sealed: Path, tmp_path: Path, case: str) -> None:
    bad = tmp_path / "bad.pem"
    bad.write_text("not a key")
    args = {
        "missing bundle": [str(tmp_path / "absent"), "--key", str(sealed / "keys/signer.pub.pem")],
        "missing key": [str(sealed), "--key", str(tmp_path / "absent.pem")],
        "bad key": [str(sealed), "--key", str(bad)],
        "no key flag": [str(sealed)],
    }[case]
    done = wt(*args)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("wt: error:")
    assert "Traceback" not in done.stderr


def pinned(key: Path) -> str:
    return fingerprint_of(keyid_of(load_public_key(key.read_bytes())))


def test_the_pinned_fingerprint_verifies_without_a_warning(sealed: Path) -> None:
    fingerprint = pinned(sealed / "keys/signer.pub.pem")
    for bundle in (sealed, sealed.with_name("out.tar.gz")):
        done = wt(str(bundle), "--key-fingerprint", fingerprint)
        assert done.returncode == 0, done.stdout + done.stderr
        assert (
            f"signed by key {fingerprint}" in done.stdout and "came from the bundle itself" not in done.stdout
        )


def test_a_base64_fingerprint_pins_the_same_key(sealed: Path) -> None:
    keyid = pinned(sealed / "keys/signer.pub.pem").removeprefix("SHA256:")
    b64 = base64.b64encode(bytes.fromhex(keyid)).decode().rstrip("=")
    assert wt(str(sealed), "--key-fingerprint", f"SHA256:{b64}").returncode == 0


def test_a_bundle_resigned_with_another_key_fails_the_pin(sealed: Path) -> None:
    fingerprint = pinned(sealed / "keys/signer.pub.pem")
    (sealed / "report.html").write_text("forged")
    seal_bundle(sealed, signer=Signer.ephemeral())  # the forger re-seals: a new key in keys/signer.pub.pem
    assert wt(str(sealed), "--key", str(sealed / "keys/signer.pub.pem")).returncode == 0  # self-consistent
    done = wt(str(sealed), "--key-fingerprint", fingerprint, "--format", "json")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["check"] == "key.pinned" and "another key signed it" in report["reason"]


def test_the_bundles_own_key_warns_that_it_proves_integrity_only(sealed: Path, tmp_path: Path) -> None:
    own = wt(str(sealed), "--key", str(sealed / "keys/signer.pub.pem"))
    assert own.returncode == 0 and "warning: the key came from the bundle itself" in own.stdout
    assert "--key-fingerprint SHA256:" in own.stdout
    archive = wt(str(sealed.with_name("out.tar.gz")), "--key", str(sealed / "keys/signer.pub.pem"))
    assert "warning: the key came from the bundle itself" in archive.stdout
    store = tmp_path / "store.pub.pem"
    store.write_bytes((sealed / "keys/signer.pub.pem").read_bytes())
    theirs = wt(str(sealed), "--key", str(store), "--format", "json")
    assert theirs.returncode == 0 and json.loads(theirs.stdout)["warnings"] == []


@pytest.mark.parametrize(
    "value", ["SHA256:xyz", "MD5:" + "ab" * 16, "ab" * 32, "SHA256:" + "ab" * 31, "", "SHA256:" + "A" * 60]
)
def test_a_malformed_fingerprint_is_a_usage_error(sealed: Path, value: str) -> None:
    done = wt(str(sealed), "--key-fingerprint", value)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("wt: error: --key-fingerprint") and "Traceback" not in done.stderr


def test_key_and_fingerprint_together_are_refused(sealed: Path) -> None:
    key = sealed / "keys/signer.pub.pem"
    done = wt(str(sealed), "--key", str(key), "--key-fingerprint", pinned(key))
    assert done.returncode == 2 and "not allowed with argument" in done.stderr
