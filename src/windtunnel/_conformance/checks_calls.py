"""Checks on what send() returns: accepted shapes, intermediate tool calls surfacing, raw call shapes."""

from __future__ import annotations

import json
from typing import Any

from windtunnel._conformance.model import CheckFailed
from windtunnel._conformance.subject import Subject, call, say, tools
from windtunnel._trace.shapes import call_argument_text, call_arguments, call_name, read_response

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
    """A must_call scenario passes and the calls reported are the calls the MCP mocks received."""
    scenario = subject.pack.scenario("two_step")
    decisions = [
        tools(call("lookup", key="alpha")),
        tools(call("store", key="beta", value="first note")),
        say("copied"),
    ]
    with subject.scripted(decisions) as session:
        result = session.run(scenario)
    trace = result.trace
    if trace.error is not None and trace.error.kind != "integrity":
        raise CheckFailed(f"the run failed before evidence could be compared: {trace.error.message}")
    reported = [call_name(c) for turn in trace.turns for c in turn.tool_calls]
    received = [c.get("name") for c in trace.mcp_calls or []]
    must_call = {c.id: c.passed for c in result.score.checks if c.id.startswith("must_call")}
    evidence = {"reported": reported, "received": received, "must_call": must_call}
    if reported != received:
        raise CheckFailed(
            f"the runtime reported {reported} but the mocks received {received}: intermediate tool calls must surface",
            evidence,
        )
    if trace.error is None and not all(must_call.values()):
        raise CheckFailed("the must_call gate failed although the calls were made", evidence)
    return evidence


TRICKY = {
    "zeta": 1,
    "alpha": {"b": [1, 2.5, "x"], "a": None},
    "amount": 37.5,
    "note": "naïve \u201cquoted\u201d \u2013 ok",  # non-ASCII on purpose: escaping it would be a rewrite
    "flag": False,
}


def raw_tool_call_shapes(subject: Subject) -> dict[str, Any]:
    """Every reported call appears, in order and unmodified (name, argument text), among the model's calls."""
    decisions = [tools(call("echo", **TRICKY), call("lookup", key="alpha")), say("echoed")]
    with subject.scripted(decisions) as session:
        subject.needs_model_evidence(session)
        record = session.turn("Echo the payload, then read note alpha.")
    emitted = [
        c
        for request in record.requests or []
        for c in (request.get("response") or {}).get("tool_calls") or []
    ]
    reported = record.read.tool_calls
    evidence = {
        "emitted": [[call_name(c), call_argument_text(c)] for c in emitted],
        "reported": [[call_name(c), _canonical_text(call_arguments(c))] for c in reported],
    }
    position = 0
    for item in reported:
        while position < len(emitted) and not _same(emitted[position], item):
            position += 1
        if position == len(emitted):
            raise CheckFailed(
                f"reported call {call_name(item)}({_canonical_text(call_arguments(item))}) does not appear unmodified, "
                "in order, among the calls the model emitted: record tool calls exactly as emitted",
                evidence,
            )
        position += 1
    return evidence


def _canonical_text(arguments: Any) -> str:
    """Arguments as JSON text with key order and number spelling kept (never sorted)."""
    return json.dumps(arguments, ensure_ascii=False)


def _same(emitted: Any, reported: Any) -> bool:
    if call_name(emitted) != call_name(reported):
        return False
    return _canonical_text(call_arguments(emitted)) == _canonical_text(call_arguments(reported))
