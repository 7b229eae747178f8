"""The tape lifecycle: find committed tapes, verify them, promote a passing run's tape, propose refreshes."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from windtunnel._packs.pack import Pack
from windtunnel._score.models import Score
from windtunnel._tapes.checks import GOLDEN_NAME, fingerprint_problems, golden_problems
from windtunnel._tapes.errors import TapePromotionRefused
from windtunnel._tapes.model import Lineage, Tape
from windtunnel._tapes.policy import MAX_AGE, Clock, is_stale, rerecord_command, stale_error, utcnow
from windtunnel._tapes.replay import ReplayMode
from windtunnel._tapes.store import dump_line, dumps_tape, load_tape, write_tape
from windtunnel.errors import TapeError, UsageError

TAPES_DIR = "tapes"


@dataclass(frozen=True, slots=True)
class TapeFile:
    """A tape file and the pack whose `tapes/` directory holds it (None for a path given directly)."""

    path: Path
    pack: str | None = None


@dataclass(slots=True, kw_only=True)
class TapeCheck:
    """What `verify` found for one tape: problems fail it, warnings do not."""

    file: TapeFile
    tape: Tape | None = None
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    stale: bool = False

    @property
    def ok(self) -> bool:
        return not self.problems


def find_tapes(packs: Sequence[Pack]) -> list[TapeFile]:
    """Every `*.jsonl` under each pack's `tapes/` directory, sorted by path."""
    found: list[TapeFile] = []
    for pack in packs:
        if pack.root is None:
            continue
        directory = pack.root / TAPES_DIR
        found += [TapeFile(path, pack.name) for path in sorted(directory.rglob("*.jsonl"))]
    return found


def verify_tape(
    file: TapeFile, *, certification: bool = True, clock: Clock = utcnow, max_age: timedelta = MAX_AGE
) -> TapeCheck:
    """Load (format and secrets), check fingerprints and golden content address, replay the tape's own
    requests through replay mode, then check staleness."""
    check = TapeCheck(file=file)
    try:
        check.tape = load_tape(file.path)
    except TapeError as exc:
        check.problems.append(f"{type(exc).__name__}: {exc}")
        return check
    check.problems += [f"TapeCorrupt: {problem}" for problem in fingerprint_problems(check.tape)]
    check.problems += [f"TapeCorrupt: {problem}" for problem in golden_problems(file.path)]
    check.problems += self_replay_problems(check.tape)
    check.stale = is_stale(check.tape, clock, max_age)
    if check.stale:
        message = f"TapeStale: {stale_error(check.tape, clock, max_age)}"
        (check.problems if certification else check.warnings).append(message)
    return check


def self_replay_problems(tape: Tape) -> list[str]:
    """Send the tape's recorded requests, in order, through ReplayMode: each must be answered by its own
    interaction and none may be left over. (Staleness is judged separately, so it is not checked here.)"""
    mode = ReplayMode(tape, certification=False, clock=lambda: tape.oldest)
    problems: list[str] = []
    for interaction in tape.interactions:
        request = interaction.request
        try:
            answered = mode.match(request.method, request.path, request.body)
        except TapeError as exc:
            problems.append(
                f"{type(exc).__name__}: replaying seq {interaction.seq}: {exc.message.splitlines()[0]}"
            )
            continue
        if answered.seq != interaction.seq:
            problems.append(
                f"TapeMismatch: replaying seq {interaction.seq} was answered by seq {answered.seq}"
            )
    unused = mode.unused()
    if not unused.ok:
        problems.append(f"TapeUnused: {unused.render()}")
    return problems


def verify_tapes(
    files: Iterable[TapeFile],
    *,
    certification: bool = True,
    clock: Clock = utcnow,
    max_age: timedelta = MAX_AGE,
) -> list[TapeCheck]:
    return [verify_tape(f, certification=certification, clock=clock, max_age=max_age) for f in files]


def passed_from_scores(paths: Sequence[Path]) -> tuple[bool, str | None]:
    """Whether every score sidecar passed, and the run id they name (the tape's source run)."""
    if not paths:
        raise UsageError(
            "no score file given", hint="pass --score RUN_DIR/<case>.score.json", field="--score"
        )
    scores = [_read_score(path) for path in paths]
    run_ids = sorted({score.run_id for score in scores})
    return all(score.passed for score in scores), ",".join(run_ids)


def lineage_from_scores(paths: Sequence[Path]) -> dict[str, str]:
    """What one score sidecar says about the recording run (runtime, pack, scenario, verdict); several
    scores (a tape spanning runs) name no single scenario, so they add nothing."""
    if len(paths) != 1:
        return {}
    score = _read_score(paths[0])
    found = {"runtime": score.runtime, "pack": score.pack, "scenario": score.scenario}
    return {key: value for key, value in found.items() if value} | {"verdict": score.status.value}


def _read_score(path: Path) -> Score:
    try:
        return Score.model_validate_json(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise UsageError(
            f"{path} is not a readable score sidecar: {exc}",
            hint="pass the .score.json file that `wt run` wrote next to the trace",
            path=str(path),
        ) from exc


@dataclass(frozen=True, slots=True)
class Promotion:
    path: Path
    created: bool


def promote(
    run_tape: Path,
    to_dir: Path,
    *,
    passed: bool,
    source_run: str | None = None,
    clock: Clock = utcnow,
    max_age: timedelta = MAX_AGE,
    lineage: Mapping[str, str] | None = None,
) -> Promotion:
    """Copy a passing run's tape into `to_dir` as an immutable golden tape `<tape>-<sha256>.jsonl`.

    Refuses a failing run, a tape that fails its checks, and a stale tape. Promoting the same recording
    again returns the existing golden tape (created=False); no golden tape is ever overwritten.
    `lineage` adds what the recording run was (Lineage.runtime, pack, scenario, verdict).
    """
    label = str(run_tape)
    if not passed:
        raise TapePromotionRefused(
            f"refusing to promote {run_tape}: the run that recorded it did not pass",
            hint="only a passing run's tape becomes golden; fix the run, record again, then promote",
            tape=label,
        )
    tape = load_tape(run_tape)
    _promotable(tape, clock, max_age)
    existing = _already_promoted(tape, to_dir)
    if existing is not None:
        return Promotion(existing, created=False)
    promoted = Lineage.model_validate(
        {
            **tape.header.lineage.model_dump(),
            **(lineage or {}),
            "promoted_at": clock(),
            "promoted_from": f"{run_tape.name} sha256:{hashlib.sha256(run_tape.read_bytes()).hexdigest()}",
            "source_run": source_run or tape.header.lineage.source_run,
        }
    )
    header = tape.header.model_copy(update={"lineage": promoted})
    golden = dataclasses.replace(tape, header=header, path=None)
    digest = hashlib.sha256(dumps_tape(golden).encode("utf-8")).hexdigest()
    target = to_dir / f"{tape.name}-{digest}.jsonl"
    try:
        write_tape(golden, target, exclusive=True)
    except FileExistsError:
        return Promotion(target, created=False)
    return Promotion(target, created=True)


def _promotable(tape: Tape, clock: Clock, max_age: timedelta) -> None:
    problems = fingerprint_problems(tape)
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
        if _interactions_digest(load_tape(path)) == wanted:
            return path
    return None


@dataclass(frozen=True, slots=True)
class Proposal:
    """A refresh `rerecord` proposes: which tape, why, and the command that does it."""

    path: Path
    reason: str
    command: str


def propose_refreshes(checks: Iterable[TapeCheck], *, include_fresh: bool = False) -> list[Proposal]:
    """A re-record command for every stale tape (every loadable tape with include_fresh)."""
    proposals: list[Proposal] = []
    for check in checks:
        if check.tape is None or not (check.stale or include_fresh):
            continue
        reason = "stale" if check.stale else "refresh requested"
        proposals.append(Proposal(check.file.path, reason, rerecord_command(check.tape)))
    return proposals
