"""What a certify run's model calls cost, per runtime: priced from the selftest traces in the bundle.

The per-run and per-call prices go to `evidence/<runtime>/selftest/cost.json`; run.json carries each
runtime's model label and total (windtunnel._score.pricing: unknown is never zero). Selftest inference is
scripted, so these are the prices of the usage the runs reported at the configured rates.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from html import escape
from pathlib import Path

from windtunnel._bundle.models import RunInfo
from windtunnel._pipeline.context import RuntimeRun, safe
from windtunnel._runner.output import write_atomic
from windtunnel._score.pricing import CostSummary, Price, RunCost, run_cost, shown, summarize
from windtunnel._trace.models import Trace

COST_FILE = "cost.json"


def runtime_cost(out_dir: Path, run: RuntimeRun, pricing: Mapping[str, Price]) -> CostSummary:
    """Price every selftest trace of the runtime; write the details as evidence; return the total."""
    stage = Path("selftest")
    traces = sorted((out_dir / "traces" / safe(run.name) / stage).rglob("*.trace.json"))
    costs: list[tuple[str, RunCost]] = []
    for path in traces:
        trace = Trace.model_validate_json(path.read_text(encoding="utf-8"))
        costs.append((path.relative_to(out_dir).as_posix(), run_cost(trace, pricing)))
    summary = summarize([cost for _, cost in costs], run.model_label)
    details = {
        "model_label": run.model_label,
        "summary": summary.model_dump(mode="json"),
        "runs": [{"trace": trace, **cost.model_dump(mode="json")} for trace, cost in costs],
    }
    target = out_dir / "evidence" / safe(run.name) / stage / COST_FILE
    write_atomic(target, json.dumps(details, indent=2) + "\n")
    return summary


def cost_section(info: RunInfo) -> str:
    """The report's "Models and cost" table: per runtime its model label and what its runs cost, and the
    run tiers that ran."""
    rows = []
    for runtime in info.runtimes:
        name, label, summary = runtime.name, runtime.model_label, runtime.cost
        link = f"evidence/{safe(name)}/selftest/{COST_FILE}"
        if summary is None:
            cost = "not priced"
        elif summary.cost is not None:
            cost = f"{shown(summary.cost)} over {summary.runs} run(s)"
        else:
            cost = f"unknown ({summary.reason})"
            if summary.priced_runs:  # a partial sum is shown as such, never as the cost
                cost += (
                    f"; {summary.priced_runs} of {summary.runs} run(s) priced: {shown(summary.priced_cost)}"
                )
        rows.append(
            f'<tr data-runtime="{escape(name)}"><td>{escape(name)}</td><td><code>{escape(label or "unknown")}</code>'
            f'</td><td class="cost">{escape(cost)}</td><td><a href="{escape(link)}">{COST_FILE}</a></td></tr>'
        )
    return (
        '<section id="cost"><h2>Models and cost</h2><p>Run tiers: '
        f"{escape(', '.join(info.tiers))} (smoke and stable gate; quarantined cases are recorded, never gating)."
        " Costs: per million token rates from [tool.windtunnel.pricing]; cached prompt tokens at the "
        "cache-read rate; unknown is never zero.</p>"
        "<table><tr><th>runtime</th><th>model</th><th>cost of the selftest runs</th><th>per run and call</th></tr>"
        f"{''.join(rows)}</table></section>"
    )
