"""Checks on the evidence a run leaves and the box it runs in: rendered prompt and usage captured, egress
closed."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from windtunnel._conformance.evidence import raise_for_run_error
from windtunnel._conformance.model import CheckFailed, NotMeasured, OptionalAbsent
from windtunnel._conformance.subject import Subject, two_step_script
from windtunnel._core.abilities import ContainerListingRuntime, EgressProbingRuntime
from windtunnel._core.agent_runtime import AgentConfig
from windtunnel._runner.lifecycle import provisioned, started_mcps, with_mcp_specs
from windtunnel._trace.models import ModelCall, Trace
from windtunnel._trace.usage import normalise_call

USAGE_FIELDS = ("prompt_tokens", "completion_tokens")


def rendered_prompt_and_usage(subject: Subject) -> dict[str, Any]:
    """Each turn's rendered prompt is captured and hashed; usage, when reported, is normalised per model call
    and equals what the gateway served: per call, or summed over the turn when the runtime reports one entry.
    Usage not reported is an INFO record (usage unknown), never a failure."""
    scenario = subject.pack.scenario("two_step")
    decisions = two_step_script()
    with subject.scripted(decisions) as session:
        subject.needs_model_evidence(session)
        trace = session.run(scenario).trace
    raise_for_run_error(trace, session.run_failure)
    if not trace.turns:
        raise CheckFailed("the run produced no turn")
    turn = trace.turns[0]
    requests = trace.model_requests or []
    evidence: dict[str, Any] = {
        "model_calls": [c.model_dump() for c in trace.model_calls or []],
        "requests": len(requests),
        "served": [r.get("usage") for r in requests],
    }
    if turn.rendered_prompt is None:
        raise CheckFailed("no rendered prompt was captured for the turn", evidence)
    digest = "sha256:" + hashlib.sha256(turn.rendered_prompt.encode()).hexdigest()
    if turn.rendered_prompt_hash != digest:
        raise CheckFailed("the rendered prompt's hash does not match the prompt", evidence)
    if turn.usage is None or trace.model_calls is None:
        # Contract C calls usage optional: without it, usage is unknown, which is recorded, never failed.
        raise OptionalAbsent(
            "rendered prompt captured and hashed; usage not reported: unknown (usage is optional)",
            {**evidence, "rendered_prompt_hash": digest},
        )
    problem = _usage_problem(trace, requests)
    if problem is not None:
        raise CheckFailed(problem, evidence)
    return {**evidence, "rendered_prompt_hash": digest}


def _usage_problem(trace: Trace, requests: Sequence[dict[str, Any]]) -> str | None:
    calls = trace.model_calls or []
    served = [served_usage(r) for r in requests]
    if len(calls) == len(served):
        wrong = [i for i, (c, s) in enumerate(zip(calls, served, strict=True)) if _differs(c, s)]
        return f"reported usage differs from what the model served on call(s) {wrong}" if wrong else None
    if len(calls) != len(trace.turns):
        return f"{len(calls)} usage entries for {len(served)} model calls in {len(trace.turns)} turn(s)"
    # One aggregate entry per turn: it must be the sum of what the gateway served during that turn.
    for turn, reported in zip(trace.turns, calls, strict=True):
        summed = _summed([served_usage(r) for r in requests if r.get("turn") == turn.index])
        if _differs(reported, summed):
            return (
                f"turn {turn.index} reports usage {_counts(reported)} but the gateway served {summed} over its "
                "model calls: report per-call usage (usage.calls) or the exact sum"
            )
    return None


def served_usage(request: Mapping[str, Any]) -> dict[str, Any]:
    """A logged model call's usage as prompt and completion tokens, whatever its wire spells them (chat's
    prompt_tokens, Anthropic's and Responses' input_tokens / output_tokens): read as a runtime's reported
    usage is read (windtunnel._trace.usage), so the two compare in one vocabulary in every wire."""
    usage = request.get("usage")
    entry = normalise_call(usage if isinstance(usage, Mapping) else {}, "")
    return {field: getattr(entry, field) for field in USAGE_FIELDS}


def _summed(usages: Sequence[dict[str, Any]]) -> dict[str, Any]:
    total: dict[str, Any] = {}
    for field in USAGE_FIELDS:
        values = [u.get(field) for u in usages]
        total[field] = sum(values) if values and all(isinstance(v, int) for v in values) else None
    return total


def _counts(call_: ModelCall) -> dict[str, Any]:
    return {field: getattr(call_, field) for field in USAGE_FIELDS}


def _differs(reported: ModelCall, served: dict[str, Any]) -> bool:
    return any(
        served.get(field) is not None and getattr(reported, field) != served.get(field)
        for field in USAGE_FIELDS
    )


def egress_closed(subject: Subject) -> dict[str, Any]:
    """Inside a running runtime's own network namespace, the gateway and its mocks answer and nothing else
    does: not the host (through any of its addresses), not another network, not the metadata address, and
    no route but the run's subnet exists; and each runtime container is on the run's internal network only
    (docs/design.md "Containers and network")."""
    runtime = subject.runtime
    if not isinstance(runtime, EgressProbingRuntime) or not isinstance(runtime, ContainerListingRuntime):
        raise NotMeasured(f"{subject.name} runs where Wind Tunnel cannot place an egress probe or inspect it")
    with started_mcps(runtime, subject.pack.plans()) as mcps:
        config = with_mcp_specs(AgentConfig(), mcps)
        with provisioned(subject.runtime, config, mcps, runtime_name=subject.name):
            report = runtime.probe_egress()
            found = runtime.runtime_containers()
    if not found:
        raise CheckFailed(f"{subject.name} was provisioned but the run shows no runtime container")
    attached = {name: dict(networks) for name, networks in found.items()}
    network = runtime.run_network()
    evidence = {
        "attempts": [asdict(attempt) for attempt in report.attempts],
        "routes": list(report.routes),
        "allowed_routes": list(report.allowed_routes),
        "default_route": report.default_route,
        "control_without_fence": [asdict(attempt) for attempt in report.control],
        # The probe's blocked attempts as the fence recorded them: the same record lists, per runtime,
        # what the runtime itself tried to reach (the bundle's `publish/reach` evidence).
        "fence_recorded_probe": [attempt.line() for attempt in report.fence_recorded],
        "run_network": network,
        "attached": attached,
    }
    problems = report.problems()
    if problems:
        raise CheckFailed("the runtime's network is not closed: " + "; ".join(problems), evidence)
    for name, networks in attached.items():
        if networks != {network: True}:
            raise CheckFailed(
                f"runtime container {name} is attached to {networks} (network: is internal); it must be on "
                f"the run's internal network {network} only",
                evidence,
            )
    return evidence
