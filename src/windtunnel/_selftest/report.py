"""Self-test reports: the verdict stated explicitly, the ordinary score kept as evidence."""

from __future__ import annotations

import json
from collections import Counter

from windtunnel._core.vocabulary import Verdict
from windtunnel._runner.junit import CaseRecord, CaseStatus, to_junit
from windtunnel._selftest.engine import SelftestReport
from windtunnel._selftest.verdicts import CaseVerdict, exit_code

_STATUS: dict[Verdict, CaseStatus] = {
    Verdict.PASS: "passed",
    Verdict.UNSUPPORTED: "skipped",
    Verdict.GOLDEN_FAILED: "failed",
    Verdict.POISON_PASSED: "failed",
    Verdict.ERROR: "error",
}


def line(case: CaseVerdict) -> str:
    verdict = case.verdict.value + (f" ({case.subkind.value})" if case.subkind else "")
    tier = "" if case.gating else "  (quarantined: not gating)"
    return f"{verdict:22} {case.pack}/{case.scenario}[{case.kind}:{case.case}]  {case.detail}{tier}"


def render_text(report: SelftestReport) -> str:
    counts = Counter(case.verdict.value for case in report.cases)
    summary = ", ".join(f"{count} {name}" for name, count in sorted(counts.items())) or "no reference cases"
    lines = [line(case) for case in report.cases]
    lines.append(f"selftest {report.runtime}: {summary}; traces in {report.out_dir}")
    return "\n".join(lines)


def render_json(report: SelftestReport) -> str:
    return json.dumps(
        {
            "runtime": report.runtime,
            "run_id": report.run_id,
            "started_at": report.started_at,
            "ended_at": report.ended_at,
            "exit_code": exit_code(report.cases),
            "traces": str(report.out_dir),
            "summary": dict(Counter(case.verdict.value for case in report.cases)),
            "cases": [case.model_dump(mode="json") for case in report.cases],
        },
        indent=2,
    )


def _record(case: CaseVerdict) -> CaseRecord:
    evidence = case.score.model_dump_json(indent=2) if case.score else ""
    properties = {
        "verdict": case.verdict.value,
        "kind": case.kind,
        "case": case.case,
        "tier": case.tier,
        "gating": str(case.gating).lower(),
    }
    if case.score:
        properties["model"] = case.score.model_label or "unknown"
    if case.subkind:
        properties["subkind"] = case.subkind.value
    if case.score:
        properties["score"] = case.score.status.value
    if case.trace:
        properties["trace"] = case.trace
    status = _STATUS[case.verdict]
    if not case.gating and status != "passed":
        status = "skipped"  # quarantined: recorded with its verdict, never failing a JUnit reader's build
    return CaseRecord(
        group=case.pack,
        name=f"{case.scenario}[{case.kind}:{case.case}]",
        status=status,
        message=f"{case.verdict.value}: {case.detail}"
        + ("" if case.gating else " (quarantined: not gating)"),
        details=f"{case.detail}\n\nscore (evidence):\n{evidence}",
        seconds=case.seconds,
        properties=properties,
    )


def render_junit(report: SelftestReport) -> str:
    return to_junit([_record(case) for case in report.cases], suite_name=f"wt selftest {report.runtime}")
