"""`wt run`: run the selected scenarios against a runtime and grade them; appends to the run ledger."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from windtunnel._cli.common import add_output, add_selection, emit, selected_scenarios
from windtunnel._cli.values import count, file_path
from windtunnel._config import Settings
from windtunnel._report.junit import CaseRecord, to_junit
from windtunnel._runner.execute import RunResult
from windtunnel._runner.output import append_ledger
from windtunnel._runner.sweep import SweepOptions, SweepResult, run_sweep
from windtunnel._runtimes.resolve import resolve_runtime
from windtunnel._score.models import ScoreStatus
from windtunnel.spi.agent_runtime import AgentConfig


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "run",
        help="run scenarios against a runtime and grade them",
        description="Run the selected scenarios against a runtime. Exit 0 when every run passed its gate, "
        "1 when any failed or errored (a pack that could not be set up, a provision(), pre_run() or "
        "post_run() that raised: those runs are ERROR, and the report and ledger are still written), "
        "2 on bad input.",
    )
    parser.add_argument(
        "--runtime",
        required=True,
        metavar="NAME|DIR",
        help="the runtime: a name (registered, a runtimes/**/runtime.toml, or a [tool.windtunnel] runtimes "
        "entry), a runtime directory, module:attr, or an image reference with its tag",
    )
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
        "--runs-dir", type=file_path, metavar="DIR", help="where traces and score sidecars go (default runs/)"
    )
    add_output(parser)
    parser.set_defaults(handler=execute)


def execute(args: argparse.Namespace, settings: Settings) -> int:
    description = resolve_runtime(args.runtime, settings)
    selected = selected_scenarios(args, settings)
    runs_dir = args.runs_dir or settings.runs_dir
    options = SweepOptions(
        config=AgentConfig(),
        out_root=runs_dir,
        lock_dir=settings.lock_dir,
        runs=args.runs,
        scheduler=args.scheduler,
        max_concurrency=args.max_concurrency,
    )
    sweep = run_sweep(description, selected, options)
    _ledger(runs_dir, sweep, args)
    emit(_render(sweep, args.format, runs_dir), args.out)
    return 0 if sweep.passed else 1


def _ledger(runs_dir: Path, sweep: SweepResult, args: argparse.Namespace) -> None:
    statuses = [r.score.status for r in sweep.results]
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
            "problems": sweep.problems,
            "selection": {"scenario": args.scenario, "tag": args.tag, "pack": args.pack, "owner": args.owner},
            "traces": str(runs_dir / sweep.sweep_id),
        },
    )


def _record(result: RunResult) -> CaseRecord:
    score, trace = result.score, result.trace
    status = {"passed": "passed", "failed": "failed", "error": "error"}[score.status.value]
    details = "\n".join(f"{c.id}: {c.detail}" for c in score.checks if c.passed is False)
    return CaseRecord(
        group=trace.pack or "scenarios",
        name=f"{trace.scenario}[{trace.run_index}]",
        status=status,  # type: ignore[arg-type]
        message="" if score.passed else score.summary(),
        details=details or score.summary(),
        properties={"runtime": trace.runtime, "run_id": trace.run_id},
    )


def _render(sweep: SweepResult, fmt: str, runs_dir: Path) -> str:
    if fmt == "junit":
        problems = [
            CaseRecord(
                group="sweep",
                name=f"problem[{index}]",
                status="error",
                message=text.splitlines()[0],
                details=text,
            )
            for index, text in enumerate(sweep.problems)
        ]
        records = [_record(r) for r in sweep.results] + problems
        return to_junit(records, suite_name=f"wt run {sweep.runtime}")
    if fmt == "json":
        return json.dumps(
            {
                "sweep_id": sweep.sweep_id,
                "runtime": sweep.runtime,
                "traces": str(runs_dir / sweep.sweep_id),
                "problems": sweep.problems,
                "runs": [
                    {
                        "pack": r.trace.pack,
                        "scenario": r.trace.scenario,
                        "run_index": r.trace.run_index,
                        "status": r.score.status.value,
                        "summary": r.score.summary(),
                        "score": r.score.model_dump(mode="json"),
                    }
                    for r in sweep.results
                ],
            },
            indent=2,
        )
    lines = [
        f"{r.score.status.value.upper():7} {r.trace.pack}/{r.trace.scenario}[{r.trace.run_index}]  "
        f"{r.score.summary()}"
        for r in sweep.results
    ]
    lines += [f"ERROR   sweep: {text}" for text in sweep.problems]
    passed = sum(r.score.passed for r in sweep.results)
    lines.append(f"{passed}/{len(sweep.results)} runs passed; traces in {runs_dir / sweep.sweep_id}")
    return "\n".join(lines)
