"""The tapes stage: every committed tape of the selected packs for this runtime, replayed through it.

Tapes live in `<pack>/tapes/<runtime>/` (windtunnel._tapes.lifecycle.committed_tapes, the same layout
`wt tapes verify` checks). Only packs that declare the `replay` profile are replayed; a pack that does not
gets a NOT_MEASURED observation saying so, and a runtime with no tapes gets one too, so a runtime is never
certified on tapes it does not have (and never silently passes either).

Each tape is replayed through the runtime in containers on a fresh stack of its own (network, mocks, a
replay gateway with the tape mounted read-only, the runtime), the tape's scenario run on the ordinary
`provision()` path and scored by the ordinary runner, then the gateway's GET /wt/tape read while it still
runs. The tape passes when every request was answered in order, none was refused or left unused, the tape is
not stale (certification), and the replayed verdict equals the recorded one.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from windtunnel._bundle.models import CheckRecord
from windtunnel._core.vocabulary import CheckStatus
from windtunnel._packs.pack import Pack
from windtunnel._pipeline.context import StageContext, safe
from windtunnel._runner.execute import RunResult
from windtunnel._runner.lifecycle import fresh_runtime
from windtunnel._runner.output import RunWriter
from windtunnel._runtimes.abilities import FreshGatewayRuntime
from windtunnel._scenario.model import Scenario
from windtunnel._tape_runs.containers import (
    TAPE_DIR,
    TapeRuntime,
    agent_config,
    recorded_model,
    replay_spec,
    run_through,
)
from windtunnel._tapes.checks import GOLDEN_NAME, file_digest, golden_problems, tampered
from windtunnel._tapes.fidelity import FidelityReport, replay_check
from windtunnel._tapes.model import Tape
from windtunnel._tapes.policy import (
    MAX_AGE,
    Clock,
    age,
    future_error,
    is_stale,
    rerecord_command,
    stale_error,
)
from windtunnel._tapes.scripted import scripted_problems
from windtunnel._tapes.store import load_tape
from windtunnel.errors import HarnessError, TapeError, WindTunnelError

_NEVER_STALE = timedelta.max
"""Development mode: staleness is a warning, so the fidelity judgement must not count it again."""


def tape_stem(path: Path) -> str:
    """The tape's name from its file name: a golden `<tape>-<sha256>.jsonl` without the digest."""
    named = GOLDEN_NAME.match(path.name)
    return named["tape"] if named else path.stem


@dataclass(slots=True, kw_only=True)
class TapeReplay:
    """What replaying one tape found: problems fail it, warnings do not; `harness_fault` makes it an ERROR."""

    path: Path
    runtime: str
    clock: Clock
    tape: Tape | None = None
    scenario: Scenario | None = None
    result: RunResult | None = None
    gateway: dict[str, Any] | None = None
    fidelity: FidelityReport | None = None
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    harness_fault: bool = False

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def replayed_verdict(self) -> str | None:
        return self.result.score.status.value if self.result is not None else None

    def detail(self) -> str:
        name = self.tape.name if self.tape is not None else tape_stem(self.path)
        if self.ok and self.tape is not None:
            return self._passed(self.tape) + "".join(f"\nwarning: {w}" for w in self.warnings)
        lines = [f"tape {name} ({self.path}) failed:", *self.problems]
        if self.tape is not None and not any(rerecord_command(self.tape) in p for p in self.problems):
            lines.append(f"re-record it: {rerecord_command(self.tape)}")
        return "\n".join(lines)

    def _passed(self, tape: Tape) -> str:
        count = len(tape.interactions)
        days = age(tape, self.clock).total_seconds() / 86400
        scripted = " from the scripted upstream (no age limit: its answers are the scenario's script)"
        return (
            f"tape {tape.name}: {count}/{count} interaction(s) replayed in order through {self.runtime}, none "
            f"unused, none refused; verdict {self.replayed_verdict} as recorded; recorded {days:.1f} days ago"
            + (scripted if tape.header.lineage.scripted else "")
        )

    def evidence(self, pack: Pack) -> dict[str, Any]:
        tape, entry = self.tape, self._entry(pack)
        return {
            "tape": entry,
            "file": f"{pack.name}/{entry['path']}",  # the pack's tape, never this machine's path to it
            "runtime": self.runtime,
            "pack": pack.name,
            "scenario": self.scenario.name if self.scenario else None,
            "ok": self.ok,
            "problems": self.problems,
            "warnings": self.warnings,
            "recorded_verdict": tape.header.lineage.verdict if tape else None,
            "replayed_verdict": self.replayed_verdict,
            "lineage": tape.header.lineage.model_dump(mode="json") if tape else None,
            "fidelity": _fidelity(self.fidelity),
            "gateway": self.gateway,
            "score": self.result.score.model_dump(mode="json") if self.result else None,
        }

    def _entry(self, pack: Pack) -> dict[str, Any]:
        """The bundle's tapes/index.json entry (publish.tape_index reads it from this evidence)."""
        where = self.path.resolve()
        relative = (
            where.relative_to(pack.root.resolve())
            if pack.root and where.is_relative_to(pack.root.resolve())
            else where
        )
        entry: dict[str, Any] = {"name": tape_stem(self.path), "path": str(relative)}
        if self.path.is_file():
            entry["sha256"] = file_digest(self.path)
        if self.tape is not None:
            entry |= {
                "name": self.tape.name,
                "interactions": len(self.tape.interactions),
                "recorded_at": self.tape.oldest.isoformat(),
                "scripted": self.tape.header.lineage.scripted and self.ok,  # a broken claim exempts nothing
            }
        return entry


def _fidelity(report: FidelityReport | None) -> dict[str, Any] | None:
    if report is None:
        return None
    return {
        "recorded": report.recorded,
        "requested": report.requested,
        "matched": report.matched,
        "unused": list(report.unused),
        "stale": report.stale,
        "problems": list(report.problems),
    }


def replay_tape(
    runtime: FreshGatewayRuntime,
    pack: Pack,
    path: Path,
    *,
    runtime_name: str,
    clock: Clock,
    certification: bool = True,
    out_dir: Path,
    max_age: timedelta = MAX_AGE,
) -> TapeReplay:
    """Replay the tape at `path` through a fresh runtime from `runtime` and judge it (see the module docstring)."""
    replay = TapeReplay(path=path, runtime=runtime_name, clock=clock)
    try:
        replay.tape = load_tape(path)
    except TapeError as exc:
        replay.problems.append(f"{type(exc).__name__}: {exc}")
        return replay
    if not _admissible(replay, replay.tape, pack, certification=certification, max_age=max_age):
        return replay
    assert replay.scenario is not None
    _run(replay, runtime, pack, replay.scenario, out_dir)
    if replay.gateway is not None and replay.result is not None:
        _judge(replay, replay.tape, replay.gateway, replay.result, max_age if certification else _NEVER_STALE)
    return replay


def _admissible(
    replay: TapeReplay, tape: Tape, pack: Pack, *, certification: bool, max_age: timedelta
) -> bool:
    """Static checks; False when replaying would prove nothing (no scenario, or stale in certification)."""
    replay.problems += [f"TapeMismatch: {mismatch.message}" for mismatch in tampered(tape)]
    replay.problems += [f"TapeCorrupt: {problem}" for problem in golden_problems(replay.path)]
    lineage = tape.header.lineage
    if lineage.runtime is not None and lineage.runtime != replay.runtime:
        replay.problems.append(
            f"the tape was recorded through runtime {lineage.runtime!r}, and is replayed through "
            f"{replay.runtime!r}: it belongs in tapes/{lineage.runtime}/"
        )
    if lineage.verdict is None:
        replay.problems.append(
            "the tape records no verdict (lineage.verdict), so the replay cannot be compared"
        )
    replay.scenario = next((s for s in pack.scenarios if s.name == lineage.scenario), None)
    if replay.scenario is None:
        replay.problems.append(
            f"the tape names scenario {lineage.scenario!r}, which pack {pack.name!r} does not have"
            if lineage.scenario
            else "the tape names no scenario (lineage.scenario), so there is nothing to replay it through"
        )
        return False
    if claim := scripted_problems(tape, replay.scenario):
        replay.problems += claim
        return False  # a false claim to be scripted would exempt a live tape from the age limit
    if (future := future_error(tape, replay.clock)) is not None:
        replay.problems.append(f"TapeCorrupt: {future.message}")
        return False  # its dates are not to be trusted, so neither is its age
    if is_stale(tape, replay.clock, max_age):
        message = f"TapeStale: {stale_error(tape, replay.clock, max_age)}"
        if certification:
            replay.problems.append(message)
            return False  # certification admits no stale tape; replaying it would certify nothing
        replay.warnings.append(message)
    return True


def _run(
    replay: TapeReplay, runtime: FreshGatewayRuntime, pack: Pack, scenario: Scenario, out_dir: Path
) -> None:
    assert replay.tape is not None
    try:
        with fresh_runtime(runtime, replay_spec(replay.path), name=replay.runtime) as fresh:
            tape_runtime: TapeRuntime = fresh
            replay.result = run_through(
                tape_runtime,
                pack,
                scenario,
                runtime_name=replay.runtime,
                config=agent_config(pack, scenario, recorded_model(replay.tape)),
                out_dir=out_dir,
            )
            replay.gateway = tape_runtime.stack.gateway().tape()  # read while the gateway still runs
    except HarnessError as exc:
        replay.harness_fault = True
        replay.problems.append(f"the replay could not run (a harness error, not the runtime's): {exc}")
    except WindTunnelError as exc:
        replay.problems.append(f"the replay failed: {type(exc).__name__}: {exc}")


def _judge(
    replay: TapeReplay, tape: Tape, gateway: dict[str, Any], result: RunResult, max_age: timedelta
) -> None:
    """Refusals first (their messages carry the diff and the re-record command), then the fidelity check."""
    refusals = gateway.get("refusals") or []
    inside = f"{TAPE_DIR}/{replay.path.name}"  # the gateway names the tape by its path in the container
    replay.problems += [
        f"{refusal['error']}: {refusal['message']}".replace(inside, str(replay.path)) for refusal in refusals
    ]
    replay.fidelity = replay_check(
        tape,
        gateway.get("requests") or [],
        clock=replay.clock,
        max_age=max_age,
        recorded_verdict=tape.header.lineage.verdict,
        replayed_verdict=result.score.status.value,
    )
    replay.problems += list(replay.fidelity.problems)
    error = result.trace.error
    if error is not None and not refusals:
        replay.problems.append(f"the replayed run failed ({error.kind}): {error.message}")


def replay_tape_check(ctx: StageContext, pack_name: str, tape_path: Path) -> CheckRecord:
    """The certify pipeline's check for one committed tape of `ctx.run`'s runtime."""
    started = time.perf_counter()
    stem = tape_stem(tape_path)
    name = f"{pack_name}/{stem}"
    ctx.progress(f"{ctx.run.name}: tapes {name}")
    runtime = ctx.run.runtime
    if not isinstance(runtime, FreshGatewayRuntime):
        detail = (
            f"{ctx.run.name} is not a container runtime: tapes replay only through a driver that gives a "
            "fresh runtime with a gateway of its own (the container driver does)"
        )
        return ctx.check(name, CheckStatus.NOT_MEASURED, detail)  # an ability it lacks, not a harness fault
    pack = next(item.pack for item in ctx.selected if item.pack.name == pack_name)
    replay = replay_tape(
        runtime,
        pack,
        tape_path,
        runtime_name=ctx.run.name,
        clock=ctx.config.clock,
        certification=ctx.config.certification,
        out_dir=ctx.traces_dir() / safe(stem),
    )
    evidence = [ctx.write_evidence(f"{pack_name}.{stem}", replay.evidence(pack))]
    if replay.result is not None:
        evidence.append(ctx.relative(RunWriter(ctx.traces_dir() / safe(stem)).trace_path(replay.result)))
    status = (
        CheckStatus.PASSED if replay.ok else CheckStatus.ERROR if replay.harness_fault else CheckStatus.FAILED
    )
    return ctx.check(name, status, replay.detail(), evidence=evidence, seconds=time.perf_counter() - started)


REPLAY = "replay"
# Each tape replays on a stack of its own (network, mocks, gateway, runtime), so replays are independent;
# most of a replay is waiting for containers to start, so a few at once fit even on 2 cores.
REPLAYS_AT_ONCE = 3


def replayable_packs(ctx: StageContext) -> tuple[list[Pack], list[Pack]]:
    """The selected packs, split into those that declare the replay profile and those that do not."""
    packs = list({item.pack.name: item.pack for item in ctx.selected}.values())
    return [p for p in packs if REPLAY in p.profiles], [p for p in packs if REPLAY not in p.profiles]


def tapes_stage(ctx: StageContext) -> list[CheckRecord]:
    from windtunnel._tapes.lifecycle import committed_tapes

    replayed, undeclared = replayable_packs(ctx)
    checks = [_undeclared(ctx, pack) for pack in undeclared]
    tapes = [(file.pack or "", file.path) for file in committed_tapes(replayed, safe(ctx.run.name))]
    if not tapes:
        where = "the selected packs that declare the replay profile"
        detail = f"no committed tapes for {ctx.run.name} in {where}"
        return [*checks, ctx.check("committed", CheckStatus.NOT_MEASURED, detail, scored=False)]
    with ThreadPoolExecutor(max_workers=REPLAYS_AT_ONCE, thread_name_prefix="wt-tape") as pool:
        replayed_checks = list(pool.map(lambda tape: replay_tape_check(ctx, *tape), tapes))  # in tape order
    return checks + replayed_checks


def _undeclared(ctx: StageContext, pack: Pack) -> CheckRecord:
    declared = ", ".join(pack.profiles) or "none"
    detail = (
        f"pack {pack.name} does not declare the replay profile (Pack.profiles: {declared}), so its tapes are "
        f"not replayed for {ctx.run.name}; add 'replay' to Pack(profiles=...) to certify them"
    )
    return ctx.check(f"{safe(pack.name)}/profile", CheckStatus.NOT_MEASURED, detail, scored=False)
