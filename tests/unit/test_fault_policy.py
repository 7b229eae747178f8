"""`[faults]` in runtime.toml: the default retries nothing, a variant inherits it, bad values are one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.test_runtimes_manifest import refusal, runtime
from windtunnel._runtimes.fault_policy import FaultPolicy
from windtunnel._runtimes.manifest import load_manifest

POLICY = """name = "r"
[faults]
retries = 2
retry_on = ["model_429", "model_5xx"]
backoff_s = 0.5
backoff_factor = 2
retry_after = true
turn_deadline_s = 30
unhandled = { oom = "no memory guard" }
"""


def test_no_table_is_no_retries_and_no_deadline(tmp_path: Path) -> None:
    policy = load_manifest(runtime(tmp_path, "r", 'name = "r"\n')).faults
    assert policy == FaultPolicy()
    assert policy.retries_on("model_429") == 0 and policy.turn_deadline_s is None


def test_a_declared_policy_is_read_and_a_variant_inherits_it(tmp_path: Path) -> None:
    base = runtime(tmp_path, "r", POLICY)
    policy = load_manifest(base).faults
    assert (policy.retries_on("model_429"), policy.retries_on("stream_cut")) == (2, 0)
    assert [policy.backoff(n) for n in (1, 2, 3)] == [0.5, 1.0, 2.0]
    assert (
        policy.retry_after and policy.turn_deadline_s == 30 and policy.unhandled == {"oom": "no memory guard"}
    )
    variant = base / "poison" / "storm"
    variant.mkdir(parents=True)
    (variant / "runtime.toml").write_text('name = "r-storm"\nextends = "../.."\n[faults]\nretries = 5\n')
    storm = load_manifest(variant).faults
    assert (storm.retries, storm.retry_on, storm.backoff_s) == (5, policy.retry_on, 0.5)


@pytest.mark.parametrize(
    ("table", "named"),
    [
        ("retries = 11", "faults.retries"),
        ('retries = "2"', "faults.retries"),
        ('retry_on = ["model_492"]', "did you mean 'model_429'"),
        ('retry_on = ["mcp_crash"]', "unknown fault 'mcp_crash'"),
        ("backoff_factor = 0.5", "faults.backoff_factor"),
        ("turn_deadline_s = 0", "faults.turn_deadline_s"),
        ('unhandled = { oom = " " }', "no reason"),
        ("retrys = 2", "retrys"),
    ],
)
def test_a_bad_policy_is_one_line_naming_the_key(tmp_path: Path, table: str, named: str) -> None:
    assert named in refusal(tmp_path, f"[faults]\n{table}")
