"""Tape policy shared by replay, verify and rerecord: the clock, staleness, and the re-record command."""

from __future__ import annotations

import logging
import shlex
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from windtunnel._tapes.errors import TapeCorrupt, TapeStale
from windtunnel._tapes.fingerprint import normalize_upstream
from windtunnel._tapes.model import Tape
from windtunnel.errors import TapeError

Clock = Callable[[], datetime]
MAX_AGE = timedelta(days=30)
"""A tape is stale when its oldest interaction is older than this."""
CLOCK_SKEW = timedelta(minutes=5)
"""How far ahead of this machine's clock a tape's dates may be before the tape is refused as dated in the
future (the same allowance the bundle gives run.json)."""

log = logging.getLogger("windtunnel.tapes")

SCRIPTED_UPSTREAM_ALIAS = "scripted-upstream"
SCRIPTED_UPSTREAM_PORT = 8000
SCRIPTED_UPSTREAM = f"http://{SCRIPTED_UPSTREAM_ALIAS}:{SCRIPTED_UPSTREAM_PORT}/v1"
"""The scripted stand-in upstream of `wt tapes record --scripted-upstream`: a gateway container in script
mode, reached by the record gateway under this alias; tapes recorded against it name it as their upstream."""


def utcnow() -> datetime:
    return datetime.now(UTC)


def is_scripted(upstream: str) -> bool:
    """Whether `upstream` is the scripted stand-in of `wt tapes record --scripted-upstream`."""
    return normalize_upstream(upstream) == normalize_upstream(SCRIPTED_UPSTREAM)


def rerecord_command(tape: Tape) -> str:
    """The exact command that re-records this tape against the upstream it was recorded from.

    A tape whose lineage names its runtime, pack and scenario is re-recorded by running that scenario
    again (`wt tapes record`); any other tape by re-sending its requests (`wt tapes rerecord`).
    """
    lineage = tape.header.lineage
    if lineage.runtime and lineage.pack and lineage.scenario:
        source = (
            "--scripted-upstream"
            if is_scripted(lineage.upstream)
            else f"--upstream {shlex.quote(lineage.upstream)}"
        )
        return (
            f"wt tapes record --runtime {shlex.quote(lineage.runtime)} --pack {shlex.quote(lineage.pack)} "
            f"--scenario {shlex.quote(lineage.scenario)} {source} --out runs/tapes"
        )
    path = str(tape.path) if tape.path is not None else f"{tape.name}.jsonl"
    return f"wt tapes rerecord --tape {shlex.quote(path)} --upstream {shlex.quote(lineage.upstream)}"


def age(tape: Tape, clock: Clock = utcnow) -> timedelta:
    """How old the oldest interaction is."""
    return clock() - tape.oldest


def is_stale(tape: Tape, clock: Clock = utcnow, max_age: timedelta = MAX_AGE) -> bool:
    """Older than `max_age`; never for a tape marked scripted (its answers are the committed script, not a
    model's: see windtunnel._tapes.scripted, which checks the mark against the scenario)."""
    return not tape.header.lineage.scripted and age(tape, clock) > max_age


def stale_error(tape: Tape, clock: Clock = utcnow, max_age: timedelta = MAX_AGE) -> TapeStale:
    days = age(tape, clock).total_seconds() / 86400
    return TapeStale(
        f"tape {tape.label} is stale: its oldest interaction was recorded {tape.oldest.isoformat()}, "
        f"{days:.1f} days ago; the limit is {max_age.days} days",
        hint=f"re-record it: {rerecord_command(tape)}  (then promote it from a passing run)",
        tape=tape.label,
        age_days=days,
        max_age_days=max_age.days,
    )


def newest_date(tape: Tape) -> datetime:
    """The latest date the tape states: recorded (header, lineage, each interaction) or promoted."""
    lineage = tape.header.lineage
    dates = [tape.header.recorded_at, lineage.recorded_at, *(i.recorded_at for i in tape.interactions)]
    return max([*dates, *([lineage.promoted_at] if lineage.promoted_at else [])])


def future_error(tape: Tape, clock: Clock = utcnow, skew: timedelta = CLOCK_SKEW) -> TapeCorrupt | None:
    """A TapeCorrupt when the tape says it was recorded (or promoted) after now: such a tape would never go
    stale, so its dates cannot be trusted. None when every date is in the past."""
    newest = newest_date(tape)
    now = clock()
    if newest <= now + skew:
        return None
    return TapeCorrupt(
        f"tape {tape.label} is dated in the future: it says {newest.isoformat()}, and now is {now.isoformat()} "
        f"(allowing {skew.total_seconds() / 60:.0f} minutes of clock skew); a tape dated ahead never goes stale, "
        "so it is refused as suspect",
        hint=f"check this machine's clock, or re-record the tape: {rerecord_command(tape)}",
        tape=tape.label,
        line=1,
    )


def enforce_fresh(
    tape: Tape, *, certification: bool, clock: Clock = utcnow, max_age: timedelta = MAX_AGE
) -> str | None:
    """Certification: raise TapeStale for a stale tape, TapeCorrupt for one dated in the future.
    Development: log a warning and return it."""
    error: TapeError | None = future_error(tape, clock)
    if error is None and is_stale(tape, clock, max_age):
        error = stale_error(tape, clock, max_age)
    if error is None:
        return None
    if certification:
        raise error
    log.warning("%s", error)
    return str(error)
