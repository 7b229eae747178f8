"""Promotion: a passing run's tape becomes an immutable golden tape, tied to the scores of the run that recorded it.

A score is tied to a tape when nothing contradicts: the run ids the tape names (`lineage.source_run`) are the
scores' run ids, and the runtime, pack and scenario the tape names are the scores'. A tape that names none of
these cannot be tied to any score and is refused. The new golden tape retires (removes) older golden tapes of
the same tape name or the same runtime, pack and scenario in its directory, so the tape stage never replays
a predecessor; git keeps their history.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from windtunnel._score.models import Score
from windtunnel._tapes.checks import GOLDEN_NAME, fingerprint_problems
from windtunnel._tapes.errors import TapePromotionRefused
from windtunnel._tapes.model import Lineage, Tape
from windtunnel._tapes.policy import (
    MAX_AGE,
    Clock,
    future_error,
    is_stale,
    rerecord_command,
    stale_error,
    utcnow,
)
from windtunnel._tapes.store import dump_line, dumps_tape, load_tape, write_tape
from windtunnel.errors import TapeError, UsageError

_NAMED = ("runtime", "pack", "scenario")
"""Lineage fields a score must agree with (Score has fields of the same names)."""


@dataclass(frozen=True, slots=True)
class Promotion:
    """The golden tape (`created` False when the same recording was already promoted) and what it retired."""

    path: Path
    created: bool
    superseded: tuple[Path, ...] = ()


def read_scores(paths: Sequence[Path]) -> list[Score]:
    """The score sidecars named by --score; none, or one that is not a score, is a usage error."""
    if not paths:
        raise UsageError(
            "no score file given", hint="pass --score RUN_DIR/<case>.score.json", field="--score"
        )
    return [_read_score(path) for path in paths]


def _read_score(path: Path) -> Score:
    try:
        return Score.model_validate_json(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise UsageError(
            f"{path} is not a readable score sidecar: {exc}",
            hint="pass the .score.json file that `wt run` wrote next to the trace",
            path=str(path),
        ) from exc


def lineage_from_scores(scores: Sequence[Score]) -> dict[str, str]:
    """What the scores say about the recording run: its run ids, and with a single score its runtime, pack,
    scenario and verdict (several scores, a tape spanning runs, name no single scenario)."""
    found = {"source_run": ",".join(sorted({score.run_id for score in scores}))}
    if len(scores) != 1:
        return found
    (score,) = scores
    named = {"runtime": score.runtime, "pack": score.pack, "scenario": score.scenario}
    return found | {key: value for key, value in named.items() if value} | {"verdict": score.status.value}


def tie_problems(tape: Tape, scores: Sequence[Score]) -> list[str]:
    """Why these scores are not of the run that recorded `tape` (empty when nothing contradicts)."""
    lineage = tape.header.lineage
    if lineage.source_run is None and not any(getattr(lineage, key) for key in _NAMED):
        return [
            "the tape names no run (its lineage has no source_run, runtime, pack or scenario), so no score "
            "can be tied to it"
        ]
    problems = []
    if lineage.source_run is not None:
        named = set(lineage.source_run.split(","))
        given = {score.run_id for score in scores}
        if named != given:
            problems.append(
                f"the tape was recorded by run {', '.join(sorted(named))}, the scores are of run "
                f"{', '.join(sorted(given))}"
            )
    for key in _NAMED:
        recorded = getattr(lineage, key)
        others = sorted(
            {_shown(getattr(score, key), key) for score in scores if getattr(score, key) != recorded}
        )
        if recorded is not None and others:
            problems.append(f"the tape names {key} {recorded!r}, the score names {', '.join(others)}")
    return problems


def _shown(value: str | None, key: str) -> str:
    return repr(value) if value is not None else f"no {key}"


def promote(
    run_tape: Path,
    to_dir: Path,
    *,
    scores: Sequence[Score],
    clock: Clock = utcnow,
    max_age: timedelta = MAX_AGE,
) -> Promotion:
    """Copy a passing run's tape into `to_dir` as an immutable golden tape `<tape>-<sha256>.jsonl`.

    Refuses when a score did not pass, when the scores are not of the run that recorded the tape, and a
    tape that fails its checks or is stale. Promoting the same recording again returns the existing golden
    tape (created=False); no golden tape is ever overwritten. The lineage gains the scores' run ids and,
    from a single score, the runtime, pack, scenario and verdict.
    """
    label = str(run_tape)
    _passing(scores, label)
    tape = load_tape(run_tape)
    tied = tie_problems(tape, scores)
    if tied:
        raise TapePromotionRefused(
            f"refusing to promote {run_tape} with these scores: {'; '.join(tied)}",
            hint="pass the .score.json of the run that recorded this tape (`wt tapes record` ties them "
            "itself; a standalone record gateway names its run with --runtime/--pack/--scenario)",
            tape=label,
        )
    _promotable(tape, clock, max_age)
    existing = _already_promoted(tape, to_dir)
    if existing is not None:
        return Promotion(existing, created=False, superseded=supersede(to_dir, existing))
    golden = _golden(tape, run_tape, lineage_from_scores(scores), clock)
    digest = hashlib.sha256(dumps_tape(golden).encode("utf-8")).hexdigest()
    target = to_dir / f"{tape.name}-{digest}.jsonl"
    try:
        write_tape(golden, target, exclusive=True)
    except FileExistsError:
        return Promotion(target, created=False, superseded=supersede(to_dir, target))
    return Promotion(target, created=True, superseded=supersede(to_dir, target))


def _passing(scores: Sequence[Score], label: str) -> None:
    failed = [score for score in scores if not score.passed]
    if not scores or failed:
        why = f"run {failed[0].run_id} scored {failed[0].status.value}" if failed else "no score was given"
        raise TapePromotionRefused(
            f"refusing to promote {label}: the run that recorded it did not pass ({why})",
            hint="only a passing run's tape becomes golden; fix the run, record again, then promote",
            tape=label,
        )


def _golden(tape: Tape, run_tape: Path, lineage: Mapping[str, str], clock: Clock) -> Tape:
    promoted = Lineage.model_validate(
        {
            **tape.header.lineage.model_dump(),
            **lineage,
            "promoted_at": clock(),
            "promoted_from": f"{run_tape.name} sha256:{hashlib.sha256(run_tape.read_bytes()).hexdigest()}",
        }
    )
    header = tape.header.model_copy(update={"lineage": promoted})
    return dataclasses.replace(tape, header=header, path=None)


def _promotable(tape: Tape, clock: Clock, max_age: timedelta) -> None:
    problems = fingerprint_problems(tape)
    if (future := future_error(tape, clock)) is not None:
        problems.append(future.message)
    if is_stale(tape, clock, max_age):
        problems.append(str(stale_error(tape, clock, max_age)))
    if problems:
        raise TapePromotionRefused(
            f"refusing to promote {tape.label}: {problems[0]}",
            hint=f"record it again ({rerecord_command(tape)}) from a passing run, then promote",
            tape=tape.label,
        )


def _interactions_digest(tape: Tape) -> str:
    return hashlib.sha256("".join(dump_line(i) for i in tape.interactions).encode("utf-8")).hexdigest()


def _already_promoted(tape: Tape, to_dir: Path) -> Path | None:
    """A golden tape in `to_dir` with the same name and the same recorded interactions."""
    wanted = _interactions_digest(tape)
    for path in sorted(to_dir.glob(f"{tape.name}-*.jsonl")):
        named = GOLDEN_NAME.match(path.name)
        if named is None or named["tape"] != tape.name:
            continue
        try:
            if _interactions_digest(load_tape(path)) == wanted:
                return path
        except TapeError:
            continue  # a broken golden tape is not this recording; verify reports it
    return None


def supersede(golden_dir: Path, current: Path) -> tuple[Path, ...]:
    """Remove the older golden tapes `current` replaces: the same tape name, or the same runtime, pack and
    scenario in the lineage. Golden files are never edited; a newer recording takes the old one's place, so
    the tape stage does not keep replaying (and failing on) a stale predecessor. Git keeps their history."""
    named = GOLDEN_NAME.match(current.name)
    if named is None:
        return ()
    run = _run_of(current)
    older = [
        path
        for path in sorted(golden_dir.glob("*.jsonl"))
        if path != current
        and (match := GOLDEN_NAME.match(path.name)) is not None
        and (match["tape"] == named["tape"] or (run is not None and _run_of(path) == run))
    ]
    for path in older:
        path.unlink()
    return tuple(older)


def _run_of(path: Path) -> tuple[str, str, str] | None:
    """(runtime, pack, scenario) a golden tape's lineage names, when it names all three and loads."""
    try:
        lineage = load_tape(path).header.lineage
    except TapeError:
        return None
    if lineage.runtime and lineage.pack and lineage.scenario:
        return (lineage.runtime, lineage.pack, lineage.scenario)
    return None
