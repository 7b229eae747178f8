"""Checks on configuration and evidence: sampling reaches the model, unsupported config raises, rendered
prompts and usage are captured, and the runtime's network is closed."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from windtunnel._conformance.model import CheckFailed, NotMeasured
from windtunnel._conformance.subject import Subject, call, say, tools
from windtunnel._drivers.manifest import CONFIG_FIELDS
from windtunnel._runner.batch import safe_teardown, started_mcps, with_mcp_specs
from windtunnel.errors import UnsupportedConfigError
from windtunnel.spi.agent_runtime import AgentConfig, ModelSpec, SamplingConfig

WANTED = {"temperature": 0.0, "top_p": 0.5, "max_tokens": 321, "tool_choice": "auto"}


def _sampling(subject: Subject) -> dict[str, Any]:
    if subject.supported is None:
        return dict(WANTED)
    return {key: value for key, value in WANTED.items() if f"sampling.{key}" in subject.supported}


def _normalised(turn: Any) -> str:
    """A turn's content, calls and prompts with the per-request call ids replaced by their position."""
    text = json.dumps(
        {
            "content": turn.read.content,
            "calls": turn.read.tool_calls,
            "prompts": [r.get("messages") for r in turn.requests or []],
        },
        sort_keys=True,
    )
    ids = list(dict.fromkeys(re.findall(r"call_[A-Za-z0-9_]+", text)))
    for position, identifier in enumerate(ids):
        text = text.replace(identifier, f"call#{position}")
    return text


def sampling(subject: Subject) -> dict[str, Any]:
    """The gateway sees the configured temperature, top_p, max_tokens and tool_choice on every model call,
    and temperature 0 twice gives identical traces."""
    wanted = _sampling(subject)
    if not wanted:
        raise NotMeasured(f"{subject.name} declares no sampling field it honours")
    config = AgentConfig(sampling=SamplingConfig(**wanted))
    runs = []
    for _ in range(2):
        with subject.scripted([tools(call("lookup", key="alpha")), say("Read it.")], config) as session:
            subject.needs_model_evidence(session)
            runs.append(session.turn("Read note alpha."))
    seen = [r.get("sampling", {}) for turn in runs for r in turn.requests or []]
    evidence: dict[str, Any] = {"configured": wanted, "seen": seen}
    for key, value in wanted.items():
        names = ("max_tokens", "max_completion_tokens") if key == "max_tokens" else (key,)
        missing = [s for s in seen if not any(name in s and s[name] == value for name in names)]
        if missing or not seen:
            raise CheckFailed(
                f"sampling.{key}={value!r} did not reach the model on every call (seen: {seen})", evidence
            )
    first, second = (_normalised(turn) for turn in runs)
    if first != second:
        raise CheckFailed(
            "temperature 0 twice gave different traces", {**evidence, "first": first, "second": second}
        )
    return evidence


PROBES: dict[str, AgentConfig] = {
    "system_prompt": AgentConfig(system_prompt="You are a conformance probe."),
    "persona_doc": AgentConfig(persona_doc=Path("AGENTS.md")),
    "skills": AgentConfig(skills=(Path("skills/probe.md"),)),
    "model.name": AgentConfig(model=ModelSpec("wt-conformance-model")),
    "model.quant": AgentConfig(model=ModelSpec("wt-conformance-model", quant="q4_k_m")),
    "sampling.temperature": AgentConfig(sampling=SamplingConfig(temperature=0.3)),
    "sampling.top_p": AgentConfig(sampling=SamplingConfig(top_p=0.3)),
    "sampling.tool_choice": AgentConfig(sampling=SamplingConfig(tool_choice="required")),
    "sampling.max_tokens": AgentConfig(sampling=SamplingConfig(max_tokens=33)),
}
UNKNOWN_EXTENSION = AgentConfig(extensions={"wt.conformance/unknown-setting": True})


def unsupported_config(subject: Subject) -> dict[str, Any]:
    """Config fields a runtime cannot honour raise UnsupportedConfigError instead of being ignored; an
    unknown extension always raises."""
    supported = subject.supported or frozenset()
    probes = {f: c for f, c in PROBES.items() if f not in supported and f in CONFIG_FIELDS}
    probes["extensions"] = UNKNOWN_EXTENSION
    outcomes: dict[str, str] = {}
    for name, config in probes.items():
        outcomes[name] = _provision_outcome(subject, config)
    ignored = [name for name, outcome in outcomes.items() if outcome != "raised UnsupportedConfigError"]
    if ignored:
        raise CheckFailed(
            f"provision() accepted config it cannot honour: {', '.join(ignored)}", {"outcomes": outcomes}
        )
    return {"supported": sorted(supported), "outcomes": outcomes}


def _provision_outcome(subject: Subject, config: AgentConfig) -> str:
    with started_mcps(subject.runtime, []) as mcps:
        try:
            handle = subject.runtime.provision(with_mcp_specs(config, mcps), list(mcps))
        except UnsupportedConfigError:
            return "raised UnsupportedConfigError"
        except Exception as exc:  # noqa: BLE001 - any other exception is the finding
            return f"raised {type(exc).__name__}: {exc}"
        safe_teardown(handle, subject.name)
        return "accepted silently"


def rendered_prompt_and_usage(subject: Subject) -> dict[str, Any]:
    """Each turn's rendered prompt is captured and hashed; usage is reported and normalised per model call."""
    scenario = subject.pack.scenario("two_step")
    decisions = [
        tools(call("lookup", key="alpha")),
        tools(call("store", key="beta", value="first note")),
        say("copied"),
    ]
    with subject.scripted(decisions) as session:
        subject.needs_model_evidence(session)
        trace = session.run(scenario).trace
    if not trace.turns:
        raise CheckFailed(f"the run produced no turn: {trace.error.message if trace.error else 'no error'}")
    turn = trace.turns[0]
    requests = trace.model_requests or []
    evidence: dict[str, Any] = {
        "model_calls": [c.model_dump() for c in trace.model_calls or []],
        "requests": len(requests),
    }
    if turn.rendered_prompt is None:
        raise CheckFailed("no rendered prompt was captured for the turn", evidence)
    digest = "sha256:" + hashlib.sha256(turn.rendered_prompt.encode()).hexdigest()
    if turn.rendered_prompt_hash != digest:
        raise CheckFailed("the rendered prompt's hash does not match the prompt", evidence)
    if turn.usage is None or trace.model_calls is None:
        raise CheckFailed("the runtime reported no usage for the turn (usage stays unknown)", evidence)
    served = [r.get("usage") or {} for r in requests]
    if len(trace.model_calls) == len(served):
        wrong = [
            i
            for i, (c, s) in enumerate(zip(trace.model_calls, served, strict=True))
            if c.prompt_tokens != s.get("prompt_tokens") or c.completion_tokens != s.get("completion_tokens")
        ]
        if wrong:
            raise CheckFailed(
                f"reported usage differs from what the model served on call(s) {wrong}",
                {**evidence, "served": served},
            )
    elif len(trace.model_calls) != 1:
        raise CheckFailed(f"{len(trace.model_calls)} usage entries for {len(served)} model calls", evidence)
    return {**evidence, "rendered_prompt_hash": digest}


def egress_closed(subject: Subject) -> dict[str, Any]:
    """From the runtime's network, the gateway and its mocks answer and nothing outside does."""
    probe = getattr(subject.runtime, "probe_egress", None)
    if not callable(probe):
        raise NotMeasured(f"{subject.name} runs where Wind Tunnel cannot place an egress probe")
    with started_mcps(subject.runtime, subject.pack.plans()):
        report = probe()
    evidence = {
        "reached": dict(report.reached),
        "default_route": report.default_route,
        "expected_reachable": list(report.expected_reachable),
        "expected_blocked": list(report.expected_blocked),
    }
    if not report.closed:
        raise CheckFailed("the runtime's network is not closed: " + json.dumps(evidence["reached"]), evidence)
    return evidence
