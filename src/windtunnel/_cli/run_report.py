"""What `wt run` prints: per run its status, run tier, model and cost; text, JSON or JUnit.

A quarantined run never gates, so a JUnit reader sees it as skipped, with its real status in the message
and properties. Costs are per million token rates from [tool.windtunnel.pricing]; unknown is said, never 0.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from windtunnel._runner.execute import RunResult
from windtunnel._runner.junit import CaseRecord, CaseStatus, to_junit
from windtunnel._runner.sweep import SweepResult
from windtunnel._score.pricing import RunCost, shown, summarize


def render(sweep: SweepResult, fmt: str, runs_dir: Path, costs: Mapping[str, RunCost]) -> str:
    if fmt == "junit":
        return _junit(sweep, costs)
    if fmt == "json":
        return _json(sweep, runs_dir, costs)
    return _text(sweep, runs_dir, costs)


def _name(result: RunResult) -> str:
    trace = result.trace
    return f"{trace.pack}/{trace.scenario}[{trace.run_index}]"


def _tier(result: RunResult) -> str:
    trace = result.trace
    notes = [trace.tier] + (["not gating"] if not result.score.gating else [])
    if trace.attempt:
        notes.append(f"passed on retry {trace.attempt}" if result.score.passed else f"retry {trace.attempt}")
    return ", ".join(notes)


def _cost(cost: RunCost | None) -> str:
    if cost is None or cost.cost is None:
        return f"cost unknown ({cost.reason if cost else 'not priced'})"
    return f"cost {shown(cost.cost)}"


def _text(sweep: SweepResult, runs_dir: Path, costs: Mapping[str, RunCost]) -> str:
    lines = [
        f"{r.score.status.value.upper():7} {_name(r)} ({_tier(r)})  {r.score.summary()}; "
        f"{_cost(costs.get(r.trace.run_id))}"
        for r in sweep.results
    ]
    lines += [
        f"RETRIED {_name(r)} attempt {r.trace.attempt}: {r.score.status.value}, {r.score.summary()}"
        for r in sweep.retried
    ]
    lines += [f"ERROR   sweep: {text}" for text in sweep.problems]
    total = summarize(
        [costs[r.trace.run_id] for r in sweep.results if r.trace.run_id in costs], sweep.model_label
    )
    model = sweep.model_label or "unknown"
    if total.cost is not None:
        lines.append(f"model {model}: cost {shown(total.cost)} over {total.runs} run(s)")
    else:
        priced = f"; {total.priced_runs} of {total.runs} run(s) priced: {shown(total.priced_cost)}"
        lines.append(f"model {model}: cost unknown ({total.reason}){priced if total.priced_runs else ''}")
    passed = sum(r.score.passed for r in sweep.results)
    quarantined = sum(not r.score.gating for r in sweep.results)
    aside = f"; {quarantined} quarantined (not gating)" if quarantined else ""
    lines.append(f"{passed}/{len(sweep.results)} runs passed{aside}; traces in {runs_dir / sweep.sweep_id}")
    return "\n".join(lines)


def _json(sweep: SweepResult, runs_dir: Path, costs: Mapping[str, RunCost]) -> str:
    def run(r: RunResult) -> dict[str, object]:
        cost = costs.get(r.trace.run_id)
        return {
            "pack": r.trace.pack,
            "scenario": r.trace.scenario,
            "run_index": r.trace.run_index,
            "attempt": r.trace.attempt,
            "tier": r.trace.tier,
            "gating": r.score.gating,
            "model_label": r.trace.model_label,
            "status": r.score.status.value,
            "summary": r.score.summary(),
            "cost": cost.model_dump(mode="json") if cost else None,
            "score": r.score.model_dump(mode="json"),
        }

    total = summarize(
        [costs[r.trace.run_id] for r in sweep.results if r.trace.run_id in costs], sweep.model_label
    )
    document = {
        "sweep_id": sweep.sweep_id,
        "runtime": sweep.runtime,
        "model_label": sweep.model_label,
        "traces": str(runs_dir / sweep.sweep_id),
        "problems": sweep.problems,
        "cost": total.model_dump(mode="json"),
        "runs": [run(r) for r in sweep.results],
        "retried": [run(r) for r in sweep.retried],
    }
    return json.dumps(document, indent=2)


def _record(result: RunResult, cost: RunCost | None) -> CaseRecord:
    score, trace = result.score, result.trace
    status: CaseStatus = {"passed": "passed", "failed": "failed", "error": "error"}[score.status.value]  # type: ignore[assignment]
    message = "" if score.passed else score.summary()
    if not score.gating and status != "passed":
        status, message = "skipped", f"quarantined, not gating: {score.status.value}: {score.summary()}"
    details = "\n".join(f"{c.id}: {c.detail}" for c in score.checks if c.passed is False)
    return CaseRecord(
        group=trace.pack or "scenarios",
        name=f"{trace.scenario}[{trace.run_index}]",
        status=status,
        message=message,
        details=details or score.summary(),
        properties={
            "runtime": trace.runtime,
            "run_id": trace.run_id,
            "tier": trace.tier,
            "gating": str(score.gating).lower(),
            "status": score.status.value,
            "attempt": str(trace.attempt),
            "model": trace.model_label or "unknown",
            "cost": shown(cost.cost if cost else None),
        },
    )


def _junit(sweep: SweepResult, costs: Mapping[str, RunCost]) -> str:
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
    records = [_record(r, costs.get(r.trace.run_id)) for r in sweep.results] + problems
    return to_junit(records, suite_name=f"wt run {sweep.runtime}")
