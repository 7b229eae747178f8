"""Checks on tool results: what the MCP mocks answered is what the model is told, call by call."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from windtunnel._conformance.evidence import this_turn
from windtunnel._conformance.model import CheckFailed
from windtunnel._conformance.subject import Subject, call, say, tools
from windtunnel._core.reference import ReferenceDecision
from windtunnel._trace.shapes import said
from windtunnel._wire.dialect import Said, ToolCall
from windtunnel._wire.tools import bare

EXCERPT = 160


@dataclass(frozen=True, slots=True)
class ResultProbe:
    """A script whose every tool result holds a token of its own, and which token each tool's result holds.

    The lookup reads back what the store wrote, so its token reaches the model only when both calls really
    ran on the mock and their results were passed on.
    """

    script: tuple[ReferenceDecision, ...]
    tokens: Mapping[str, str]  # tool name -> a token only that tool's result holds


def result_probe(nonce: str) -> ResultProbe:
    key, value, echoed = f"wt-key-{nonce}", f"wt-value-{nonce}", f"wt-echo-{nonce}"
    return ResultProbe(
        script=(
            tools(call("store", key=key, value=value)),
            tools(call("lookup", key=key), call("echo", token=echoed)),
            say("results read"),
        ),
        tokens={"store": key, "lookup": value, "echo": echoed},
    )


def tool_results_reach_model(subject: Subject) -> dict[str, Any]:
    """Every tool result the model is sent carries what the mock answered for that call: a result dropped,
    emptied, summarised, truncated or handed to the wrong call is caught."""
    nonce = uuid.uuid4().hex[:12]
    probe = result_probe(nonce)
    with subject.scripted(probe.script) as session:
        subject.needs_model_evidence(session)
        record = session.turn("Store a note, read it back and echo a token.", f"wt-kit-results-{nonce}")
    requests = record.requests or []
    answered = answered_results(said(requests[-1]) if requests else [])
    # Every model call of the turn, not only the last: a result rewritten in a follow-up is caught too.
    problems = [
        f"model call {position}: {problem}"
        for position, request in enumerate(requests[:-1])
        for problem in result_problems(answered_results(said(request)), probe.tokens, complete=False)
    ]
    last = f"model call {len(requests) - 1}" if requests else "no model call was logged"
    problems += [f"{last}: {problem}" for problem in result_problems(answered, probe.tokens)]
    evidence = {
        "results": [{"tool": name, "content": text[:EXCERPT]} for name, text in answered],
        "expected_tokens": dict(probe.tokens),
    }
    if problems:
        raise CheckFailed(
            f"{problems[0]}: feed each tool's result to the model as the MCP server returned it", evidence
        )
    return evidence


def answered_results(items: Sequence[Said]) -> list[tuple[str, str]]:
    """(tool name, result text) for each tool result of the turn after the last user message.

    A result pairs with its call by id (in its dialect: windtunnel._conformance.evidence.tool_id_problems);
    one without a matching id takes the next unanswered call of the assistant message before it (ids are
    tool_call_ids' concern, contents are this check's). Names are the mock's own (mcp__notes__lookup ->
    lookup), whatever qualification the harness offered them under.
    """
    return [((bare(c.name) if c is not None else "") or "?", text) for c, text in answered_calls(items)]


def answered_calls(items: Sequence[Said]) -> list[tuple[ToolCall | None, str]]:
    """(the call it answers, result text) for each tool result of the turn after the last user message,
    paired as answered_results() pairs them; None for a result that answers no call at all."""
    return [(answered, item.text) for answered, item in answered_items(items)]


def answered_items(items: Sequence[Said]) -> list[tuple[ToolCall | None, Said]]:
    """(the call it answers, the tool result item as sent) for each tool result, paired as answered_calls()."""
    pending: list[ToolCall] = []  # calls not yet answered
    found: list[tuple[ToolCall | None, Said]] = []
    for item in this_turn(items):
        if item.role == "assistant":
            pending = list(item.calls)
        elif item.role == "tool":
            position = _answered_position(pending, item.answers)
            found.append((pending.pop(position) if position is not None else None, item))
    return found


def result_problems(
    answered: Sequence[tuple[str, str]], tokens: Mapping[str, str], *, complete: bool = True
) -> list[str]:
    """Results that lack their tool's token; with `complete`, also every tool whose result never came (a
    follow-up model call before the last has not been sent the later results yet)."""
    problems = [
        f"the model got the {name} result as {text[:EXCERPT]!r}, without {tokens[name]!r}, which the mock "
        "answered"
        for name, text in answered
        if name in tokens and tokens[name] not in text
    ]
    missing = sorted(set(tokens) - {name for name, _ in answered})
    if missing and complete:
        problems.append(f"the model was never sent a result for {', '.join(missing)}")
    return problems


def _answered_position(pending: list[ToolCall], call_id: Any) -> int | None:
    for position, pending_call in enumerate(pending):
        if pending_call.id and pending_call.id == call_id:
            return position
    return 0 if pending else None
