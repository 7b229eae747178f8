"""The merged checks.json of a sharded certification: one rule, used by `wt merge` and by `wt verify`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from windtunnel._bundle import layout
from windtunnel._bundle.content import fail
from windtunnel._bundle.models import CheckRecord, ChecksFile
from windtunnel._core.vocabulary import CheckStatus

_SEVERITY = (
    CheckStatus.INFO,
    CheckStatus.PASSED,
    CheckStatus.NOT_MEASURED,
    CheckStatus.FAILED,
    CheckStatus.ERROR,
)
"""Worst last: a check several shards ran (the reference control's) is as bad as its worst run."""


def shard_prefix(index: int) -> str:
    """Where shard `index` lies in a merged bundle."""
    return f"{layout.SHARDS_DIR}/{index}"


def merged_checks(parts: Sequence[tuple[str, ChecksFile]]) -> ChecksFile:
    """The shards' checks as one checks.json: `parts` are (prefix, checks) in index order. A check id several
    shards hold (the reference control's, the harness's) becomes one check with the worst status; every
    evidence path is cited under its shard's prefix."""
    sets = sorted({checks.requirement_set for _, checks in parts})
    if len(sets) != 1:
        raise fail("merge.checks", f"the shards name different requirement sets: {', '.join(sets)}")
    by_id: dict[str, list[tuple[str, CheckRecord]]] = {}
    for prefix, checks in parts:
        for check in checks.checks:
            by_id.setdefault(check.id, []).append((prefix, check))
    return ChecksFile(requirement_set=sets[0], checks=[_combined(records) for records in by_id.values()])


def _combined(records: list[tuple[str, CheckRecord]]) -> CheckRecord:
    first = records[0][1]
    checks = [check for _, check in records]
    if len({(c.runtime, c.stage, c.scope) for c in checks}) > 1:
        raise fail(
            "merge.checks",
            f"check {first.id} is of different runtimes, stages or scopes in "
            + " and ".join(prefix for prefix, _ in records),
        )
    status = max((c.status for c in checks), key=_SEVERITY.index)
    details = list(dict.fromkeys(c.detail for c in checks))
    return first.model_copy(
        update={
            "status": status,
            "scored": status is not CheckStatus.INFO and any(c.scored for c in checks),
            "detail": details[0]
            if len(details) == 1
            else "; ".join(f"{prefix}: {check.detail}" for prefix, check in records),
            "evidence": [f"{prefix}/{path}" for prefix, check in records for path in check.evidence],
            "seconds": round(sum(c.seconds for c in checks), 3),
            "cached": all(c.cached for c in checks),
            "cache_key": _same(c.cache_key for c in checks),
            "cached_at": _same(c.cached_at for c in checks),
        }
    )


def _same(values: Iterable[str | None]) -> str | None:
    distinct = set(values)
    return distinct.pop() if len(distinct) == 1 else None
