"""`wt prove`: re-prove every selected scenario (docs/selftests.md, "Proving scenarios"), and with --mutate test that its gate bites."""

from __future__ import annotations

import argparse
import contextlib
import sys
import uuid
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path

from windtunnel._cli.common import add_selection, emit, selected_scenarios
from windtunnel._cli.values import file_path
from windtunnel._cli.verbs import add_verb
from windtunnel._config import Settings
from windtunnel._core.reference import ReferenceCase
from windtunnel._files import write_atomic
from windtunnel._packs.pack import Pack
from windtunnel._packs.selection import Selected
from windtunnel._prove.local_executor import LocalCaseRunner
from windtunnel._prove.mutation import MutationReport, ScenarioMutation, mutate_gate
from windtunnel._prove.render import ProveRun, render_json, render_text
from windtunnel._prove.seam import CaseOutcome, CaseRunner
from windtunnel._prove.suite import DEFAULT_MARGIN_S, prove_suite, utc_now
from windtunnel._scenario.model import Scenario
from windtunnel.errors import SelectionError, UsageError

DEFAULT_RUNTIME = "reference"


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = add_verb(commands, "prove")
    add_selection(parser)
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--runtime",
        metavar="NAME|DIR",
        help=f"reference-capable runtime that plays the cases (default: {DEFAULT_RUNTIME}): a name, a "
        "runtime directory, module:attr or an image reference",
    )
    where.add_argument(
        "--local",
        action="store_true",
        help="play the cases in this process against in-process mocks (no containers, no agent loop)",
    )
    parser.add_argument(
        "--deadline-at",
        type=deadline_at,
        metavar="TIME",
        help="ISO 8601 time with a zone, e.g. 2026-12-01T18:00:00+00:00; scenarios that cannot start "
        f"{DEFAULT_MARGIN_S:.0f} s before it are written validation_incomplete",
    )
    parser.add_argument(
        "--proofs", type=file_path, metavar="PATH", help="proofs file (default RUNS/prove/<id>/proofs.jsonl)"
    )
    parser.add_argument(
        "--runs-dir", type=file_path, metavar="DIR", help="proofs and traces go to DIR/prove (default runs/)"
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--certification",
        dest="certification",
        action="store_true",
        default=True,
        help="refuse a scenario without a negative control as no_negative_control (the default)",
    )
    mode.add_argument(
        "--development",
        dest="certification",
        action="store_false",
        help="only warn about a scenario without a negative control",
    )
    parser.add_argument(
        "--mutate",
        action="store_true",
        help="also derive mutants of each golden and report a gate that passes one as a weak gate "
        "(the mutation report is written to mutation.json beside the proofs file)",
    )
    parser.add_argument("--format", choices=("text", "json"), default="text", help="report format")
    parser.add_argument(
        "--out", type=file_path, metavar="PATH", help="write the report here instead of stdout"
    )
    parser.set_defaults(handler=execute)


def deadline_at(value: str) -> datetime:
    """Parse --deadline-at: an ISO 8601 time that names its zone."""
    hint = "give an ISO 8601 time with a zone, e.g. 2026-12-01T18:00:00+00:00 or 2026-12-01T18:00:00Z"
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise UsageError(
            f"--deadline-at {value!r} is not an ISO 8601 time", hint=hint, field="--deadline-at"
        ) from None
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise UsageError(
            f"--deadline-at {value!r} has no time zone, so it names no single moment",
            hint=hint,
            field="--deadline-at",
        )
    return moment


def execute(args: argparse.Namespace, settings: Settings) -> int:
    selected = selected_scenarios(args, settings)
    if not any(
        item.scenario.reference_cases for item in selected
    ):  # docs/selftests.md: nothing selected is usage
        names = ", ".join(f"{item.pack.name}/{item.scenario.name}" for item in selected[:5])
        raise SelectionError(
            f"the selection holds no reference cases ({len(selected)} scenario(s): {names}"
            + (", ..." if len(selected) > 5 else "")
            + ")",
            hint="select scenarios that define reference_cases (a golden and a negative control each)",
            field="--scenario",
        )
    run_id = uuid.uuid4().hex[:8]
    root = (args.runs_dir or settings.runs_dir) / "prove" / run_id
    proofs_path: Path = args.proofs or root / "proofs.jsonl"
    traces = root / "traces"
    runtime = "local" if args.local else args.runtime or DEFAULT_RUNTIME
    progress = Progress(enabled=not args.local)
    with case_runner(args, settings, selected, traces, run_id) as runner:
        played = progress.wrap(runner)
        summary = prove_suite(
            selected,
            run_case=played,
            proofs_path=proofs_path,
            deadline=args.deadline_at,
            certification=args.certification,
        )
        mutation = mutate_within(selected, played, args.deadline_at) if args.mutate else None
    if mutation is not None:
        write_atomic(proofs_path.with_name("mutation.json"), mutation.model_dump_json(indent=2) + "\n")
    run = ProveRun(
        runtime=runtime, certification=args.certification, summary=summary, mutation=mutation, traces=traces
    )
    emit(render_json(run) if args.format == "json" else render_text(run), args.out)
    return run.exit_code


@contextlib.contextmanager
def case_runner(
    args: argparse.Namespace, settings: Settings, selected: Sequence[Selected], traces: Path, run_id: str
) -> Iterator[CaseRunner]:
    """The local executor with --local, else the named runtime built as `wt selftest` builds it."""
    if args.local:
        yield LocalCaseRunner(out_dir=traces)
        return
    from windtunnel._prove.runtime_executor import runtime_case_runner
    from windtunnel._runtimes.resolve import resolve_runtime

    description = resolve_runtime(args.runtime or DEFAULT_RUNTIME, settings)
    scenarios = [item.scenario for item in selected]
    with runtime_case_runner(
        description, scenarios, out_dir=traces, lock_dir=settings.lock_dir, run_id=run_id
    ) as runner:
        yield runner


class Progress:
    """One stderr line per case played, so a long container run shows where it is."""

    def __init__(self, *, enabled: bool) -> None:
        self.enabled = enabled

    def wrap(self, runner: CaseRunner) -> CaseRunner:
        if not self.enabled:
            return runner

        def played(pack: Pack, scenario: Scenario, case: ReferenceCase) -> CaseOutcome:
            sys.stderr.write(f"wt prove: {pack.name}/{scenario.name}[{case.kind}:{case.name}]\n")
            sys.stderr.flush()
            return runner(pack, scenario, case)

        return played


def mutate_within(
    selected: Sequence[Selected], run_case: CaseRunner, deadline: datetime | None
) -> MutationReport:
    """Gate mutation scenario by scenario; one that cannot start a safety margin before the deadline is not
    mutated, and says so (not measured is never passed)."""
    scenarios: list[ScenarioMutation] = []
    for item in selected:
        left = (deadline - utc_now()).total_seconds() if deadline is not None else None
        if left is not None and left < DEFAULT_MARGIN_S:
            reason = (
                f"not mutated: out of time ({left:.0f} s left before the deadline, "
                f"less than the {DEFAULT_MARGIN_S:.0f} s safety margin)"
            )
            scenarios.append(
                ScenarioMutation(pack=item.pack.name, scenario=item.scenario.name, problems=[reason])
            )
            continue
        scenarios += mutate_gate([item], run_case).scenarios
    return MutationReport(scenarios=scenarios)
