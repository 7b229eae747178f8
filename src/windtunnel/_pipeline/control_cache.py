"""The reference control's selftest result, reused while nothing it depends on has changed.

The reference runtime's selftest stage (every reference case, then every scenario's proof) is the slowest
part of the known-good control and gives the same answer as long as its inputs are the same. Its key is a
digest of all of them: Wind Tunnel's version and source, the requirement set and the suite's files, the
image digests of the reference runtime and of the gateway/mock image, the selected packs' files, the
scenario and tier selection and the certification mode. Only a result in which every scored check passed
is kept (a failing control always runs afresh), only for the reference runtime (a poison is never cached),
and only under the user's cache directory, never in --out. `wt certify --no-cache` runs it afresh.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import windtunnel
from windtunnel._bundle.models import CheckRecord
from windtunnel._config import SUITE_VERSION
from windtunnel._core.vocabulary import CheckStatus
from windtunnel._files import write_atomic
from windtunnel._packs.selection import Selected

CACHE_FORMAT = 1
"""Bump when the entry's shape changes: an entry of another format is a miss."""

_SKIPPED_PARTS = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"})


@dataclass(frozen=True, slots=True)
class CachedControl:
    """A kept result: its key, the certify run it came from and when that ran, and its check records."""

    key: str
    run_id: str
    ran_at: str
    records: tuple[CheckRecord, ...]


def control_key(
    *,
    images: Mapping[str, str],
    selected: Sequence[Selected],
    suite_dir: Path,
    requirement_set: str,
    tiers: Sequence[str],
    certification: bool,
) -> str | None:
    """The digest of everything the control's selftest depends on; None when some of it cannot be
    digested (no image digests, a pack without a directory): such a control is never cached."""
    roots = {item.pack.name: item.pack.root for item in selected}
    if not images or any(root is None for root in roots.values()):
        return None
    parts: dict[str, object] = {
        "format": CACHE_FORMAT,
        "windtunnel": windtunnel.__version__,
        "windtunnel-source": tree_digest(Path(windtunnel.__file__).parent),
        "suite-version": SUITE_VERSION,
        "requirement-set": requirement_set,
        "suite": tree_digest(suite_dir),
        "images": dict(sorted(images.items())),
        "packs": {name: tree_digest(root) for name, root in sorted(roots.items()) if root is not None},
        "scenarios": sorted(f"{item.pack.name}/{item.scenario.name}" for item in selected),
        "tiers": sorted(tiers),
        "certification": certification,
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode("utf-8")).hexdigest()


def tree_digest(root: Path) -> str:
    """sha256 over every file's relative path and bytes under `root` (caches and bytecode left out)."""
    digest = hashlib.sha256()
    for path in sorted(_files(root)):
        digest.update(path.relative_to(root).as_posix().encode("utf-8") + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _files(root: Path) -> Iterable[Path]:
    if root.is_file():
        return [root]
    return (
        path
        for path in root.rglob("*")
        if path.is_file() and not _SKIPPED_PARTS.intersection(path.parts) and path.suffix != ".pyc"
    )


def load(cache_dir: Path, key: str) -> CachedControl | None:
    """The kept result under `key`, or None (absent, another format, unreadable: all a miss)."""
    try:
        entry = json.loads((cache_dir / f"{key}.json").read_text(encoding="utf-8"))
        if entry.get("format") != CACHE_FORMAT or entry.get("key") != key:
            return None
        records = tuple(CheckRecord.model_validate(r) for r in entry["records"])
        return CachedControl(
            key=key, run_id=str(entry["run_id"]), ran_at=str(entry["ran_at"]), records=records
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None  # a damaged entry costs one fresh run, never a wrong result


def keepable(records: Sequence[CheckRecord]) -> bool:
    """Only a control whose every scored check passed is kept: a failure is always shown afresh."""
    scored = [r for r in records if r.scored]
    return bool(scored) and all(r.status is CheckStatus.PASSED for r in scored)


def store(cache_dir: Path, key: str, run_id: str, ran_at: datetime, records: Sequence[CheckRecord]) -> None:
    """Keep `records` under `key` (atomically: a concurrent certify reads a whole entry or none)."""
    entry = {
        "format": CACHE_FORMAT,
        "key": key,
        "run_id": run_id,
        "ran_at": ran_at.isoformat(),
        "records": [r.model_dump(mode="json") for r in records],
    }
    write_atomic(cache_dir / f"{key}.json", json.dumps(entry, indent=1) + "\n")


def replayed(cached: CachedControl, evidence: str) -> list[CheckRecord]:
    """The kept records as this run's: marked cached (key, date), their evidence this run's cache note."""
    return [
        record.model_copy(
            update={
                "cached": True,
                "cache_key": cached.key,
                "cached_at": cached.ran_at,
                "detail": f"cached (run {cached.run_id} at {cached.ran_at}): {record.detail}",
                "evidence": [evidence],
            }
        )
        for record in cached.records
    ]
