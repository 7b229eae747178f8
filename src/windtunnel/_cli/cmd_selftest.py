"""`wt selftest`: golden cases must pass their gate and poison cases must fail it (docs/selftests.md)."""

from __future__ import annotations

import argparse
import sys

from windtunnel._cli.common import add_output, add_runtime, add_selection, emit, selected_scenarios
from windtunnel._cli.values import file_path
from windtunnel._cli.verbs import add_verb
from windtunnel._config import Settings
from windtunnel._runtimes.resolve import resolve_runtime
from windtunnel._selftest.engine import SelftestOptions, run_selftest
from windtunnel._selftest.report import line, render_json, render_junit, render_text
from windtunnel._selftest.verdicts import CaseVerdict, exit_code


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = add_verb(commands, "selftest")
    add_runtime(parser)
    add_selection(parser)
    parser.add_argument(
        "--runs-dir", type=file_path, metavar="DIR", help="traces go to DIR/selftest (default runs/)"
    )
    add_output(parser)
    parser.set_defaults(handler=execute)


def execute(args: argparse.Namespace, settings: Settings) -> int:
    description = resolve_runtime(args.runtime, settings)
    progress = args.format != "text" or args.out is not None

    def show(case: CaseVerdict) -> None:
        if progress:
            sys.stderr.write(line(case) + "\n")

    options = SelftestOptions(
        out_root=(args.runs_dir or settings.runs_dir) / "selftest", lock_dir=settings.lock_dir, on_case=show
    )
    # The engine builds the runtime first, then selects (and refuses a selection without cases).
    report = run_selftest(description, lambda: selected_scenarios(args, settings), options)
    renderers = {"text": render_text, "json": render_json, "junit": render_junit}
    emit(renderers[args.format](report), args.out)
    return exit_code(report.cases)
