"""`wt doctor`: bring-up diagnostics for a runtime and the reset canary; exit 0 only when healthy."""

from __future__ import annotations

import argparse
import sys

from windtunnel._canary.doctor import Step, diagnose
from windtunnel._cli.common import add_runtime, add_selection, selected_scenarios
from windtunnel._cli.verbs import add_verb
from windtunnel._config import Settings
from windtunnel._core.vocabulary import Exit
from windtunnel._runtimes.resolve import resolve_runtime


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = add_verb(commands, "doctor")
    add_runtime(parser)
    add_selection(parser)
    parser.set_defaults(handler=execute)


def execute(args: argparse.Namespace, settings: Settings) -> int:
    description = resolve_runtime(args.runtime, settings)
    packs = list({id(item.pack): item.pack for item in selected_scenarios(args, settings)}.values())

    def show(step: Step) -> None:
        mark = "ok  " if step.ok else "FAIL"
        sys.stdout.write(f"{mark} {step.name:8} {step.detail}\n")
        sys.stdout.flush()

    report = diagnose(description, packs, show, lock_dir=settings.lock_dir)
    verdict = "healthy" if report.healthy else "NOT healthy"
    sys.stdout.write(f"wt doctor {report.runtime}: {verdict}\n")
    return Exit.OK if report.healthy else Exit.FAILED
