"""The sharded certification's files: the plan (`wt certify --print-plan`), shard.json and merge.json.

A plan is the sorted list of what one certification certifies (its units: the runtimes), split round-robin
into N parts, so every CI job computes the same split from the same inputs without talking to the others.
Its digest names the plan; each shard records it (shard.json, a signed subject, and the predicate), and
`wt merge` requires one shard per index of one digest (docs/ci.md, "Sharded certification").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from windtunnel._bundle.canonical import canonical_json, is_sha256_hex, sha256_hex


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _digest(value: str) -> str:
    if not is_sha256_hex(value):
        raise ValueError(f"must be 64 lowercase hex digits (a sha256), found {value!r}")
    return value


Sha256Hex = Annotated[str, AfterValidator(_digest)]


class ShardPart(_Model):
    index: int = Field(ge=1, description="1-based: --shard INDEX/COUNT")
    units: list[str] = Field(
        description="the runtimes this shard certifies (the reference control runs always)"
    )


class ShardPlan(_Model):
    """What `wt certify --print-plan` prints: the plan, its digest and each shard's part."""

    schema_version: Literal[1] = 1
    digest: Sha256Hex = Field(
        description="sha256 of the canonical JSON of everything below but count and shards"
    )
    requirement_set: str
    suite_version: str
    tool_version: str
    tiers: list[str]
    units: list[str] = Field(description="what the plan certifies, sorted")
    count: int = Field(ge=1, description="how many shards the plan is split into")
    shards: list[ShardPart]

    @classmethod
    def of(
        cls,
        units: Sequence[str],
        *,
        requirement_set: str,
        suite_version: str,
        tool_version: str,
        tiers: Sequence[str],
        count: int,
    ) -> ShardPlan:
        """The plan of `units` split into `count` parts: the k-th unit of the sorted plan goes to shard
        k mod count + 1, so the split needs nothing but the plan (a part may be empty: that shard runs the
        reference control only)."""
        if count < 1:
            raise ValueError(f"a plan is split into at least one shard, not {count}")
        ordered = sorted(set(units))
        identity: dict[str, Any] = {
            "requirement_set": requirement_set,
            "suite_version": suite_version,
            "tool_version": tool_version,
            "tiers": sorted(tiers),
            "units": ordered,
        }
        parts = [ShardPart(index=i + 1, units=ordered[i::count]) for i in range(count)]
        return cls(digest=sha256_hex(canonical_json(identity)), count=count, shards=parts, **identity)

    def shard(self, index: int) -> ShardInfo:
        """What shard `index` (1-based) records in its bundle."""
        part = self.shards[index - 1]
        return ShardInfo(plan_digest=self.digest, index=index, count=self.count, units=part.units)


class ShardInfo(_Model):
    """shard.json: a shard's place in its plan; signed as a subject and in the statement's predicate."""

    schema_version: Literal[1] = 1
    plan_digest: Sha256Hex
    index: int = Field(ge=1)
    count: int = Field(ge=1)
    units: list[str] = Field(description="the runtimes of the plan this shard certifies")

    @model_validator(mode="after")
    def _index_in_range(self) -> ShardInfo:
        if self.index > self.count:
            raise ValueError(f"index {self.index} is beyond count {self.count}")
        return self

    @property
    def label(self) -> str:
        return f"{self.index}/{self.count}"


class MergedShard(_Model):
    index: int = Field(ge=1)
    prefix: str = Field(description="where the shard's whole bundle lies in the merged one: shards/<index>")
    statement_sha256: Sha256Hex = Field(
        description="sha256 of the shard's signed statement (the DSSE payload)"
    )
    keyid: Sha256Hex = Field(
        description="the trusted key that signed the shard (hex SHA-256 of its DER SPKI)"
    )
    run_id: str
    units: list[str]


class MergeInfo(_Model):
    """merge.json: the shards `wt merge` verified and put together, one per index of one plan."""

    schema_version: Literal[1] = 1
    plan_digest: Sha256Hex
    count: int = Field(ge=1)
    shards: list[MergedShard]

    @model_validator(mode="after")
    def _one_per_index(self) -> MergeInfo:
        indices = [shard.index for shard in self.shards]
        if indices != list(range(1, self.count + 1)):
            raise ValueError(f"shards must be 1..{self.count} in order, found {indices}")
        return self
