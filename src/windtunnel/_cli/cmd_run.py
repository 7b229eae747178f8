"""`wt run`: run the selected scenarios against a runtime and grade them; appends to the run ledger."""

from __future__ import annotations

import argparse
from pathlib import Path

from windtunnel._cli.common import add_output, add_runtime, add_selection, emit, selected_scenarios
from windtunnel._cli.run_report import render
from windtunnel._cli.values import count, file_path, retries
from windtunnel._cli.verbs import add_verb
from windtunnel._config import Settings
from windtunnel._core.agent_runtime import AgentConfig
from windtunnel._core.tiers import DEFAULT_FLAKY_RETRIES, live_upstream
from windtunnel._core.vocabulary import Exit
from windtunnel._runner.output import append_ledger
from windtunnel._runner.sweep import SweepOptions, SweepResult, run_sweep
from windtunnel._runtimes.resolve import resolve_runtime
from windtunnel._score.models import ScoreStatus
from windtunnel._score.pricing import RunCost, run_cost, summarize


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = add_verb(commands, "run")
    add_runtime(parser)
    add_selection(parser)
    parser.add_argument("--runs", type=count, default=1, metavar="N", help="runs per scenario (default 1)")
    parser.add_argument("--scheduler", choices=("serial", "concurrent"), default="serial")
    parser.add_argument(
        "--max-concurrency",
        type=count,
        default=1,
        metavar="N",
        help="jobs at once with --scheduler concurrent; never above the plugin's max_concurrency",
    )
    parser.add_argument(
        "--flaky-retries",
        type=retries,
        default=DEFAULT_FLAKY_RETRIES,
        metavar="N",
        help=f"retries of a failed live-flaky run, each attempt recorded (default {DEFAULT_FLAKY_RETRIES}); "
        "runs of other tiers are never retried",
    )
    parser.add_argument(
        "--runs-dir", type=file_path, metavar="DIR", help="where traces and score sidecars go (default runs/)"
    )
    add_output(parser)
    parser.set_defaults(handler=execute)


def execute(args: argparse.Namespace, settings: Settings) -> int:
    description = resolve_runtime(args.runtime, settings)  # the model ladder too, before any run starts
    selected = selected_scenarios(args, settings, live_upstream=live_upstream(settings.env))
    runs_dir = args.runs_dir or settings.runs_dir
    options = SweepOptions(
        config=AgentConfig(),
        out_root=runs_dir,
        lock_dir=settings.lock_dir,
        runs=args.runs,
        scheduler=args.scheduler,
        max_concurrency=args.max_concurrency,
        flaky_retries=args.flaky_retries,
    )
    sweep = run_sweep(description, selected, options)
    costs = {r.trace.run_id: run_cost(r.trace, settings.pricing) for r in sweep.results}
    _ledger(runs_dir, sweep, args, costs)
    emit(render(sweep, args.format, runs_dir, costs), args.out)
    return Exit.OK if sweep.passed else Exit.FAILED


def _ledger(runs_dir: Path, sweep: SweepResult, args: argparse.Namespace, costs: dict[str, RunCost]) -> None:
    statuses = [r.score.status for r in sweep.results]
    total = summarize(list(costs.values()), sweep.model_label)
    append_ledger(
        runs_dir / "ledger.jsonl",
        {
            "sweep_id": sweep.sweep_id,
            "runtime": sweep.runtime,
            "model": sweep.model_label,
            "started_at": sweep.started_at,
            "ended_at": sweep.ended_at,
            "runs": len(statuses),
            "passed": statuses.count(ScoreStatus.PASSED),
            "failed": statuses.count(ScoreStatus.FAILED),
            "errors": statuses.count(ScoreStatus.ERROR),
            "not_gating": sum(not r.score.gating for r in sweep.results),
            "retried_attempts": len(sweep.retried),
            "tiers": sorted({r.trace.tier for r in sweep.results}),
            "cost": total.cost,
            "cost_reason": total.reason,
            "problems": sweep.problems,
            "selection": {
                "scenario": args.scenario,
                "tag": args.tag,
                "pack": args.pack,
                "owner": args.owner,
                "tier": args.tier,
            },
            "traces": str(runs_dir / sweep.sweep_id),
        },
    )
