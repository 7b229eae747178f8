"""`wt tapes record`: run scenarios through a runtime in containers with the gateway in record mode, score each
run with the ordinary runner, and promote every passing run's tape to a golden tape of its pack.

The runtime is opened by the one lifecycle (windtunnel._runner.lifecycle.open_runtime: lock, build through
its driver, pre_run, post_run, close); each scenario records through a fresh runtime it gives with a record
gateway of its own (windtunnel._runtimes.abilities.FreshGatewayRuntime).

The upstream is a real OpenAI-compatible endpoint (`upstream=URL`, reached over the gateway's egress
network), or the scripted stand-in: a second gateway container in script mode holding the scenario's
golden decisions, so the tape records real OpenAI-compatible traffic without a live model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from pathlib import Path

from windtunnel._packs.pack import Pack
from windtunnel._runner.execute import RunResult
from windtunnel._runner.lifecycle import OpenRuntime, fresh_runtime
from windtunnel._runtimes.abilities import FreshGatewayRuntime
from windtunnel._scenario.model import Scenario
from windtunnel._tape_runs.containers import (
    TapeRuntime,
    agent_config,
    record_spec,
    run_through,
    start_scripted_upstream,
    tape_name,
)
from windtunnel._tapes.lifecycle import TAPES_DIR
from windtunnel._tapes.policy import SCRIPTED_UPSTREAM, Clock, utcnow
from windtunnel._tapes.promotion import promote
from windtunnel._tapes.scripted import golden_case
from windtunnel.errors import SelectionError, UsageError, WindTunnelError


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordOptions:
    """`upstream=None` records against the scripted stand-in; `promote=False` leaves run tapes only.

    The upstream key `api_key` reaches the record gateway as a read-only file put into its container.
    """

    runtime: str
    out_dir: Path
    upstream: str | None = None
    api_key: str | None = field(default=None, repr=False)
    model: str | None = None
    promote: bool = True
    clock: Clock = utcnow


@dataclass(frozen=True, slots=True, kw_only=True)
class Recorded:
    """One scenario's recording: its run, its run tape, and the golden tape it became (if it passed)."""

    pack: str
    scenario: str
    result: RunResult | None = None
    run_tape: Path | None = None
    golden: Path | None = None
    created: bool = False
    superseded: tuple[Path, ...] = ()
    error: str | None = None

    @property
    def passed(self) -> bool:
        return self.error is None and self.result is not None and self.result.score.passed


def selected_scenarios(packs: list[Pack], patterns: list[str]) -> list[tuple[Pack, Scenario]]:
    """Every scenario of the packs, or those matching a --scenario name or glob; nothing is an error."""
    items = [
        (pack, scenario)
        for pack in packs
        for scenario in pack.scenarios
        if not patterns or any(fnmatchcase(scenario.name, pattern) for pattern in patterns)
    ]
    if not items:
        known = ", ".join(f"{pack.name}/{scenario.name}" for pack in packs for scenario in pack.scenarios)
        raise SelectionError(
            f"--scenario {' '.join(patterns)} matches no scenario of the selected packs",
            hint=f"known scenarios: {known or 'none'}",
            field="--scenario",
        )
    return items


def print_nothing(_line: str) -> None:
    """The default progress sink."""


def recording_runtime(opened: OpenRuntime) -> FreshGatewayRuntime:
    """The opened runtime, when its driver gives fresh runtimes with a gateway of their own (tapes are
    recorded through one); a usage error naming the runtime otherwise."""
    runtime = opened.runtime
    if not isinstance(runtime, FreshGatewayRuntime):
        description = opened.description
        raise UsageError(
            f"runtime {description.name!r} ({description.origin}) is not a container runtime: tapes are "
            "recorded through a driver that gives a fresh runtime with a gateway of its own (the container "
            "driver does)",
            hint="pass the name of a runtime under runtimes/ (e.g. reference), its directory, or an image",
            runtime=description.name,
            field="--runtime",
        )
    return runtime


def record_tapes(
    runtime: FreshGatewayRuntime,
    items: Sequence[tuple[Pack, Scenario]],
    options: RecordOptions,
    *,
    progress: Callable[[str], None] = print_nothing,
) -> list[Recorded]:
    """Record every (pack, scenario); one that fails is reported and the others still run."""
    recorded = []
    for pack, scenario in items:
        progress(f"recording {pack.name}/{scenario.name} through {options.runtime}")
        try:
            recorded.append(record_one(runtime, pack, scenario, options))
        except WindTunnelError as exc:
            recorded.append(Recorded(pack=pack.name, scenario=scenario.name, error=str(exc)))
    return recorded


def record_one(
    runtime: FreshGatewayRuntime, pack: Pack, scenario: Scenario, options: RecordOptions
) -> Recorded:
    name = tape_name(pack.name, scenario.name, options.runtime)
    root = options.out_dir / options.runtime
    upstream = options.upstream or SCRIPTED_UPSTREAM
    # What the run's score will name, so promotion can tie the two.
    lineage = {"runtime": options.runtime, "pack": scenario.pack or pack.name, "scenario": scenario.name}
    spec = record_spec(upstream, root / TAPES_DIR, name, key=options.api_key, lineage=lineage)
    with fresh_runtime(runtime, spec, name=options.runtime) as fresh:
        result = _record_run(fresh, pack, scenario, options, root)
    run_tape = root / TAPES_DIR / f"{name}.jsonl"
    outcome = Recorded(pack=pack.name, scenario=scenario.name, result=result, run_tape=run_tape)
    if not options.promote or not result.score.passed:
        return outcome
    return _promote(outcome, pack, options)


def _record_run(
    runtime: TapeRuntime, pack: Pack, scenario: Scenario, options: RecordOptions, root: Path
) -> RunResult:
    if options.upstream is None:
        start_scripted_upstream(runtime.stack, golden_case(scenario))
    result = run_through(
        runtime,
        pack,
        scenario,
        runtime_name=options.runtime,
        config=agent_config(pack, scenario, options.model),
        out_dir=root,
    )
    # Written while the gateway still runs: a record run that recorded nothing fails here (tape_not_recorded).
    runtime.stack.gateway().flush_tape()
    runtime.stack.collect_outputs()
    return result


def _promote(outcome: Recorded, pack: Pack, options: RecordOptions) -> Recorded:
    assert outcome.result is not None
    assert outcome.run_tape is not None
    if pack.root is None:
        raise UsageError(
            f"pack {pack.name!r} has no directory, so it has no tapes/ to promote into",
            hint="load the pack from a directory (pack.py)",
            pack=pack.name,
        )
    golden_dir = pack.root / TAPES_DIR / options.runtime
    promotion = promote(outcome.run_tape, golden_dir, scores=[outcome.result.score], clock=options.clock)
    return replace(outcome, golden=promotion.path, created=promotion.created, superseded=promotion.superseded)


def error_text(recorded: Recorded) -> str | None:
    """Why a recording did not become a golden tape, in one line, or None when it did (or could not)."""
    if recorded.error is not None:
        return recorded.error
    if recorded.result is not None and not recorded.result.score.passed:
        return f"the run did not pass ({recorded.result.score.summary()}); its tape was not promoted"
    return None
