"""The table `wt certify` prints at the end: per runtime and stage, passed/failed counts and the verdict."""

from __future__ import annotations

from collections import Counter

from windtunnel._bundle import Verdict
from windtunnel._bundle.models import Stage
from windtunnel._core.vocabulary import CheckStatus
from windtunnel._pipeline.context import CertifyOutcome


def summary_table(outcome: CertifyOutcome, verdict: Verdict) -> str:
    stages = [stage for stage in Stage if stage is not Stage.PUBLISH]
    header = f"{'runtime':48} " + " ".join(f"{s.value:>11}" for s in stages) + "  result"
    lines = [header, "-" * len(header)]
    results = {r.name: r.result.value for r in verdict.runtimes}
    for run in outcome.runs:
        cells = []
        for stage in stages:
            counts = Counter(c.status for c in run.checks if c.stage is stage and c.scored)
            total = sum(counts.values())
            cells.append(f"{counts[CheckStatus.PASSED]}/{total}".rjust(11) if total else "-".rjust(11))
        lines.append(f"{run.name:48} " + " ".join(cells) + f"  {results.get(run.name, '?')}")
        for check in run.checks:
            if check.scored and check.status is not CheckStatus.PASSED:
                lines.append(f"    {check.status.value:12} {check.id}: {check.detail[:160]}")
        if run.stage_seconds:
            times = ", ".join(f"{stage} {seconds:.1f} s" for stage, seconds in run.stage_seconds.items())
            lines.append(f"    time: {times}")
        cached = [check for check in run.checks if check.cached]
        if cached:
            lines.append(
                f"    cached: {len(cached)} {cached[0].stage.value} checks from the run at {cached[0].cached_at} "
                "(same inputs; `wt certify --no-cache` runs them afresh)"
            )
    for check in outcome.harness:
        lines.append(f"harness: {check.status.value:8} {check.id}: {check.detail[:160]}")
    lines.append(f"verdict: {verdict.result.value}")
    return "\n".join(lines)
