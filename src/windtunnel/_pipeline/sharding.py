"""The certification plan split into shards (`wt certify --shard I/N`, `--print-plan`): every job computes
the same split from the same inputs, without talking to the others (docs/ci.md, "Sharded certification")."""

from __future__ import annotations

import dataclasses
import re

from windtunnel import __version__
from windtunnel._bundle.shard_models import ShardInfo, ShardPlan
from windtunnel._config import SUITE_VERSION, Settings
from windtunnel._core.tiers import GATE_TIERS
from windtunnel._pipeline.config import REFERENCE, CertifyConfig
from windtunnel._runtimes.resolve import RuntimeDescription, resolve_runtimes
from windtunnel.errors import UsageError

_SPEC = re.compile(r"^(\d+)/(\d+)$")


def parse_shard(spec: str) -> tuple[int, int]:
    """`I/N` (1 <= I <= N) as (I, N); anything else is a usage error saying what is expected."""
    found = _SPEC.match(spec.strip())
    index, count = (int(found[1]), int(found[2])) if found else (0, 0)
    if not found or count < 1 or not 1 <= index <= count:
        raise UsageError(
            f"--shard {spec!r} is not a shard of a plan: expected I/N with 1 <= I <= N",
            hint="for a plan split in two, run --shard 1/2 and --shard 2/2",
            field="--shard",
        )
    return index, count


def certify_plan(config: CertifyConfig, count: int = 1) -> ShardPlan:
    """The plan of this certification: the runtimes it was asked to certify (the reference control runs in
    every shard besides), the requirement set, suite, tool version and tiers, split into `count` parts."""
    return ShardPlan.of(
        [d.name for d in _asked(config)],
        requirement_set=config.requirement_set,
        suite_version=SUITE_VERSION,
        tool_version=__version__,
        tiers=config.tiers or GATE_TIERS,
        count=count,
    )


def shard_config(config: CertifyConfig, index: int, count: int) -> CertifyConfig:
    """The config of shard `index` of `count`: its part of the plan and the reference control (the whole
    of an empty part), and shard.json's content for the bundle."""
    plan = certify_plan(config, count)
    info: ShardInfo = plan.shard(index)
    asked = {d.name: d for d in _asked(config)}
    control = next(d for d in config.descriptions() if d.name == REFERENCE)
    described = tuple({d.name: d for d in (control, *(asked[name] for name in info.units))}.values())
    return dataclasses.replace(config, runtimes=tuple(info.units), described=described, shard=info)


def _asked(config: CertifyConfig) -> tuple[RuntimeDescription, ...]:
    project = config.project or Settings(root=config.root, source=None)
    return resolve_runtimes(config.runtimes, project)
