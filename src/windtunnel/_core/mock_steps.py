"""The steps of a tool call a pack's MCP mock may declare: progress, log messages, requests to the client.

Steps are data like the rest of a mock's declarations (windtunnel._core.mock_surface); their text fields
may hold `{argument}` placeholders filled from the call's arguments.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from windtunnel._core.frozen import freeze
from windtunnel._core.mock_surface import refuse

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
ANSWER_TIMEOUT_S = 30.0
"""How long a mock waits for the client to answer an elicitation or sampling request, by default."""
MAX_DELAY_S = 5.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Progress:
    """A notifications/progress for the call's progress token (none is sent when the client gave none)."""

    progress: float
    total: float | None = None
    message: str | None = None
    delay_s: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Log:
    """A notifications/message at `level`, sent on the call's stream if the client's log level allows it."""

    data: Any
    level: str = "info"
    logger: str | None = None
    delay_s: float = 0.0

    def __post_init__(self) -> None:
        if self.level not in LOG_LEVELS:
            raise refuse("Log.level", f"is {self.level!r}", f"use one of {', '.join(LOG_LEVELS)}")


@dataclass(frozen=True, slots=True, kw_only=True)
class Elicit:
    """An elicitation/create request (form mode) to the client; the call waits for its answer.

    `expect` is the answer the script expects, matched as a subset of the client's result
    (e.g. `{"action": "accept", "content": {"username": "ada"}}`); None accepts any answer.
    """

    message: str
    schema: Mapping[str, Any]
    expect: Mapping[str, Any] | None = None
    timeout_s: float = ANSWER_TIMEOUT_S
    delay_s: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Sample:
    """A sampling/createMessage request to the client (one user message); the call waits for its answer.

    `expect` is matched as a subset of the client's result, e.g. `{"role": "assistant"}`.
    """

    prompt: str
    max_tokens: int = 100
    system_prompt: str | None = None
    expect: Mapping[str, Any] | None = None
    timeout_s: float = ANSWER_TIMEOUT_S
    delay_s: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class CloseStream:
    """Close the call's SSE stream before the result (SEP-1699 polling): the client must reconnect with
    Last-Event-ID, and the mock's event store replays what it missed. Needs a client of 2025-11-25 or later."""

    delay_s: float = 0.0


Step = Progress | Log | Elicit | Sample | CloseStream
STEP_KINDS = (Progress, Log, Elicit, Sample, CloseStream)
ASKS = (Elicit, Sample)
"""Steps that send the client a request and so need a session to carry its answer back."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Reply:
    """The client's answer to one Elicit or Sample step, handed to the tool's handler in step order.

    `answer` is the client's result in wire shape, or None when it refused (`error` says how) or did not
    answer in time. `met` is whether the answer matched the step's `expect` (True when it had none).
    """

    kind: Literal["elicitation", "sampling"]
    answer: Mapping[str, Any] | None
    error: str | None = None
    met: bool = True


def unsent(steps: Sequence[Step], reason: str) -> tuple[list[Reply], list[dict[str, Any]]]:
    """Replies and exchanges for steps that could not be sent: each asking step gets no answer."""
    replies = [
        Reply(
            kind="elicitation" if isinstance(step, Elicit) else "sampling",
            answer=None,
            error=reason,
            met=step.expect is None,
        )
        for step in steps
        if isinstance(step, ASKS)
    ]
    exchanges = [{"step": index, "delivered": False, "reason": reason} for index in range(len(steps))]
    return replies, exchanges


def check_steps(where: str, steps: Any) -> tuple[Step, ...]:
    """`steps` as a tuple of steps; a PackError naming the culprit for anything else."""
    frozen = freeze(steps)
    if not isinstance(frozen, tuple):
        raise refuse(where, f"is a {type(frozen).__name__}", "write steps=[Progress(...), Log(...), ...]")
    for index, step in enumerate(frozen):
        if not isinstance(step, STEP_KINDS):
            names = ", ".join(kind.__name__ for kind in STEP_KINDS)
            raise refuse(f"{where}[{index}]", f"is a {type(step).__name__}", f"use one of {names}")
        if not 0 <= step.delay_s <= MAX_DELAY_S:
            raise refuse(
                f"{where}[{index}]", f"delay_s is {step.delay_s}", f"use 0 to {MAX_DELAY_S:g} seconds"
            )
    return frozen


def subset(expected: Any, found: Any) -> bool:
    """Whether `found` holds `expected`: objects key by key (recursively), anything else by equality."""
    if isinstance(expected, Mapping):
        return isinstance(found, Mapping) and all(
            key in found and subset(value, found[key]) for key, value in expected.items()
        )
    return bool(expected == found)
