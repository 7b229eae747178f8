"""What the signed files say must agree: checks.json, junit.xml and verdict.json, run.json and the
statement, tape ages at run time, no credentials and no host facts anywhere. Seal and verify run the same
checks."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from windtunnel._bundle import layout
from windtunnel._bundle.junit_map import JUnitShapeError, junit_statuses
from windtunnel._bundle.models import ChecksFile, RunInfo, TapeIndex, Verdict
from windtunnel._bundle.privacy_scan import HostFacts, scan_files
from windtunnel._bundle.secret_scan import scan_file
from windtunnel._bundle.shard_models import MergeInfo, ShardInfo
from windtunnel._core.vocabulary import CheckStatus
from windtunnel.errors import VerificationError

MAX_TAPE_AGE = timedelta(days=30)
CLOCK_SKEW = timedelta(minutes=5)
_M = TypeVar("_M", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class Contents:
    run: RunInfo
    checks: ChecksFile
    verdict: Verdict
    junit: dict[str, CheckStatus]
    tapes: TapeIndex | None
    shard: ShardInfo | None = None
    """shard.json: the bundle is one shard of a plan (`wt certify --shard I/N`)."""
    merge: MergeInfo | None = None
    """merge.json: the bundle merges the shards of a plan (`wt merge`)."""


def load_contents(root: Path) -> Contents:
    for name in layout.REQUIRED:
        if not (root / name).is_file():
            raise fail("content.missing", f"{name} is missing; a bundle carries {', '.join(layout.REQUIRED)}")
    try:
        junit = junit_statuses((root / layout.JUNIT).read_text(encoding="utf-8"))
    except (JUnitShapeError, UnicodeDecodeError) as exc:
        raise fail("content.format", str(exc)) from exc
    tapes = _load(root, layout.TAPE_INDEX, TapeIndex) if (root / layout.TAPE_INDEX).is_file() else None
    shard = _load(root, layout.SHARD, ShardInfo) if (root / layout.SHARD).is_file() else None
    merge = _load(root, layout.MERGE, MergeInfo) if (root / layout.MERGE).is_file() else None
    return Contents(
        run=_load(root, layout.RUN, RunInfo),
        checks=_load(root, layout.CHECKS, ChecksFile),
        verdict=_load(root, layout.VERDICT, Verdict),
        junit=junit,
        tapes=tapes,
        shard=shard,
        merge=merge,
    )


def _load(root: Path, name: str, model: type[_M]) -> _M:
    try:
        return model.model_validate_json((root / name).read_bytes())
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise fail("content.format", f"{name} does not match its schema at {where}: {first['msg']}") from exc


def check_contents(contents: Contents, files: list[str], *, now: datetime) -> None:
    """Every agreement rule of docs/bundle.md, in order; the first broken one raises."""
    _requirement_sets(contents)
    _checks_and_junit(contents)
    _verdict(contents)
    _runtimes(contents)
    _evidence(contents, files)
    _run_time(contents, now)
    _tape_ages(contents)


def check_secrets(root: Path, files: list[str]) -> None:
    for name in files:
        findings = scan_file(root, name)
        if findings:
            more = f" (+{len(findings) - 1} more)" if len(findings) > 1 else ""
            raise fail("secrets", f"a credential is in the bundle: {findings[0]}{more}")


def check_privacy(root: Path, files: list[str], facts: HostFacts) -> None:
    """No file names the host: its home, user, host name, the project's absolute path (privacy_scan)."""
    findings = scan_files(root, files, facts)
    if findings:
        more = f" (+{len(findings) - 1} more)" if len(findings) > 1 else ""
        raise fail("privacy", f"a bundle file names the machine it ran on: {findings[0]}{more}")


def _requirement_sets(contents: Contents) -> None:
    sets = {
        layout.RUN: contents.run.requirement_set,
        layout.CHECKS: contents.checks.requirement_set,
        layout.VERDICT: contents.verdict.requirement_set,
    }
    if len(set(sets.values())) > 1:
        raise fail("agreement.requirement_set", f"the files name different requirement sets: {sets}")


def _checks_and_junit(contents: Contents) -> None:
    checks = {check.id: check.status for check in contents.checks.checks}
    junit = contents.junit
    if missing := sorted(set(checks) - set(junit)):
        raise fail("agreement.junit", f"checks.json has {missing[0]} but junit.xml has no such testcase")
    if extra := sorted(set(junit) - set(checks)):
        raise fail("agreement.junit", f"junit.xml has testcase {extra[0]} that checks.json does not list")
    for check_id, status in checks.items():
        if junit[check_id] is not status:
            raise fail(
                "agreement.junit",
                f"check {check_id} is {status.value} in checks.json but {junit[check_id].value} in junit.xml",
            )


def _verdict(contents: Contents) -> None:
    stated = contents.verdict
    derived = Verdict.from_checks(contents.checks, signing_key=stated.signing_key)
    if stated.result is not derived.result:
        raise fail(
            "agreement.verdict",
            f"verdict.json says {stated.result.value} but the checks in checks.json give {derived.result.value}",
        )
    if stated != derived:
        raise fail(
            "agreement.verdict",
            "verdict.json's per-runtime results or failed checks differ from what checks.json gives: "
            f"stated {_summary(stated)}, derived {_summary(derived)}",
        )


def _summary(verdict: Verdict) -> str:
    return json.dumps(verdict.model_dump(mode="json", include={"runtimes", "harness_failures"}))


def _runtimes(contents: Contents) -> None:
    listed = {runtime.name for runtime in contents.run.runtimes}
    judged = {runtime.name for runtime in contents.verdict.runtimes}
    if unjudged := sorted(listed - judged):
        raise fail("agreement.runtimes", f"run.json certifies {unjudged[0]} but no runtime check judged it")
    if unlisted := sorted(judged - listed):
        raise fail("agreement.runtimes", f"checks judge runtime {unlisted[0]} that run.json does not list")


def _evidence(contents: Contents, files: list[str]) -> None:
    for check in contents.checks.checks:
        for path in check.evidence:
            prefix = path.rstrip("/") + "/"
            if path not in files and not any(name.startswith(prefix) for name in files):
                raise fail(
                    "agreement.evidence", f"check {check.id} cites evidence {path} that is not in the bundle"
                )


def _run_time(contents: Contents, now: datetime) -> None:
    if contents.run.started_at > now + CLOCK_SKEW:
        raise fail(
            "run.time",
            f"run.json says the run started at {contents.run.started_at.isoformat()}, after now ({now.isoformat()})",
        )


def _tape_ages(contents: Contents) -> None:
    if contents.tapes is None:
        return
    started = contents.run.started_at
    for tape in contents.tapes.tapes:
        if tape.scripted:
            continue  # its answers are the scenario's script: nothing on it ages (docs/tapes.md)
        age = started - tape.recorded_at
        if age > MAX_TAPE_AGE:
            raise fail(
                "tapes.age",
                f"tape {tape.name} was {age.days} days old when the run started "
                f"(recorded {tape.recorded_at.isoformat()}, run started {started.isoformat()}); the limit is "
                f"{MAX_TAPE_AGE.days} days",
            )


def fail(check: str, message: str) -> VerificationError:
    return VerificationError(message, check=check, reason=message)
