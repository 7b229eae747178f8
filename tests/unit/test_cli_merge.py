"""`wt merge` and `wt verify --require-passed` as a CI fan-in job runs them: real subprocesses on synthetic
shards; exit 0 merged and PASSED, 1 a shard refused (one line naming it and why)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.unit.shard_bundles import make_shards, private_key_pem, provided_signer
from tests.wt_process import wt
from windtunnel._bundle import Signer


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Signer]:
    """A signing key file, its public key file, and the signer."""
    where = tmp_path_factory.mktemp("keys")
    pem = private_key_pem()
    (where / "signing.pem").write_bytes(pem)
    signer = provided_signer(pem)
    (where / "signer.pub.pem").write_bytes(signer.public_pem)
    return where / "signing.pem", where / "signer.pub.pem", signer


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory, keys: tuple[Path, Path, Signer]) -> list[Path]:
    return make_shards(tmp_path_factory.mktemp("plan"), 2, keys[2])


def test_merge_then_gate_passes(shards: list[Path], keys: tuple[Path, Path, Signer], tmp_path: Path) -> None:
    key, pub, _ = keys
    merged = wt("merge", *shards, "--out", tmp_path / "merged", "--key", key, "--trust", pub)
    assert merged.returncode == 0, merged.stderr
    assert merged.stdout.startswith(f"PASSED: merged 2 shards into {tmp_path / 'merged'}")
    gate = wt("verify", tmp_path / "merged", "--key", pub, "--require-passed")
    assert gate.returncode == 0, gate.stdout
    assert "verdict: PASSED" in gate.stdout


def test_a_refused_merge_exits_1_with_one_line_naming_the_shard(
    shards: list[Path], keys: tuple[Path, Path, Signer], tmp_path: Path
) -> None:
    key, _, _ = keys  # no --trust: the signer's own public key is the one trusted
    done = wt("merge", shards[0], shards[0], "--out", tmp_path / "merged", "--key", key)
    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if not line.startswith("wt merge: ")]  # not progress
    assert len(errors) == 1, done.stderr
    assert errors[0].startswith("wt: VerificationError: cannot merge: ")
    assert f"{shards[0]} and {shards[0]} are each shard 1/2" in errors[0]


def test_without_a_trusted_key_nothing_merges(shards: list[Path], tmp_path: Path) -> None:
    done = wt("merge", *shards, "--out", tmp_path / "merged")  # an ephemeral dev key trusts no shard
    assert done.returncode == 1
    assert f"{shards[0]} is not signed by a trusted key" in done.stderr


def test_print_plan_shows_the_split_every_job_computes_and_runs_nothing(tmp_path: Path) -> None:
    done = wt(
        "certify",
        "--runtime",
        "reference",
        "--runtime",
        "minimal",
        "--print-plan",
        "3",
        "--out",
        tmp_path / "o",
    )
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert plan["units"] == ["minimal", "reference"] and plan["count"] == 3
    assert [(p["index"], p["units"]) for p in plan["shards"]] == [
        (1, ["minimal"]),
        (2, ["reference"]),
        (3, []),
    ]
    again = wt("certify", "--runtime", "minimal", "--runtime", "reference", "--print-plan", "2")
    assert json.loads(again.stdout)["digest"] == plan["digest"]  # the order named and the split do not count
    assert not (tmp_path / "o").exists()  # nothing ran, --out untouched
