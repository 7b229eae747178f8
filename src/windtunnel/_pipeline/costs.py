"""What a certify run's model calls cost, per runtime: priced from the selftest traces in the bundle.

The per-run and per-call prices go to `evidence/<runtime>/selftest/cost.json`; run.json carries each
runtime's model label and total (windtunnel._score.pricing: unknown is never zero), which the report's
"Models and cost" section shows (windtunnel._report.costs). Selftest inference is scripted, so these are
the prices of the usage the runs reported at the configured rates.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from windtunnel._bundle import layout
from windtunnel._bundle.layout import cost_evidence
from windtunnel._core.rates import Price
from windtunnel._files import write_atomic
from windtunnel._pipeline.context import RuntimeRun, safe
from windtunnel._score.pricing import CostSummary, RunCost, run_cost, summarize
from windtunnel._trace.models import Trace


def runtime_cost(out_dir: Path, run: RuntimeRun, pricing: Mapping[str, Price]) -> CostSummary:
    """Price every selftest trace of the runtime; write the details as evidence; return the total."""
    traces = sorted((out_dir / layout.TRACES_DIR / safe(run.name) / "selftest").rglob("*.trace.json"))
    label = run.model_label
    costs: list[tuple[str, RunCost]] = []
    for path in traces:
        trace = Trace.model_validate_json(path.read_text(encoding="utf-8"))
        costs.append((path.relative_to(out_dir).as_posix(), run_cost(trace, pricing)))
    summary = summarize([cost for _, cost in costs], label)
    details = {
        "model_label": label,
        "summary": summary.model_dump(mode="json"),
        "runs": [{"trace": trace, **cost.model_dump(mode="json")} for trace, cost in costs],
    }
    write_atomic(out_dir / cost_evidence(run.name), json.dumps(details, indent=2) + "\n")
    return summary
