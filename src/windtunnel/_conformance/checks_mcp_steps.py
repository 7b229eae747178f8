"""The MCP client checks of what a server sends the client during a tool call (docs/conformance.md, "MCP
client"): progress and log notifications must not end or alter the call; an elicitation or sampling request
is answered as the runtime declares (`[mcp] elicitation`, `sampling`) or refused, never left hanging.

Each check makes one scripted call to a tool of the media pack whose steps send the client something before
its result (windtunnel._core.mock_steps). The evidence is the mock's record of the call: what it served,
what it sent the client and the answer it got (`exchanges`), what the model was sent, what the runtime
reported (checks_mcp_client.one_call).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jsonschema

from windtunnel._conformance.checks_mcp_client import one_call, visible_text
from windtunnel._conformance.model import CheckFailed, OptionalAbsent
from windtunnel._conformance.subject import Subject
from windtunnel._packs.mediapack.pack import APPROVAL_SCHEMA, ASK_TIMEOUT_S, EXPORT_TEXT
from windtunnel._wire.dialect import Said
from windtunnel._wire.reading import text_parts_of

SAMPLED = "Refunds rose 4% in week 48 (wt-kit sampled answer)."
"""The scripted model's answer to a sampling request a runtime sends through its model endpoint."""
HANG_MARGIN_S = 0.5
"""A request unanswered for the mock's whole wait, less this margin for timers, was left hanging."""


def progress_and_logging(subject: Subject) -> dict[str, Any]:
    """Progress and log notifications during a call neither end it early nor alter its result."""
    item, _request, evidence = one_call(subject, "export")
    if EXPORT_TEXT not in visible_text(item):
        raise CheckFailed(
            f"after its progress and log notifications, the export result did not reach the model byte for "
            f"byte: served {EXPORT_TEXT!r}, sent {visible_text(item)[:160]!r}",
            evidence,
        )
    delivered = [e.get("kind") for e in evidence.get("exchanges", []) if e.get("delivered")]
    if not delivered:
        raise OptionalAbsent(
            "the client asked for no progress and no log message, so none was sent during the call: not measured",
            evidence,
        )
    evidence["delivered"] = delivered
    return evidence


def elicitation(subject: Subject) -> dict[str, Any]:
    """An elicitation request during a call is answered as `[mcp] elicitation` declares, or refused when
    it declares "refuse"; never left unanswered."""
    _item, exchange, evidence = asked(subject, "approval", "elicitation")
    policy = subject.mcp.elicitation
    answer = exchange.get("answer")
    if policy is None:
        raise OptionalAbsent(
            f"declares no elicitation policy ([mcp] elicitation): it {did(exchange)}", evidence
        )
    problem = elicitation_problem(policy, answer)
    if problem:
        raise CheckFailed(f'declares elicitation = "{policy}" but {problem}', evidence)
    return evidence


def sampling(subject: Subject) -> dict[str, Any]:
    """A sampling request during a call is answered through the runtime's model (`[mcp] sampling = "model"`)
    or refused (`"refuse"`); never left unanswered."""
    policy = subject.mcp.sampling
    answers = [SAMPLED] if policy == "model" else []
    _item, exchange, evidence = asked(subject, "digest", "sampling", answers=answers)
    answer = exchange.get("answer")
    if policy is None:
        raise OptionalAbsent(f"declares no sampling policy ([mcp] sampling): it {did(exchange)}", evidence)
    problem = sampling_problem(policy, answer)
    if problem:
        raise CheckFailed(f'declares sampling = "{policy}" but {problem}', evidence)
    return evidence


def asked(
    subject: Subject, tool: str, kind: str, *, answers: list[str] | None = None
) -> tuple[Said, Mapping[str, Any], dict[str, Any]]:
    """One call of an asking tool: the result as sent, the mock's exchange of its request, the evidence.
    A request left unanswered, or a result that did not reach the model as served, fails whatever is
    declared."""
    item, _request, evidence = one_call(subject, tool, answers=answers or [])
    exchange = next((e for e in evidence.get("exchanges", []) if e.get("kind") == kind), None)
    if exchange is None and evidence.get("unretried_rounds"):
        # The 2026-07-28 transport asks in the call's first result; a client that refuses raises locally
        # and never retries, so the mock's evidence is that first round and no call.
        refused = "the client never retried the call with an answer to the input request it was sent"
        exchange = {"kind": kind, "sent": evidence["unretried_rounds"][0], "answer": None, "error": refused}
        if not visible_text(item).strip():
            raise CheckFailed(f"the refused {kind} request reached the model as an empty result", evidence)
        return item, exchange, evidence
    if exchange is None:
        raise CheckFailed(f"the mock recorded no {kind} request sent during the {tool} call", evidence)
    if hung(exchange):
        raise CheckFailed(
            f"the {kind} request was left unanswered for the mock's whole {ASK_TIMEOUT_S:g} s wait: a client "
            "answers or refuses a request during a call, never leaves it hanging",
            evidence,
        )
    served = text_parts_of((evidence["served"][0] or {}).get("content"))
    if served not in visible_text(item):
        raise CheckFailed(
            f"the {tool} result did not reach the model as served: served {served!r}, sent "
            f"{visible_text(item)[:160]!r}",
            evidence,
        )
    return item, exchange, evidence


def hung(exchange: Mapping[str, Any]) -> bool:
    """Whether the client left the request unanswered until the mock stopped waiting."""
    if exchange.get("answer") is not None:
        return False
    waited = exchange.get("seconds")
    return isinstance(waited, int | float) and waited >= ASK_TIMEOUT_S - HANG_MARGIN_S


def did(exchange: Mapping[str, Any]) -> str:
    """What the client did with a request, for an INFO line."""
    answer = exchange.get("answer")
    if answer is None:
        return f"refused it ({exchange.get('error')})"
    return f"answered {answer.get('action', answer.get('role', '?'))}"


def elicitation_problem(policy: str, answer: Mapping[str, Any] | None) -> str | None:
    """Why `answer` (None: refused) is not what `policy` declares; None when it is."""
    if policy == "refuse":
        return None if answer is None else f"it answered {dict(answer)}"
    if answer is None:
        return "it refused the request"
    if answer.get("action") != policy:
        return f"it answered action {answer.get('action')!r}"
    if policy == "accept":
        try:
            jsonschema.validate(answer.get("content"), APPROVAL_SCHEMA)
        except jsonschema.ValidationError as exc:
            return f"its content breaks the requested schema: {exc.message}"
    return None


def sampling_problem(policy: str, answer: Mapping[str, Any] | None) -> str | None:
    """Why `answer` (None: refused) is not what `policy` declares; None when it is."""
    if policy == "refuse":
        return None if answer is None else f"it answered {dict(answer)}"
    if answer is None:
        return "it refused the request"
    content = answer.get("content")
    text = content.get("text") if isinstance(content, Mapping) else None
    if answer.get("role") != "assistant" or text != SAMPLED:
        return f"its answer is not the model's reply {SAMPLED!r} as an assistant message: {dict(answer)}"
    return None


MCP_STEP_CHECKS = (
    (
        "progress_and_logging",
        "progress and log notifications neither end nor alter a call",
        progress_and_logging,
    ),
    ("elicitation", "an elicitation request is answered as declared, never left hanging", elicitation),
    ("sampling", "a sampling request is answered as declared, never left hanging", sampling),
)
