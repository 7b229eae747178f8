"""Checks on tool calls: accepted shapes, intermediate tool calls surfacing, raw call shapes, call ids."""

from __future__ import annotations

import json
from typing import Any

from windtunnel._conformance.evidence import raise_for_run_error, tool_id_problems
from windtunnel._conformance.model import CheckFailed
from windtunnel._conformance.subject import Subject, call, say, tools, two_step_script
from windtunnel._conversation.build import from_trace
from windtunnel._conversation.compare import KnownTools, judge
from windtunnel._conversation.model import DiffKind
from windtunnel._runner.evidence import served_tools
from windtunnel._trace.shapes import (
    answer,
    call_argument_text,
    call_arguments,
    call_name,
    read_response,
    said,
)

SHAPES_PROBE = "The shape probe answered."


def response_shapes(subject: Subject) -> dict[str, Any]:
    """The runtime's answer is read in its own shape, and the runner reads it the same in all three."""
    with subject.scripted([say(SHAPES_PROBE)], with_tools=False) as session:
        response = session.handle.send([{"role": "user", "content": "Say the probe line."}], "wt-kit-shapes")
    first = read_response(response)
    if first.content != SHAPES_PROBE:
        raise CheckFailed(
            f"the scripted answer {SHAPES_PROBE!r} came back as {first.content!r}", {"response": response}
        )
    message = {"role": "assistant", "content": first.content, "tool_calls": first.tool_calls}
    variants = {
        "flat": {"content": first.content, "tool_calls": first.tool_calls},
        "wrapper": {"message": message},
        "openai": {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]},
    }
    for shape, variant in variants.items():
        read = read_response(variant)
        if (read.shape, read.content, read.tool_calls) != (shape, first.content, first.tool_calls):
            raise CheckFailed(f"the runner read the {shape} shape differently", {"variant": variant})
    return {"runtime_shape": first.shape, "accepted": sorted(variants)}


def intermediate_tool_calls(subject: Subject) -> dict[str, Any]:
    """A must_call scenario passes and every call a mock received is reported, and every reported call
    reached a mock: the one comparison of the three views (windtunnel._conversation), on its question of
    calls hidden or invented. Whether arguments reach the trace unmodified is raw_tool_call_shapes' concern,
    and the order three_views_agree's."""
    scenario = subject.pack.scenario("two_step")
    decisions = two_step_script()
    with subject.scripted(decisions) as session:
        result = session.run(scenario)
        served = served_tools(session.mcps)
    trace = result.trace
    raise_for_run_error(trace, session.run_failure)
    reported = [call_name(c) for turn in trace.turns for c in turn.tool_calls]
    received = [c.get("name") for c in trace.mcp_calls or []]
    must_call = {c.id: c.passed for c in result.score.checks if c.id.startswith("must_call")}
    evidence = {"reported": reported, "received": received, "must_call": must_call}
    hidden = judge(from_trace(trace), KnownTools(served), _SURFACING).broken
    if hidden:
        raise CheckFailed(
            f"{hidden[0].text}: intermediate tool calls must surface (reported {reported}, received {received})",
            {**evidence, "disagreements": [found.text for found in hidden]},
        )
    if trace.error is None and not all(must_call.values()):
        raise CheckFailed("the must_call gate failed although the calls were made", evidence)
    return evidence


_SURFACING = frozenset({DiffKind.NOT_REPORTED, DiffKind.REPORTED_NOT_RECEIVED})


TRICKY = {
    "zeta": 1,
    "alpha": {"b": [1, 2.5, "x"], "a": None},
    "amount": 37.5,
    "note": "naïve \u201cquoted\u201d \u2013 ok",  # non-ASCII on purpose: escaping it would be a rewrite
    "flag": False,
}
# Not in alphabetical order (a runtime sorting calls by name is caught), with one tool called twice
# with the same arguments and one twice with different ones (dropping or merging calls is caught).
RAW_SCRIPT = (
    tools(
        call("store", key="zulu", value="written first"), call("echo", **TRICKY), call("lookup", key="alpha")
    ),
    tools(call("lookup", key="alpha"), call("echo", n=2)),
    say("echoed"),
)
RAW_CALLS = sum(len(decision.tool_calls) for decision in RAW_SCRIPT)


def raw_tool_call_shapes(subject: Subject) -> dict[str, Any]:
    """The reported calls are exactly the calls the model emitted: same count, same order, and each one's
    name and argument text unmodified."""
    with subject.scripted(RAW_SCRIPT) as session:
        subject.needs_model_evidence(session)
        record = session.turn("Store zulu, echo the payload, read note alpha twice, echo again.")
    # Each call in its dialect's own shape (chat tool_calls, Anthropic tool_use, Responses function_call).
    emitted = [c.native for request in record.requests or [] for c in answer(request).calls]
    reported = record.read.tool_calls
    evidence = {
        "emitted": [[call_name(c), call_argument_text(c)] for c in emitted],
        "reported": [[call_name(c), _reported_text(c)] for c in reported],
    }
    if len(emitted) != RAW_CALLS:
        raise CheckFailed(
            f"the model emitted {len(emitted)} tool calls through the gateway, the script has {RAW_CALLS}: "
            "the turn did not follow its scripted model calls",
            evidence,
        )
    problem = _first_difference(emitted, reported)
    if problem is not None:
        raise CheckFailed(f"{problem}: record tool calls exactly as emitted, all of them, in order", evidence)
    return evidence


def _first_difference(emitted: list[Any], reported: list[Any]) -> str | None:
    if len(reported) != len(emitted):
        return f"{len(reported)} tool calls reported for the {len(emitted)} the model emitted"
    for position, (sent, got) in enumerate(zip(emitted, reported, strict=True)):
        if call_name(got) != call_name(sent):
            return (
                f"reported call {position} is {call_name(got)!r} where the model emitted {call_name(sent)!r}"
            )
        if not _same_arguments(sent, got):
            return (
                f"reported call {position} ({call_name(got)}) has arguments {_reported_text(got)} where the model "
                f"emitted {call_argument_text(sent)}"
            )
    return None


def _same_arguments(emitted: Any, reported: Any) -> bool:
    """The reported arguments decode to the emitted ones unchanged, key order and number spelling included.

    Decoded, not compared as text: a driver carries Contract C's argument objects on as JSON text of its
    own (escaping aside, the same JSON), so only a change in what the JSON says is the runtime's doing.
    """
    return _canonical_text(call_arguments(emitted)) == _canonical_text(call_arguments(reported))


def _reported_text(call_: Any) -> str:
    return _canonical_text(call_arguments(call_))


def _canonical_text(arguments: Any) -> str:
    """Arguments as JSON text with key order and number spelling kept (never sorted)."""
    return json.dumps(arguments, ensure_ascii=False)


ID_SCRIPT = (
    tools(call("lookup", key="alpha"), call("echo", n=1)),
    tools(call("store", key="beta", value="answered")),
    say("paired"),
)


def tool_call_ids(subject: Subject) -> dict[str, Any]:
    """In every model call, each tool result answers a call id of the assistant message before it, and
    every tool call got its answer (paired in the call's dialect: windtunnel._conformance.evidence)."""
    with subject.scripted(ID_SCRIPT) as session:
        subject.needs_model_evidence(session)
        record = session.turn("Read alpha and echo, then store beta.")
    requests = record.requests or []
    problems = {
        f"model call {position}": found
        for position, request in enumerate(requests)
        if (found := tool_id_problems(said(request)))
    }
    answered = [item for item in said(requests[-1]) if item.role == "tool"] if requests else []
    evidence = {"model_calls": len(requests), "tool_results": len(answered), "problems": problems}
    if problems:
        first = next(iter(problems.items()))
        raise CheckFailed(f"tool results do not pair with their calls ({first[0]}: {first[1][0]})", evidence)
    expected = sum(len(decision.tool_calls) for decision in ID_SCRIPT)
    if len(answered) != expected:
        raise CheckFailed(
            f"the last model call carried {len(answered)} tool results for the {expected} calls made",
            evidence,
        )
    return evidence
