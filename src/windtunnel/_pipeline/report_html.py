"""report.html: one self-contained page per bundle, per runtime, stage and check, linking the evidence."""

from __future__ import annotations

from collections import defaultdict
from html import escape
from pathlib import Path

from windtunnel._bundle import ChecksFile, RunInfo, Verdict
from windtunnel._pipeline.costs import cost_section

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem;color:#1b1f24}h1{margin:0 0 .3rem}
table{border-collapse:collapse;width:100%;margin:.5rem 0 1.5rem}td,th{border-bottom:1px solid #d8dee4;
padding:.3rem .5rem;text-align:left;vertical-align:top}th{background:#f3f5f7}
.passed{color:#1a7f37}.failed{color:#cf222e}.error{color:#9a6700}.not_measured{color:#6e7781}
.badge{display:inline-block;padding:.2rem .6rem;border-radius:1rem;color:#fff;font-weight:600}
.PASSED{background:#1a7f37}.FAILED{background:#cf222e}.HARNESS_INVALID{background:#9a6700}
code{font-size:12px}details{margin:.2rem 0}
"""


def _row(check: object, bundle: Path) -> str:
    from windtunnel._bundle import CheckRecord

    assert isinstance(check, CheckRecord)
    links = " ".join(
        f'<a href="{escape(p)}">{escape(Path(p).name)}</a>' for p in check.evidence if (bundle / p).exists()
    )
    scored = "" if check.scored else " (observation)"
    if check.tier == "quarantined":
        scored = " (quarantined: not gating)"
    return (
        f'<tr data-check="{escape(check.id)}"><td><code>{escape(check.id)}</code></td>'
        f'<td class="{check.status.value}">{check.status.value}{scored}</td>'
        f"<td>{escape(check.detail)}</td><td>{links}</td></tr>"
    )


def render_report(info: RunInfo, checks: ChecksFile, verdict: Verdict, bundle: Path) -> str:
    grouped: dict[str, dict[str, list[object]]] = defaultdict(lambda: defaultdict(list))
    for check in checks.checks:
        grouped[check.runtime][check.stage.value].append(check)
    results = {runtime.name: runtime.result.value for runtime in verdict.runtimes}
    sections = []
    for runtime, stages in grouped.items():
        badge = results.get(runtime, "harness")
        body = []
        for stage, items in stages.items():
            rows = "".join(_row(item, bundle) for item in items)
            body.append(
                f"<h3>{escape(stage)}</h3><table><tr><th>check</th><th>status</th><th>detail</th>"
                f"<th>evidence</th></tr>{rows}</table>"
            )
        sections.append(
            f'<section id="runtime-{escape(runtime)}"><h2>{escape(runtime)} '
            f'<span class="badge {escape(badge)}">{escape(badge)}</span></h2>{"".join(body)}</section>'
        )
    images = "".join(f"<li><code>{escape(n)}</code> {escape(d)}</li>" for n, d in info.images.items())
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Wind Tunnel certification {escape(info.run_id)}</title>
<style>{STYLE}</style></head><body>
<h1>Wind Tunnel certification <span id="verdict" class="badge {verdict.result.value}">{verdict.result.value}</span></h1>
<p>run <code>{escape(info.run_id)}</code> · windtunnel {escape(info.tool_version)} · requirement set
{escape(info.requirement_set)} · {escape(str(info.started_at))} → {escape(str(info.ended_at))} ·
signing key: {escape(verdict.signing_key.value)}</p>
<p>Files: <a href="verdict.json">verdict.json</a> · <a href="checks.json">checks.json</a> ·
<a href="junit.xml">junit.xml</a> · <a href="run.json">run.json</a> · <a href="tapes/index.json">tapes/index.json</a></p>
<details><summary>images</summary><ul>{images}</ul></details>
{cost_section(info)}
{"".join(sections)}
</body></html>
"""
