"""report.html: one self-contained page per bundle: runtimes, stages and checks, each check's evidence
links and its conversations (docs/bundle.md, "The report")."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from html import escape
from pathlib import Path
from urllib.parse import quote

from windtunnel._bundle import layout
from windtunnel._bundle.models import CheckRecord
from windtunnel._core.vocabulary import CheckStatus
from windtunnel._report.assets import SCRIPT, STYLE, content_security_policy
from windtunnel._report.bundle_view import BundleView, load_bundle
from windtunnel._report.conversation_html import render_conversation
from windtunnel._report.costs import cost_section

_UNSAFE = re.compile(r"[^0-9A-Za-z_-]+")


def render_bundle_report(root: Path, *, link_base: str = "") -> str:
    """The report of the bundle in `root`; `link_base` is prefixed to every link into the bundle (empty
    when the page is written into the bundle itself). Raises VerificationError when `root` is no bundle."""
    return render_page(load_bundle(root), link_base=link_base)


def render_page(view: BundleView, *, link_base: str = "") -> str:
    contents = view.contents
    info, verdict = contents.run, contents.verdict
    anchors = _anchors([check.id for check in contents.checks.checks])
    grouped: dict[str, dict[str, list[CheckRecord]]] = defaultdict(lambda: defaultdict(list))
    for check in contents.checks.checks:
        grouped[check.runtime][check.stage.value].append(check)
    results = {runtime.name: runtime.result.value for runtime in verdict.runtimes}
    files = view.files()
    sections = []
    for runtime, stages in grouped.items():
        badge = results.get(runtime, "harness")
        body = [
            f"<h3>{escape(stage)}</h3><table><tr><th>check</th><th>status</th><th>detail</th>"
            f"<th>evidence</th></tr>{''.join(_rows(check, view, anchors[check.id], files, link_base) for check in items)}</table>"
            for stage, items in stages.items()
        ]
        sections.append(
            f'<section id="runtime-{escape(runtime)}"><h2>{escape(runtime)} '
            f'<span class="badge {escape(badge)}">{escape(badge)}</span></h2>{"".join(body)}</section>'
        )
    images = "".join(f"<li><code>{escape(n)}</code> {escape(d)}</li>" for n, d in info.images.items())
    link = _linker(link_base)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{escape(content_security_policy())}">
<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,">
<title>Wind Tunnel certification {escape(info.run_id)}</title>
<style>{STYLE}</style></head><body>
<h1>Wind Tunnel certification <span id="verdict" class="badge {escape(verdict.result.value)}">{escape(verdict.result.value)}</span></h1>
<p>run <code>{escape(info.run_id)}</code> · windtunnel {escape(info.tool_version)} · requirement set
{escape(info.requirement_set)} · {escape(str(info.started_at))} → {escape(str(info.ended_at))} ·
signing key: {escape(verdict.signing_key.value)}</p>
<p>Files: {link(layout.VERDICT)} · {link(layout.CHECKS)} · {link(layout.JUNIT)} · {link(layout.RUN)} ·
{link(layout.TAPE_INDEX)}</p>
{_shards(view, link)}
{_failures(view, anchors)}
<details><summary>images</summary><ul>{images}</ul></details>
{cost_section(info, view.has, link_base)}
<p class="toolbar"><button type="button" data-open="true">open conversations with differences</button>
<button type="button" data-open="false">close all conversations</button></p>
{"".join(sections)}
<script>{SCRIPT}</script>
</body></html>
"""


def _anchors(ids: list[str]) -> dict[str, str]:
    """A unique, id-safe anchor per check id."""
    anchors: dict[str, str] = {}
    taken: set[str] = set()
    for check_id in ids:
        base = _UNSAFE.sub("-", check_id).strip("-") or "check"
        anchor, number = base, 1
        while anchor in taken:
            number += 1
            anchor = f"{base}-{number}"
        taken.add(anchor)
        anchors[check_id] = anchor
    return anchors


def _linker(base: str) -> Callable[[str], str]:
    def link(name: str) -> str:
        return f'<a href="{escape(base + quote(name))}">{escape(name)}</a>'

    return link


def _shards(view: BundleView, link: Callable[[str], str]) -> str:
    """A merged bundle's shards (docs/ci.md, "Sharded certification"): each one's part and its own report."""
    merge, shard = view.contents.merge, view.contents.shard
    if shard is not None:
        return f"<p>Shard {shard.index} of {shard.count} of plan <code>{escape(shard.plan_digest[:12])}</code>.</p>"
    if merge is None:
        return ""
    parts = "".join(
        f"<li>shard {s.index}/{merge.count}: {escape(', '.join(s.units) or 'the reference control only')} · "
        f"run <code>{escape(s.run_id)}</code> · {link(f'{s.prefix}/{layout.REPORT}')}</li>"
        for s in merge.shards
    )
    return (
        f"<details><summary>merged from {merge.count} shards of plan <code>{escape(merge.plan_digest[:12])}"
        f"</code> ({link(layout.MERGE)})</summary><ul>{parts}</ul></details>"
    )


def _failures(view: BundleView, anchors: dict[str, str]) -> str:
    failed = [
        c
        for c in view.contents.checks.checks
        if c.scored and c.status in (CheckStatus.FAILED, CheckStatus.ERROR)
    ]
    if not failed:
        return ""
    items = "".join(
        f'<li><a href="#check-{escape(anchors[c.id])}"><code>{escape(c.id)}</code></a> '
        f'<span class="{c.status.value}">{c.status.value}</span></li>'
        for c in failed
    )
    return f'<section id="failed-checks"><h2>Failed checks</h2><ul>{items}</ul></section>'


def _rows(check: CheckRecord, view: BundleView, anchor: str, files: set[str], base: str) -> str:
    found = view.by_check.get(check.id)
    conversations = found.conversations if found else []
    links = [
        f'<a href="{escape(base + quote(p))}">{escape(Path(p).name)}</a>'
        for p in check.evidence
        if p in files
    ]
    for number, conversation in enumerate(conversations):
        diffs = len(conversation.disagreements)
        label = f"conversation {number + 1}" + (f" ({diffs} differences)" if diffs else "")
        links.append(f'<a class="conv-link" href="#conv-{escape(anchor)}-{number}">{escape(label)}</a>')
    scored = "" if check.scored else " (observation)"
    if check.tier == "quarantined":  # recorded, never gating (docs/estate.md)
        scored = " (quarantined: not gating)"
    row = (
        f'<tr id="check-{escape(anchor)}" data-check="{escape(check.id)}"><td><code>{escape(check.id)}</code></td>'
        f'<td class="{check.status.value}">{check.status.value}{scored}</td>'
        f"<td>{escape(check.detail)}</td><td>{' '.join(links)}</td></tr>"
    )
    problems = found.problems if found else []
    if not conversations and not problems:
        return row
    body = "".join(
        render_conversation(c, f"conv-{anchor}-{n}", check.id) for n, c in enumerate(conversations)
    ) + "".join(f'<p class="conv-error">{escape(problem)}</p>' for problem in problems)
    return f'{row}<tr class="conv-row"><td colspan="4">{body}</td></tr>'
