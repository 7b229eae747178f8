"""The plan split (`wt certify --shard I/N`, `--print-plan`): deterministic, sorted, round-robin, digested."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.pipeline_steps import OTHER
from tests.unit.shard_bundles import plan_config
from windtunnel._bundle.shard_models import ShardInfo, ShardPlan
from windtunnel._pipeline.config import REFERENCE
from windtunnel._pipeline.sharding import certify_plan, parse_shard, shard_config
from windtunnel.errors import UsageError


def plan(units: list[str], count: int = 2, **changes: object) -> ShardPlan:
    fields: dict[str, object] = {
        "requirement_set": "4",
        "suite_version": "4",
        "tool_version": "0.10.0",
        "tiers": ["smoke", "stable"],
        "count": count,
    }
    return ShardPlan.of(units, **(fields | changes))  # type: ignore[arg-type]


def test_the_split_is_round_robin_over_the_sorted_plan() -> None:
    made = plan(["e", "b", "a", "d", "c"], count=2)
    assert made.units == ["a", "b", "c", "d", "e"]
    assert [part.units for part in made.shards] == [["a", "c", "e"], ["b", "d"]]
    assert [part.index for part in made.shards] == [1, 2]


def test_every_job_computes_the_same_plan_whatever_the_order_it_was_named_in() -> None:
    assert plan(["minimal", "reference"]) == plan(["reference", "minimal", "minimal"])


def test_the_digest_names_what_is_certified_not_how_it_is_split() -> None:
    base = plan(["minimal", "reference"])
    assert plan(["minimal", "reference"], count=3).digest == base.digest
    for other in (
        plan(["minimal"]),
        plan(["minimal", "reference"], requirement_set="3"),
        plan(["minimal", "reference"], tiers=["smoke", "stable", "quarantined"]),
        plan(["minimal", "reference"], tool_version="0.11.0"),
    ):
        assert other.digest != base.digest


def test_more_shards_than_units_leaves_a_part_empty() -> None:
    made = plan(["minimal", "reference"], count=3)
    assert [part.units for part in made.shards] == [["minimal"], ["reference"], []]
    assert made.shard(3) == ShardInfo(plan_digest=made.digest, index=3, count=3, units=[])


@pytest.mark.parametrize("spec", ["0/2", "3/2", "x/y", "1/0", "1", "-1/2", "1/2/3", ""])
def test_a_bad_shard_spec_is_a_usage_error(spec: str) -> None:
    with pytest.raises(UsageError, match="expected I/N with 1 <= I <= N"):
        parse_shard(spec)


def test_a_good_shard_spec_parses() -> None:
    assert parse_shard("2/3") == (2, 3)
    assert parse_shard(" 1/1 ") == (1, 1)


def test_a_shard_certifies_its_part_and_the_reference_control(tmp_path: Path) -> None:
    base = plan_config(tmp_path)
    first, second = shard_config(base, 1, 2), shard_config(base, 2, 2)
    assert first.shard is not None and second.shard is not None
    assert first.shard.units == [OTHER] and second.shard.units == [REFERENCE]
    assert [d.name for d in first.descriptions()] == [REFERENCE, OTHER]
    assert [d.name for d in second.descriptions()] == [REFERENCE]
    assert first.shard.plan_digest == second.shard.plan_digest == certify_plan(base).digest


def test_an_empty_part_runs_the_control_only(tmp_path: Path) -> None:
    third = shard_config(plan_config(tmp_path), 3, 3)
    assert third.shard is not None and third.shard.units == []
    assert [d.name for d in third.descriptions()] == [REFERENCE]


def test_shard_info_refuses_an_index_beyond_the_count() -> None:
    with pytest.raises(ValueError, match="beyond count"):
        ShardInfo(plan_digest="a" * 64, index=3, count=2, units=[])
