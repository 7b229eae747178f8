"""The check of the model wire: every model call speaks the wire the runtime's manifest declares."""

from __future__ import annotations

from typing import Any

from windtunnel._conformance.model import CheckFailed
from windtunnel._conformance.subject import Subject, call, say, tools
from windtunnel._wire.registry import BY_WIRE, dialect_of


def model_wire(subject: Subject) -> dict[str, Any]:
    """A turn with a tool call and an answer: each model call the gateway logged is in the dialect of the
    declared wire (`[model] wire`, WT_MODEL_WIRE), so the checks compare the shapes the runtime really
    sends, and a runtime certified for one API cannot be calling another."""
    declared = BY_WIRE[subject.wire].name
    with subject.scripted([tools(call("lookup", key="alpha")), say("Read it.")]) as session:
        subject.needs_model_evidence(session)
        record = session.turn("Read note alpha.")
    spoken = [dialect_of(request).name for request in record.requests or []]
    evidence = {"declared": subject.wire, "dialect": declared, "model_calls": spoken}
    if not spoken:
        raise CheckFailed("no model call of the turn reached the gateway", evidence)
    other = sorted(set(spoken) - {declared})
    if other:
        where = subject.manifest or "its runtime.toml"
        raise CheckFailed(
            f"{subject.name} declares wire {subject.wire!r} ({declared}) but its model calls spoke "
            f"{', '.join(other)}: call the gateway in the declared wire, or declare the one it speaks in "
            f"{where} ([model] wire)",
            evidence,
        )
    return evidence
