"""The long tool results check: every result the model is sent holds the mock's answer, byte for byte.

The kit's `read_document` tool serves texts of 900 bytes to 64 KiB (windtunnel._packs.kitpack.documents):
multi-byte UTF-8, nested JSON, long arrays, whitespace that must survive. Each tool result in every model
call of the turn, read in its call's dialect (windtunnel._wire), must hold what the mock served for that
call whole, byte for byte and contiguous. Text a harness frames it with (a header line, a label) is not a
cut result: the check passes it and records the framing's bytes before and after in the evidence. A result
that does not hold the served text whole is reported with the model call, the first byte offset that
differs (counted from where the served text begins in it) and both excerpts.

A runtime that declares `[mcp] result_limit` (windtunnel._runtimes.mcp_client) is held to every result up
to that many characters as above; a longer one is not scored: what reached the model is kept in the
evidence and, when it arrived altered, the check is INFO naming the limit and its reason, never PASSED.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict
from typing import Any

from windtunnel._conformance.byte_diff import first_difference, framing, skip_framing
from windtunnel._conformance.checks_results import answered_calls
from windtunnel._conformance.model import CheckFailed, declared_not_handled
from windtunnel._conformance.subject import Subject, say, tools
from windtunnel._conversation.model import Finding
from windtunnel._core.reference import ReferenceToolCall
from windtunnel._runner.evidence import mcp_calls
from windtunnel._runtimes.mcp_client import ResultLimit
from windtunnel._trace.shapes import said
from windtunnel._wire.tools import bare

TOOL = "read_document"


def _read(name: str) -> ReferenceToolCall:
    return ReferenceToolCall(TOOL, {"name": name})


# Two calls in one model call (parallel), then two more: four sizes up to 64 KiB, every one of them
# longer than any preview limit a runtime might apply to its logs, the first shorter than a kilobyte.
LONG_SCRIPT = (
    tools(_read("brief"), _read("page")),
    tools(_read("chapter"), _read("volume")),
    say("documents read"),
)
DOCUMENTS = tuple(c.arguments["name"] for decision in LONG_SCRIPT for c in decision.tool_calls)


def long_tool_results(subject: Subject) -> dict[str, Any]:
    """Every document result in every model call of the turn equals the mock's answer for that call."""
    with subject.scripted(LONG_SCRIPT) as session:
        subject.needs_model_evidence(session)
        record = session.turn("Read the brief and the page, then the chapter and the volume.")
        served = served_documents(mcp_calls(session.mcps) or [])
        requests = record.requests or []
        findings = compare_results(requests, served)
        session.findings.extend(findings)
    return judged(requests, served, findings, subject.mcp.result_limit)


def judged(
    requests: Sequence[Mapping[str, Any]],
    served: Mapping[str, str],
    findings: Sequence[Finding],
    limit: ResultLimit | None,
) -> dict[str, Any]:
    """The check's verdict on a turn's model calls and what the mock served: the evidence when every result
    held; CheckFailed naming the first one that did not. A document longer than a declared `[mcp]
    result_limit` is not scored: when one arrived altered, OptionalAbsent (INFO) names the limit and reason."""
    over = {name for name, text in served.items() if limit is not None and len(text) > limit.chars}
    evidence: dict[str, Any] = {
        "served": {name: len(text.encode("utf-8")) for name, text in served.items()},
        "compared": [f.model_dump(mode="json") for f in findings],
        # What a harness put around results it passed on whole (the model saw it too): kept for the reader.
        "framing": framed_results(requests, served),
    }
    missing = sorted(set(DOCUMENTS) - set(served))
    if missing:
        raise CheckFailed(
            f"the mock never served {', '.join(missing)}: the turn did not make its scripted tool calls",
            evidence,
        )
    unscored = {_compared(name) for name in over}
    differing = [f for f in findings if not f.held and f.compared not in unscored]
    if differing:
        first = differing[0]
        raise CheckFailed(
            f"model call {first.model_call}: {first.text}: hand the model each tool result whole, as the "
            "MCP server returned it (no truncation, re-encoding or whitespace changes)",
            evidence,
        )
    last = {f.compared for f in findings if f.model_call == len(requests) - 1}
    unsent = [name for name in DOCUMENTS if _compared(name) not in last]
    if unsent_scored := [name for name in unsent if name not in over]:
        raise CheckFailed(
            f"the last model call of the turn was sent no result for {', '.join(unsent_scored)}", evidence
        )
    altered = sorted(
        {
            name
            for name in over
            if name in unsent or any(not f.held and f.compared == _compared(name) for f in findings)
        }
    )
    if altered and limit is not None:
        sizes = ", ".join(f"{name} ({len(served[name])} characters)" for name in altered)
        # Every result up to the limit held; the longer ones are the declared limit's, kept as evidence.
        declared_not_handled(
            "[mcp] result_limit",
            {f"results over {limit.chars} characters": f"{limit.reason}; arrived altered: {sizes}"},
            {
                **evidence,
                "result_limit": {"chars": limit.chars, "reason": limit.reason},
                # What reached the model instead, as the last model call carried it.
                "over_limit": {
                    name: text for _, name, text in _document_results(requests) if name in altered
                },
            },
        )
    return evidence


def served_documents(calls: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """The text the mock answered for each document it served, by document name (text blocks joined by a
    newline, as windtunnel._wire.reading.text_of joins a result's parts)."""
    served: dict[str, str] = {}
    for entry in calls:
        arguments = entry.get("arguments")
        if entry.get("name") != TOOL or not isinstance(arguments, Mapping) or entry.get("is_error"):
            continue
        blocks = (entry.get("result") or {}).get("content") or []
        text = "\n".join(
            b.get("text", "") for b in blocks if isinstance(b, Mapping) and b.get("type") == "text"
        )
        served.setdefault(str(arguments.get("name")), text)
    return served


def compare_results(requests: Sequence[Mapping[str, Any]], served: Mapping[str, str]) -> list[Finding]:
    """One finding per document result in each model call: held when it holds the served text whole, byte
    for byte and contiguous (identical, or with framing around it)."""
    findings: list[Finding] = []
    for position, name, text in _document_results(requests):
        expected = served.get(name)
        compared = _compared(name)
        if expected is None:
            unserved = f"the model was sent a result for {name!r}, which the mock never served"
            findings.append(
                Finding(turn=0, model_call=position, compared=compared, held=False, text=unserved)
            )
            continue
        findings.append(
            Finding(turn=0, model_call=position, compared=compared, **_comparison(name, expected, text))
        )
    return findings


def framed_results(requests: Sequence[Mapping[str, Any]], served: Mapping[str, str]) -> list[dict[str, Any]]:
    """The framing of each document result that holds the served text whole with text around it."""
    framed = []
    for position, name, text in _document_results(requests):
        found = framing(served[name], text) if name in served else None
        if found is not None and (found.before_bytes or found.after_bytes):
            framed.append({"model_call": position, "document": name, **asdict(found)})
    return framed


def _document_results(requests: Sequence[Mapping[str, Any]]) -> Iterator[tuple[int, str, str]]:
    """(model call, document name, result text) for each read_document result in each model call."""
    for position, request in enumerate(requests):
        for answered, text in answered_calls(said(request)):
            if answered is None or bare(answered.name) != TOOL or not isinstance(answered.arguments, dict):
                continue
            yield position, str(answered.arguments.get("name")), text


def _comparison(name: str, expected: str, text: str) -> dict[str, Any]:
    """`held` and the finding's text for one result compared with the served text."""
    size = len(expected.encode("utf-8"))
    found = framing(expected, text)
    if found is not None and not (found.before_bytes or found.after_bytes):
        return {"held": True, "text": f"{size} bytes, identical"}
    if found is not None:
        return {"held": True, "text": f"{size} bytes, {found.describe()}"}
    skipped, rest = skip_framing(expected, text)
    difference = first_difference(expected, rest)
    framed = f"after {skipped} bytes of framing, " if skipped else ""
    # framing() found no whole copy, so there is a difference; the fallback is for a copy decode() mended
    what = difference.describe(f"the {name} result") if difference else f"the {name} result is not whole"
    return {"held": False, "text": framed + what}


def _compared(name: str) -> str:
    return f"the {TOOL}(name={name!r}) result the model was sent, with the mock's answer"
