"""The reset canary (docs/writing-a-runtime.md): seed a random nonce, reset, and look for it afterwards.

The seed turn carries the nonce in the user message and, through the kit's `echo` tool, into a tool call
and its result, so state a runtime keeps of its tools (call logs, indexed results) is seeded too.

Recall mode (`probe_recall=True`): seed the nonce in one session, `reset_state()`, then ask a fresh
session to recall it, the seeded session once more, and a second fresh session the very seed prompt
again. A nonce in an answer, or in any prompt the model was sent after the reset (when the handle hands
over the gateway's log), proves a leak; so does the repeated seed prompt being answered with no model call
at all (an answer cache survived the reset). A clean run is evidence, not proof, of isolation.

Hermetic mode (`probe_recall=False` with a StateProbe): seed, reset, then scan the probe's post-reset
snapshot for the nonce. No send happens after the reset, so no live model is needed.

A reference-capable runtime gets scripted model replies for the seeding (a stub model only has to
ingest); any other runtime needs a live model behind it.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from windtunnel._core.agent_runtime import (
    AgentConfig,
    AgentHandle,
    AgentRuntime,
    ReferenceCapableAgentRuntime,
    StateProbe,
)
from windtunnel._core.reference import ReferenceCase, ReferenceDecision, ReferenceToolCall
from windtunnel._packs.loader import kit_pack
from windtunnel._runner.evidence import drain_model_requests
from windtunnel._runner.lifecycle import provisioned, started_mcps, with_mcp_specs
from windtunnel._trace.shapes import read_response, said
from windtunnel.errors import ProbeError, UsageError

NO_RECALL = "I have no code to recall."
SEED_TOOL = "echo"  # the kit pack's tool that answers with its arguments: the nonce lands in a tool result


@dataclass(frozen=True, slots=True)
class CanaryResult:
    """`leaked` is True when the nonce survived the reset; `detail` says where it was found."""

    leaked: bool
    detail: str
    nonce: str
    mode: Literal["recall", "hermetic"]
    evidence: dict[str, Any] = field(default_factory=dict)


def new_nonce() -> str:
    return f"WT-CANARY-{secrets.token_hex(6).upper()}"


def seed_message(nonce: str) -> str:
    return f"Remember the canary code {nonce} for later. Just reply that you noted the canary code."


PROBE_MESSAGE = "Which canary code did I ask you to remember earlier? Reply with the canary code only."


def script(nonce: str) -> tuple[ReferenceDecision, ...]:
    """The model's replies for a reference-capable runtime: seed (a tool call, then a note), the two recall
    probes, and the repeated seed prompt."""
    seed = ReferenceDecision(tool_calls=(ReferenceToolCall(SEED_TOOL, {"canary": nonce}),))
    noted = ReferenceDecision(content="Noted.")
    refusal = ReferenceDecision(content=NO_RECALL)
    return (seed, noted, refusal, refusal, noted)


@contextmanager
def _handle(runtime: AgentRuntime, config: AgentConfig, nonce: str) -> Iterator[AgentHandle]:
    """A handle with the kit's mocks; a reference-capable runtime gets the canary's scripted replies."""
    case = (
        ReferenceCase(name="reset-canary", kind="golden", decisions=script(nonce))
        if isinstance(runtime, ReferenceCapableAgentRuntime)
        else None
    )
    with (
        started_mcps(runtime, kit_pack().plans()) as mcps,
        provisioned(runtime, with_mcp_specs(config, mcps), mcps, runtime_name="canary", case=case) as handle,
    ):
        yield handle


def _found(nonce: str, value: Any) -> bool:
    return nonce in (value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str))


def sent(request: Mapping[str, Any]) -> list[Any]:
    """Everything a logged model call sent the model, read in its wire: every item of the conversation as
    sent, the system prompt included (Anthropic Messages' `system` and OpenAI Responses' `instructions` travel
    outside `messages`, and so does a conversation Responses recalls by `previous_response_id`)."""
    return [item.native if item.native is not None else item.text for item in said(request)]


def run_reset_canary(
    runtime: AgentRuntime,
    config: AgentConfig | None = None,
    probe_recall: bool = True,
    state_probe: StateProbe | None = None,
) -> CanaryResult:
    """Seed a random nonce, reset, and report whether it survived (see the module docstring)."""
    if not probe_recall and state_probe is None:
        raise UsageError(
            "probe_recall=False needs a state_probe: without one nothing is checked after the reset",
            hint="pass state_probe=..., or use probe_recall=True with a (stub) model behind the runtime",
        )
    nonce = new_nonce()
    seeded = f"wt-canary-seed-{nonce[-6:].lower()}"
    with _handle(runtime, config or AgentConfig(), nonce) as handle:
        handle.reset_state()
        drain_model_requests(handle)
        handle.send([{"role": "user", "content": seed_message(nonce)}], seeded)
        drain_model_requests(handle)
        handle.reset_state()
        if not probe_recall:
            assert state_probe is not None
            return _hermetic(nonce, state_probe)
        return _recall(nonce, handle, seeded)


def _hermetic(nonce: str, probe: StateProbe) -> CanaryResult:
    try:
        snapshot = dict(probe.snapshot())
    except Exception as exc:
        raise ProbeError(f"the state probe failed after the reset: {type(exc).__name__}: {exc}") from exc
    places = [key for key, value in snapshot.items() if _found(nonce, value)]
    if places:
        return CanaryResult(
            True,
            f"the post-reset state still holds the nonce under {', '.join(map(repr, places))}",
            nonce,
            "hermetic",
            {"snapshot": snapshot},
        )
    return CanaryResult(
        False,
        "the post-reset state holds no trace of the nonce",
        nonce,
        "hermetic",
        {"keys": sorted(snapshot)},
    )


def _recall(nonce: str, handle: AgentHandle, seeded: str) -> CanaryResult:
    evidence: dict[str, Any] = {}
    findings: list[str] = []
    for label, session in (
        ("a fresh session", f"wt-canary-fresh-{nonce[-6:].lower()}"),
        ("the seeded session", seeded),
    ):
        content, requests = _turn(handle, PROBE_MESSAGE, session)
        evidence[session] = {"content": content, "model_requests": requests}
        if _found(nonce, content):
            findings.append(f"{label} recalled the nonce in its answer")
        if requests is not None and any(_found(nonce, sent(r)) for r in requests):
            findings.append(f"the model was sent the nonce again in {label} after the reset")
    findings += _repeat_seed(nonce, handle, evidence)
    if findings:
        return CanaryResult(True, "; ".join(findings), nonce, "recall", evidence)
    observed = "answers and model prompts" if evidence[seeded]["model_requests"] is not None else "answers"
    return CanaryResult(
        False,
        f"no trace of the nonce after the reset in the {observed} of both sessions, and the repeated seed "
        "prompt reached the model",
        nonce,
        "recall",
        evidence,
    )


def _turn(handle: AgentHandle, text: str, session: str) -> tuple[str, list[dict[str, Any]] | None]:
    response = handle.send([{"role": "user", "content": text}], session)
    return read_response(response).content or "", drain_model_requests(handle)


def _repeat_seed(nonce: str, handle: AgentHandle, evidence: dict[str, Any]) -> list[str]:
    """The seed prompt once more, in another fresh session: after a reset it must reach the model (its own
    text holds the nonce, so only whether the model was called says anything)."""
    session = f"wt-canary-repeat-{nonce[-6:].lower()}"
    content, requests = _turn(handle, seed_message(nonce), session)
    evidence[session] = {"content": content, "model_requests": requests}
    if requests is not None and not requests:
        return [
            "the seed prompt, sent again in a fresh session after the reset, was answered without any model "
            "call: an answer cache survived the reset"
        ]
    return []
