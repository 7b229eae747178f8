"""The report's "Models and cost" section, from run.json: per runtime its model label and what its
selftest runs cost (windtunnel._pipeline.costs prices them), and the run tiers that ran."""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from urllib.parse import quote

from windtunnel._bundle.layout import COST_FILE, cost_evidence
from windtunnel._bundle.models import RunInfo, RuntimeInfo
from windtunnel._score.pricing import shown


def cost_section(info: RunInfo, present: Callable[[str], bool], link_base: str = "") -> str:
    """The section; `present` says whether a bundle file exists (only those are linked)."""
    rows = "".join(_row(runtime, present, link_base) for runtime in info.runtimes)
    return (
        '<section id="cost"><h2>Models and cost</h2><p>Run tiers: '
        f"{escape(', '.join(info.tiers))} (smoke and stable gate; quarantined cases are recorded, never gating)."
        " Costs: per million token rates from [tool.windtunnel.pricing]; cached prompt tokens at the "
        "cache-read rate; unknown is never zero.</p>"
        "<table><tr><th>runtime</th><th>model</th><th>cost of the selftest runs</th><th>per run and call</th></tr>"
        f"{rows}</table></section>"
    )


def _row(runtime: RuntimeInfo, present: Callable[[str], bool], link_base: str) -> str:
    evidence = cost_evidence(runtime.name)
    link = f'<a href="{escape(link_base + quote(evidence))}">{COST_FILE}</a>' if present(evidence) else ""
    return (
        f'<tr data-runtime="{escape(runtime.name)}"><td>{escape(runtime.name)}</td>'
        f"<td><code>{escape(runtime.model_label or 'unknown')}</code></td>"
        f'<td class="cost">{escape(_cost(runtime))}</td><td>{link}</td></tr>'
    )


def _cost(runtime: RuntimeInfo) -> str:
    summary = runtime.cost
    if summary is None:
        return "not priced"
    if summary.cost is not None:
        return f"{shown(summary.cost)} over {summary.runs} run(s)"
    cost = f"unknown ({summary.reason})"
    if summary.priced_runs:  # a partial sum is shown as such, never as the cost
        cost += f"; {summary.priced_runs} of {summary.runs} run(s) priced: {shown(summary.priced_cost)}"
    return cost
