"""`wt verify` as users run it: a real subprocess against sealed bundles; exit 0 valid, 1 invalid, 2 usage."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.test_bundle_samples import sample_checks, write_sample
from windtunnel._bundle import Signer, seal_bundle

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
