"""Synthetic shard bundles, made by the real plan split, stage plan, publish and seal over the small real
steps of pipeline_steps (no containers): for the merge's unit tests and bench/bench_merge.py."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.unit.pipeline_steps import OTHER, Executor, build, config, step
from windtunnel._bundle import Signer
from windtunnel._bundle.models import Stage
from windtunnel._core.vocabulary import CheckStatus
from windtunnel._pipeline.config import REFERENCE, CertifyConfig
from windtunnel._pipeline.plan import Step, execute
from windtunnel._pipeline.publish import Published, publish
from windtunnel._pipeline.sharding import shard_config

UNITS = (OTHER, REFERENCE)
"""The plan of these tests: the in-memory runtime and the reference (which every shard runs as control)."""


def private_key_pem() -> bytes:
    """A fresh P-256 signing key as a user's key file holds it (PKCS#8 PEM)."""
    return ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def provided_signer(pem: bytes | None = None) -> Signer:
    """A key as a user provides it (not an ephemeral dev key)."""
    return Signer.from_pem(pem or private_key_pem(), source="test key")


def steps(status_for: Callable[[str], CheckStatus] | None = None) -> tuple[Step, ...]:
    return (
        build(),
        step(Stage.CONFORMANCE, status_for, "surface"),
        step(Stage.SELFTEST, status_for, "golden"),
    )


def plan_config(tmp_path: Path, runtimes: Sequence[str] = UNITS) -> CertifyConfig:
    return config(tmp_path, runtimes=runtimes)


def certify(cfg: CertifyConfig, out: Path, signer: Signer, plan: Sequence[Step] | None = None) -> Published:
    """One real certify run of `cfg` (stage plan, publish, seal) into `out`."""
    cfg = dataclasses.replace(cfg, out_dir=out)
    outcome = execute(plan or steps(), cfg, Executor())
    return publish(cfg, outcome, signer=signer)


def make_shards(
    tmp_path: Path,
    count: int,
    signer: Signer,
    *,
    runtimes: Sequence[str] = UNITS,
    plan: Sequence[Step] | None = None,
) -> list[Path]:
    """Shards 1..count of the plan of `runtimes`, each a sealed bundle in tmp_path/shard-<i>."""
    base = plan_config(tmp_path, runtimes)
    paths = []
    for index in range(1, count + 1):
        out = tmp_path / f"shard-{index}"
        certify(shard_config(base, index, count), out, signer, plan)
        paths.append(out)
    return paths
