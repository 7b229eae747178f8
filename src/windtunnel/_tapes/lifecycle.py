"""The tape lifecycle: find committed tapes, verify them, warn before they go stale, propose refreshes.

Committed tapes live in `<pack>/tapes/<runtime>/<tape>-<sha256>.jsonl`: the directory names the runtime
that recorded them and the tape stage replays through. `find_tapes` finds every `*.jsonl` under `tapes/`;
one outside a runtime directory is never replayed, so `verify_tape` fails it. Promotion is in
windtunnel._tapes.promotion.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from windtunnel._packs.pack import Pack
from windtunnel._scenario.model import Scenario
from windtunnel._tapes.checks import golden_problems, tampered
from windtunnel._tapes.model import Tape
from windtunnel._tapes.policy import (
    MAX_AGE,
    Clock,
    future_error,
    is_stale,
    newest_date,
    rerecord_command,
    stale_error,
    utcnow,
)
from windtunnel._tapes.replay import ReplayMode
from windtunnel._tapes.scripted import scripted_problems
from windtunnel._tapes.store import load_tape
from windtunnel.errors import TapeError

TAPES_DIR = "tapes"
EXPIRING_WITHIN = timedelta(days=7)
"""How long before a tape goes stale `list` and `verify` start warning about it (--expiring-within)."""


@dataclass(frozen=True, slots=True)
class TapeFile:
    """A tape file, the pack whose `tapes/` holds it (None for a path given directly), and the runtime
    directory it sits in (`tapes/<runtime>/`; None when it sits anywhere else). `source` is that pack,
    loaded, when at hand: a scripted tape's answers are checked against its scenario."""

    path: Path
    pack: str | None = None
    runtime: str | None = None
    source: Pack | None = field(default=None, compare=False, repr=False)

    def scenario(self, name: str | None) -> Scenario | None:
        if self.source is None or name is None:
            return None
        return next((scenario for scenario in self.source.scenarios if scenario.name == name), None)


@dataclass(slots=True, kw_only=True)
class TapeCheck:
    """What `verify` found for one tape: problems fail it, warnings do not."""

    file: TapeFile
    tape: Tape | None = None
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    stale: bool = False
    expires_at: datetime | None = None
    expiring: bool = False

    @property
    def ok(self) -> bool:
        return not self.problems


def find_tapes(packs: Sequence[Pack]) -> list[TapeFile]:
    """Every `*.jsonl` under each pack's `tapes/` directory, sorted by path, with its runtime directory."""
    found: list[TapeFile] = []
    for pack in packs:
        if pack.root is None:
            continue
        directory = pack.root / TAPES_DIR
        for path in sorted(directory.rglob("*.jsonl")):
            parts = path.relative_to(directory).parts
            found.append(TapeFile(path, pack.name, parts[0] if len(parts) == 2 else None, pack))
    return found


def committed_tapes(packs: Sequence[Pack], runtime: str) -> list[TapeFile]:
    """The tapes the tape stage replays through `runtime`: those in `<pack>/tapes/<runtime>/`."""
    return [file for file in find_tapes(packs) if file.runtime == runtime]


def verify_tape(
    file: TapeFile,
    *,
    certification: bool = True,
    clock: Clock = utcnow,
    max_age: timedelta = MAX_AGE,
    expiring_within: timedelta = EXPIRING_WITHIN,
) -> TapeCheck:
    """Load (format and secrets), check fingerprints, golden content address and layout, replay the tape's
    own requests through replay mode, then check staleness and warn when it is close."""
    check = TapeCheck(file=file)
    try:
        check.tape = tape = load_tape(file.path)
    except TapeError as exc:
        check.problems.append(f"{type(exc).__name__}: {exc}")
        return check
    check.problems += [f"TapeMismatch: {mismatch.message}" for mismatch in tampered(tape)]
    check.problems += [f"TapeCorrupt: {problem}" for problem in golden_problems(file.path)]
    check.problems += layout_problems(file, tape)
    check.problems += self_replay_problems(tape)
    _judge_scripted(check, file, tape)
    if (future := future_error(tape, clock)) is not None:
        check.problems.append(f"TapeCorrupt: {future.message}")
    _judge_age(check, tape, certification=certification, clock=clock, max_age=max_age, soon=expiring_within)
    return check


def layout_problems(file: TapeFile, tape: Tape) -> list[str]:
    """A committed tape outside `tapes/<runtime>/`, or in another runtime's directory, is never replayed
    through the runtime that recorded it."""
    if file.pack is None:
        return []  # a path given directly (a run tape) is not committed
    if file.runtime is None:
        return [
            f"misplaced: {file.path} is not in a runtime directory, so the tape stage never replays it; "
            f"committed tapes live in <pack>/tapes/<runtime>/ (move it into tapes/"
            f"{tape.header.lineage.runtime or '<runtime>'}/)"
        ]
    recorded = tape.header.lineage.runtime
    if recorded is not None and recorded != file.runtime:
        return [
            f"misplaced: the tape was recorded through runtime {recorded!r} but sits in tapes/{file.runtime}/, "
            f"so it would be replayed through {file.runtime!r}; move it into tapes/{recorded}/"
        ]
    return []


def _judge_scripted(check: TapeCheck, file: TapeFile, tape: Tape) -> None:
    """A tape marked scripted must hold its scenario's script; a tape with no pack at hand cannot be checked."""
    if not tape.header.lineage.scripted:
        return
    if file.source is None:
        check.warnings.append(
            f"tape {tape.label} is marked scripted (exempt from the age limit), which is checked against its "
            "scenario only when the tape is found through its pack (--pack), not given by path"
        )
        return
    check.problems += scripted_problems(tape, file.scenario(tape.header.lineage.scenario))


def _judge_age(
    check: TapeCheck, tape: Tape, *, certification: bool, clock: Clock, max_age: timedelta, soon: timedelta
) -> None:
    if tape.header.lineage.scripted:
        return  # no expiry: its answers are the scenario's script (windtunnel._tapes.scripted)
    check.expires_at = tape.oldest + max_age
    check.stale = is_stale(tape, clock, max_age)
    if check.stale:
        message = f"TapeStale: {stale_error(tape, clock, max_age)}"
        (check.problems if certification else check.warnings).append(message)
        return
    left = check.expires_at - clock()
    if left <= soon:
        check.expiring = True
        check.warnings.append(
            f"expiring soon: tape {tape.label} goes stale at {check.expires_at.astimezone(UTC):%Y-%m-%d %H:%M} UTC, in "
            f"{left.total_seconds() / 86400:.1f} days (warning from {soon.days} days before); then "
            f"certification fails on it. Re-record it now: {rerecord_command(tape)}"
        )


def self_replay_problems(tape: Tape) -> list[str]:
    """Send the tape's recorded requests, in order, through ReplayMode: each must be answered by its own
    interaction and none may be left over. (Staleness is judged separately, so it is not checked here.)"""
    # Judged as of the tape's own latest date: its age and dates are checked separately.
    mode = ReplayMode(tape, certification=False, clock=lambda: newest_date(tape), max_age=timedelta.max)
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
    expiring_within: timedelta = EXPIRING_WITHIN,
) -> list[TapeCheck]:
    return [
        verify_tape(
            f, certification=certification, clock=clock, max_age=max_age, expiring_within=expiring_within
        )
        for f in files
    ]


@dataclass(frozen=True, slots=True)
class Proposal:
    """A refresh `rerecord` proposes: which tape, why, and the command that does it."""

    path: Path
    reason: str
    command: str


def propose_refreshes(checks: Iterable[TapeCheck], *, include_fresh: bool = False) -> list[Proposal]:
    """A re-record command for every stale or expiring tape (every loadable tape with include_fresh)."""
    proposals: list[Proposal] = []
    for check in checks:
        if check.tape is None or not (check.stale or check.expiring or include_fresh):
            continue
        reason = "refresh requested"
        if check.stale:
            reason = "stale"
        elif check.expiring and check.expires_at is not None:
            reason = f"goes stale at {check.expires_at.astimezone(UTC):%Y-%m-%d %H:%M} UTC"
        proposals.append(Proposal(check.file.path, reason, rerecord_command(check.tape)))
    return proposals
