"""Scripted faults: a model answer that fails on purpose, so a check can watch what a runtime does then.

A fault rides on a reference decision (`ReferenceDecision.fault`) and is served in place of (or as a broken
form of) that decision's answer; each dialect renders it natively. Format-neutral, like the decision.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal, get_args

from windtunnel.errors import UsageError

ModelFaultKind = Literal["rate_limited", "server_error", "unavailable", "stall", "cut", "malformed", "slow"]
MODEL_FAULT_KINDS: tuple[str, ...] = get_args(ModelFaultKind)

FAULT_STATUS: Mapping[str, int] = {"rate_limited": 429, "server_error": 500, "unavailable": 503}
"""The faults answered with an HTTP error status instead of an answer."""
STREAM_FAULTS = frozenset({"stall", "cut"})
"""The faults that break an answer off after `after_events` stream events (or half its bytes, unstreamed)."""

_FIELDS = frozenset({"kind", "retry_after", "after_events", "seconds"})
_SHAPE = '{"kind": "rate_limited"|"server_error"|..., "retry_after": s, "after_events": n, "seconds": s}'


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelFault:
    """One scripted model-API fault.

    `kind`: rate_limited (429), server_error (500), unavailable (503), stall (the answer stops after
    `after_events` events for `seconds`, then the connection ends), cut (the answer ends after
    `after_events` events without its terminal event), malformed (the body, or one stream event, is not
    JSON), slow (the whole answer, after `seconds`). `retry_after` (seconds) is sent as `retry-after` on
    the status faults when set.
    """

    kind: ModelFaultKind
    retry_after: float | None = None
    after_events: int = 1
    seconds: float = 0.0

    def __post_init__(self) -> None:
        if self.kind not in MODEL_FAULT_KINDS:
            raise _bad(
                "kind", f"unknown fault kind {self.kind!r}; expected one of {', '.join(MODEL_FAULT_KINDS)}"
            )
        if self.retry_after is not None and (_number(self.retry_after) is None or self.retry_after < 0):
            raise _bad("retry_after", f"retry_after must be seconds >= 0, got {self.retry_after!r}")
        if (
            isinstance(self.after_events, bool)
            or not isinstance(self.after_events, int)
            or self.after_events < 0
        ):
            raise _bad("after_events", f"after_events must be a whole number >= 0, got {self.after_events!r}")
        if _number(self.seconds) is None or self.seconds < 0:
            raise _bad("seconds", f"seconds must be a number >= 0, got {self.seconds!r}")

    @property
    def status(self) -> int | None:
        """The HTTP status this fault answers with, None when it breaks (or delays) an answer instead."""
        return FAULT_STATUS.get(self.kind)

    def to_json(self) -> dict[str, Any]:
        """Its fields by name: what `fault_from_json` reads back."""
        return asdict(self)


def fault_from_json(data: Any, where: str) -> ModelFault:
    """A fault from its JSON form; a UsageError naming `where` and the bad field otherwise."""
    if not isinstance(data, Mapping):
        raise UsageError(f"{where} must be a JSON object", hint=f"send {_SHAPE}", field=where)
    unknown = sorted(set(data) - _FIELDS)
    if unknown:
        raise UsageError(
            f"{where}: unknown field {unknown[0]!r}", hint=f"send {_SHAPE}", field=f"{where}.{unknown[0]}"
        )
    try:
        return ModelFault(
            kind=data.get("kind"),  # type: ignore[arg-type]  # checked in __post_init__
            retry_after=data.get("retry_after"),
            after_events=data.get("after_events", 1),
            seconds=data.get("seconds", 0.0),
        )
    except UsageError as exc:
        raise UsageError(
            f"{where}.{exc.message}", hint=f"send {_SHAPE}", field=f"{where}.{exc.context['field']}"
        ) from exc


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _bad(name: str, message: str) -> UsageError:
    return UsageError(f"{name}: {message}", hint=f"send {_SHAPE}", field=name)


ToolFaultKind = Literal["error_result", "jsonrpc_error", "crash", "late"]
TOOL_FAULT_KINDS: tuple[str, ...] = get_args(ToolFaultKind)
_TOOL_FIELDS = frozenset({"tool", "kind", "seconds"})
_TOOL_SHAPE = (
    '{"faults": [{"tool": name, "kind": "error_result"|"jsonrpc_error"|"crash"|"late", "seconds": s}]}'
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolFault:
    """One scripted fault of an MCP mock's tool, served to the next call of `tool` instead of its result.

    `kind`: error_result (an isError result; the tool does not run), jsonrpc_error (JSON-RPC error -32603;
    the tool does not run), crash (the server drops the connection mid-call; the tool does not run), late
    (the tool runs and answers after `seconds`).
    """

    tool: str
    kind: ToolFaultKind
    seconds: float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.tool, str) or not self.tool:
            raise _tool_bad("tool", f"tool must name a tool of the server, got {self.tool!r}")
        if self.kind not in TOOL_FAULT_KINDS:
            raise _tool_bad(
                "kind", f"unknown fault kind {self.kind!r}; expected one of {', '.join(TOOL_FAULT_KINDS)}"
            )
        if _number(self.seconds) is None or self.seconds < 0:
            raise _tool_bad("seconds", f"seconds must be a number >= 0, got {self.seconds!r}")

    def to_json(self) -> dict[str, Any]:
        return {"tool": self.tool, "kind": self.kind, "seconds": self.seconds}


def tool_faults_from_json(data: Any) -> tuple[ToolFault, ...]:
    """The faults of a PUT /wt/faults body; a UsageError naming the bad entry and field otherwise."""
    items = data.get("faults") if isinstance(data, Mapping) else None
    if not isinstance(items, list):
        raise UsageError(
            "the body must be a JSON object with a faults list", hint=f"send {_TOOL_SHAPE}", field="faults"
        )
    faults = []
    for index, item in enumerate(items):
        where = f"faults[{index}]"
        unknown = sorted(set(item) - _TOOL_FIELDS) if isinstance(item, Mapping) else ["(not an object)"]
        if unknown:
            raise UsageError(f"{where}: unexpected {unknown[0]!r}", hint=f"send {_TOOL_SHAPE}", field=where)
        try:
            kind = item.get("kind")  # checked in __post_init__
            faults.append(ToolFault(tool=item.get("tool"), kind=kind, seconds=item.get("seconds", 0.0)))
        except UsageError as exc:
            raise UsageError(
                f"{where}.{exc.message}", hint=exc.hint, field=f"{where}.{exc.context['field']}"
            ) from exc
    return tuple(faults)


def _tool_bad(name: str, message: str) -> UsageError:
    return UsageError(f"{name}: {message}", hint=f"send {_TOOL_SHAPE}", field=name)


MODEL_FAULT_CLASSES: Mapping[str, str] = {
    "model_429": "rate_limited",
    "model_5xx": "server_error",
    "model_503": "unavailable",
    "stream_stall": "stall",
    "stream_cut": "cut",
    "model_malformed": "malformed",
    "model_slow": "slow",
}
"""The model faults by the name their check (`faults/<name>`) and a runtime's `[faults]` policy use."""
TOOL_FAULT_CLASSES: Mapping[str, str] = {
    "mcp_error": "error_result",
    "mcp_jsonrpc_error": "jsonrpc_error",
    "mcp_crash": "crash",
    "mcp_late": "late",
}
"""The MCP tool faults by the name their check and the `[faults]` policy use."""
CONTAINER_FAULT_CLASSES = ("mcp_gone", "oom", "killed", "disk_full")
"""Faults the harness makes happen itself (a mock stopped, the runtime's container starved or killed)."""
FAULT_CLASSES: tuple[str, ...] = (*MODEL_FAULT_CLASSES, *TOOL_FAULT_CLASSES, *CONTAINER_FAULT_CLASSES)
