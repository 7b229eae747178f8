"""`wt certify` end to end: the bundle, `wt verify`, tampering, a poison in the set, an invalid harness,
and report.html opened in headless Chromium. Real containers throughout."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from windtunnel._bundle import CertificationResult
from windtunnel._config import load_settings
from windtunnel._conformance import checks_config
from windtunnel._pipeline.config import CertifyConfig
from windtunnel._pipeline.docker_executor import DockerExecutor
from windtunnel._pipeline.plan import PLAN, Step, execute
from windtunnel._pipeline.publish import publish

pytestmark = [pytest.mark.docker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]


def wt(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "windtunnel._cli.main", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )


@pytest.fixture(scope="module")
def env(docker_client: Any, base_image: str, run_label: str) -> dict[str, str]:
    return {**os.environ, "WT_BASE_IMAGE": base_image, "WT_SESSION_LABEL": run_label}


@pytest.fixture(scope="module")
def bundle(env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("certify") / "bundle"
    done = wt(env, "certify", "--out", str(out))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "verdict: PASSED" in done.stdout
    return out


def test_certified_bundle_verifies(bundle: Path, env: dict[str, str]) -> None:
    key = bundle / "keys" / "signer.pub.pem"
    for target in (bundle, Path(f"{bundle}.tar.gz")):
        done = wt(env, "verify", str(target), "--key", str(key))
        assert done.returncode == 0, done.stdout + done.stderr
    verdict = json.loads((bundle / "verdict.json").read_text())
    assert verdict["result"] == "PASSED" and verdict["signing_key"] == "unverified dev key"
    checks = json.loads((bundle / "checks.json").read_text())["checks"]
    stages = {c["stage"] for c in checks}
    assert {"build", "conformance", "canary", "selftest", "tapes", "publish"} <= stages
    assert any(
        c["id"] == "harness/publish/no-container-left-behind" and c["status"] == "passed" for c in checks
    )
    run = json.loads((bundle / "run.json").read_text())
    assert "runtime:reference" in run["images"] and run["images"]["runtime:reference"].startswith("sha256:")
    assert list((bundle / "traces").rglob("*.trace.json"))


@pytest.mark.parametrize("tamper", ["payload", "file-added", "file-removed", "digest", "wrong-key"])
def test_tampered_bundle_is_rejected(bundle: Path, env: dict[str, str], tmp_path: Path, tamper: str) -> None:
    copy = tmp_path / "bundle"
    shutil.copytree(bundle, copy)
    key = copy / "keys" / "signer.pub.pem"
    if tamper == "payload":
        path = copy / "attestations" / "certification.intoto.jsonl"
        envelope = json.loads(path.read_text())
        envelope["payload"] = ("A" if envelope["payload"][0] != "A" else "B") + envelope["payload"][1:]
        path.write_text(json.dumps(envelope) + "\n")
    elif tamper == "file-added":
        (copy / "traces" / "extra.json").write_text("{}")
    elif tamper == "file-removed":
        next((copy / "traces").rglob("*.score.json")).unlink()
    elif tamper == "digest":
        (copy / "checks.json").write_text(
            (copy / "checks.json").read_text().replace('"passed"', '"failed"', 1)
        )
    else:
        other = wt(
            env, "verify", str(copy), "--key", str(REPO / "tests" / "fixtures" / "keys" / "other.pub.pem")
        )
        assert other.returncode == 1 and "signature" in other.stdout.lower()
        return
    done = wt(env, "verify", str(copy), "--key", str(key))
    assert done.returncode == 1, done.stdout
    assert "INVALID" in done.stdout


def test_report_opens_in_headless_chromium(bundle: Path, tmp_path: Path) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        if os.environ.get("CI"):
            pytest.fail("CI installs Debian's chromium for this test")
        pytest.skip("no chromium on this machine")
    done = subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--dump-dom",
            (bundle / "report.html").as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert 'id="verdict"' in done.stdout and "PASSED" in done.stdout
    assert 'id="runtime-reference"' in done.stdout and "reference/conformance/egress_closed" in done.stdout
    assert 'href="evidence/reference/conformance/egress_closed.json"' in done.stdout


def test_poison_in_the_certify_set_is_failed_and_signed(env: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "poison"
    done = wt(env, "certify", "--runtime", "reference-poison-ignore_sampling", "--out", str(out))
    assert done.returncode == 1, done.stdout[-3000:]
    verdict = json.loads((out / "verdict.json").read_text())
    assert verdict["result"] == "FAILED"
    poison = next(r for r in verdict["runtimes"] if r["name"] == "reference-poison-ignore_sampling")
    assert poison["result"] == "FAILED"
    assert "reference-poison-ignore_sampling/conformance/sampling" in poison["failed_checks"]
    assert (out / "attestations" / "certification.intoto.jsonl").is_file()
    checks = json.loads((out / "checks.json").read_text())["checks"]
    caught = next(c for c in checks if c["id"].startswith("harness/conformance/poison-caught/"))
    assert caught["status"] == "passed"


def test_a_harness_that_cannot_catch_a_poison_is_invalid_and_unsigned(
    env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in ("WT_BASE_IMAGE", "WT_SESSION_LABEL"):
        monkeypatch.setenv(key, env[key])
    monkeypatch.setattr(
        checks_config, "sampling", lambda subject: {"blind": True}
    )  # the check no longer bites
    from windtunnel._conformance import kit

    blind = tuple(
        kit.Check(c.id, c.title, c.passage, checks_config.sampling) if c.id == "sampling" else c
        for c in kit.CHECKS
    )
    monkeypatch.setattr("windtunnel._pipeline.stages.CHECKS", blind)
    settings = load_settings(REPO)
    config = CertifyConfig.from_settings(
        settings, runtimes=("reference-poison-ignore_sampling",), out_dir=tmp_path / "invalid"
    )
    plan = tuple(step for step in PLAN if step.stage.value in {"build", "conformance"})
    assert all(isinstance(step, Step) for step in plan)
    outcome = execute(plan, config, DockerExecutor())
    published = publish(config, outcome)
    assert published.verdict.result is CertificationResult.HARNESS_INVALID
    assert published.seal is None
    assert not (tmp_path / "invalid" / "attestations").exists()
    failures = " ".join(published.verdict.harness_failures)
    assert "poison-caught/reference-poison-ignore_sampling" in failures
