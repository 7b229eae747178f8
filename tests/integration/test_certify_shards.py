"""A sharded certification end to end on this machine (docs/ci.md, "Sharded certification"): real `wt
certify --shard I/N` runs of `--runtime minimal --runtime reference`, split two ways and run at once,
merged by `wt merge`, verified and gated by `wt verify --require-passed` and rendered by `wt report`; the
refusals of a missing, duplicated, edited or untrusted shard are proven on these real shards. The shard
bundles are made once for the module (each certify takes minutes on two cores). That the merged verdict
equals a single run's, also for a split with an empty part, and that a shard of another split is refused,
are proven on the real plan split, stage plan, publish and seal without containers
(tests/unit/test_bundle_merge.py): here each would cost one more certify of the reference control, for the
same code path."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.wt_process import wt as run_wt

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.certify]

RUNTIMES = ("--runtime", "minimal", "--runtime", "reference")


def wt(env: dict[str, str], *args: str | Path) -> subprocess.CompletedProcess[str]:
    return run_wt(*args, env=env, timeout=1800)


@pytest.fixture(scope="module")
def env(docker_client: Any, base_image: str, run_label: str) -> dict[str, str]:
    return {**os.environ, "WT_BASE_IMAGE": base_image, "WT_SESSION_LABEL": run_label}


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The module's directory, with the signing key (signing.pem) and the gate's public key (signer.pub.pem)."""
    where = tmp_path_factory.mktemp("shards")
    key = ec.generate_private_key(ec.SECP256R1())
    (where / "signing.pem").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    (where / "signer.pub.pem").write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return where


def certify(env: dict[str, str], work: Path, name: str, *extra: str) -> Path:
    out = work / name
    done = wt(env, "certify", *RUNTIMES, *extra, "--out", out, "--key", work / "signing.pem", "--plain")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def two(env: dict[str, str], work: Path) -> list[Path]:
    """Both shards at once, as two CI jobs run them: each with a lock directory of its own (jobs on two
    machines share no lock), so neither waits for the other's reference control."""

    def shard(index: int) -> Path:
        locks = {**env, "WT_LOCK_DIR": str(work / f"locks-{index}")}
        return certify(locks, work, f"two-{index}", "--shard", f"{index}/2")

    with ThreadPoolExecutor(max_workers=2) as jobs:
        return list(jobs.map(shard, (1, 2)))


def merge(env: dict[str, str], work: Path, out: str, *shards: Path) -> subprocess.CompletedProcess[str]:
    return wt(
        env,
        "merge",
        *shards,
        "--out",
        work / out,
        "--key",
        work / "signing.pem",
        "--trust",
        work / "signer.pub.pem",
    )


def refusal(done: subprocess.CompletedProcess[str]) -> str:
    """The one error line of a refused merge (the progress lines say which shards were verified)."""
    assert done.returncode == 1, done.stdout + done.stderr
    (line,) = [line for line in done.stderr.splitlines() if not line.startswith("wt merge: ")]
    return line


def test_the_plan_every_job_computes(env: dict[str, str]) -> None:
    done = wt(env, "certify", *RUNTIMES, "--print-plan", "3")
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert plan["units"] == ["minimal", "reference"]
    assert [part["units"] for part in plan["shards"]] == [["minimal"], ["reference"], []]


def test_two_shards_merge_into_a_bundle_the_gate_accepts(
    env: dict[str, str], work: Path, two: list[Path]
) -> None:
    for index, shard in enumerate(two, start=1):
        info = json.loads((shard / "shard.json").read_text())
        assert (info["index"], info["count"]) == (index, 2)
    merged = merge(env, work, "merged-two", *two)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    gate = wt(env, "verify", work / "merged-two", "--key", work / "signer.pub.pem", "--require-passed")
    assert gate.returncode == 0 and "verdict: PASSED" in gate.stdout, gate.stdout
    archive = wt(
        env, "verify", work / "merged-two.tar.gz", "--key", work / "signer.pub.pem", "--require-passed"
    )
    assert archive.returncode == 0, archive.stdout


def test_wt_report_renders_the_merged_bundle_as_one(env: dict[str, str], work: Path, two: list[Path]) -> None:
    out = work / "merged-report.html"
    done = wt(env, "report", work / "merged-two.tar.gz", "--out", out)
    assert done.returncode == 0, done.stderr
    page = out.read_text()
    assert "minimal/conformance/" in page and "reference/conformance/" in page
    assert "shards/1/" in page and "shards/2/" in page


def test_only_one_shard_is_refused(env: dict[str, str], work: Path, two: list[Path]) -> None:
    line = refusal(merge(env, work, "refused", two[0]))
    assert "cannot merge: shard 2/2 of plan" in line and "is missing" in line


def test_the_same_shard_twice_is_refused(env: dict[str, str], work: Path, two: list[Path]) -> None:
    line = refusal(merge(env, work, "refused", two[0], two[0]))
    assert f"{two[0]} and {two[0]} are each shard 1/2: one is a duplicate" in line


def test_a_shard_whose_checks_json_was_edited_is_refused(
    env: dict[str, str], work: Path, two: list[Path]
) -> None:
    edited = work / "edited"
    shutil.copytree(two[1], edited)
    checks = json.loads((edited / "checks.json").read_text())
    checks["checks"][0]["status"] = "failed" if checks["checks"][0]["status"] == "passed" else "passed"
    (edited / "checks.json").write_text(json.dumps(checks, indent=2))
    line = refusal(merge(env, work, "refused", two[0], edited))
    assert f"{edited} is invalid: subjects.digest: checks.json has sha256" in line


def test_a_shard_signed_by_a_key_the_merge_does_not_trust_is_refused(
    env: dict[str, str], work: Path, two: list[Path]
) -> None:
    other = work / "other.pub.pem"
    other.write_bytes(
        ec.generate_private_key(ec.SECP256R1())
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    done = wt(env, "merge", *two, "--out", work / "refused", "--key", work / "signing.pem", "--trust", other)
    assert f"{two[0]} is not signed by a trusted key" in refusal(done)
