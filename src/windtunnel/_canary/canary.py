"""The reset canary (seed 002): seed a random nonce, reset, and look for it afterwards.

Recall mode (`probe_recall=True`): seed the nonce in one session, `reset_state()`, then ask a fresh
session to recall it, and the seeded session once more. A nonce in an answer, or in any prompt the model
was sent after the reset (when the handle hands over the gateway's log), proves a leak. A clean run is
evidence, not proof, of isolation.

Hermetic mode (`probe_recall=False` with a StateProbe): seed, reset, then scan the probe's post-reset
snapshot for the nonce. No send happens after the reset, so no live model is needed.

A reference-capable runtime gets scripted model replies for the seeding (a stub model only has to
ingest); any other runtime needs a live model behind it.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from windtunnel._runner.batch import safe_teardown
from windtunnel._runner.evidence import drain_model_requests
from windtunnel._scenario.model import ReferenceCase, ReferenceDecision
from windtunnel._trace.shapes import read_response
from windtunnel.errors import ProbeError, UsageError
from windtunnel.spi.agent_runtime import (
    AgentConfig,
    AgentHandle,
    AgentRuntime,
    ReferenceCapableAgentRuntime,
    StateProbe,
)

REPLIES = ("Noted.", "I have no code to recall.", "I have no code to recall.")


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


@contextmanager
def _handle(runtime: AgentRuntime, config: AgentConfig) -> Iterator[AgentHandle]:
    if isinstance(runtime, ReferenceCapableAgentRuntime):
        script = ReferenceCase(
            name="reset-canary", kind="golden", decisions=tuple(ReferenceDecision(content=r) for r in REPLIES)
        )
        handle = runtime.provision_reference(config, script, [])
    else:
        handle = runtime.provision(config, [])
    try:
        yield handle
    finally:
        safe_teardown(handle, "canary")


def _found(nonce: str, value: Any) -> bool:
    return nonce in (value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str))


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
    with _handle(runtime, config or AgentConfig()) as handle:
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
        response = handle.send([{"role": "user", "content": PROBE_MESSAGE}], session)
        content = read_response(response).content or ""
        requests = drain_model_requests(handle)
        evidence[session] = {"content": content, "model_requests": requests}
        if _found(nonce, content):
            findings.append(f"{label} recalled the nonce in its answer")
        if requests is not None and any(_found(nonce, r.get("messages")) for r in requests):
            findings.append(f"the model was sent the nonce again in {label} after the reset")
    if findings:
        return CanaryResult(True, "; ".join(findings), nonce, "recall", evidence)
    observed = "answers and model prompts" if evidence[seeded]["model_requests"] is not None else "answers"
    return CanaryResult(
        False,
        f"no trace of the nonce after the reset in the {observed} of both sessions",
        nonce,
        "recall",
        evidence,
    )
