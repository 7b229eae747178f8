"""A runtime's declared fault policy, `[faults]` in runtime.toml: what it retries, how it waits, its deadline.

    [faults]
    retries = 2                          # at most this many retries of one model call (default 0)
    retry_on = ["model_429", "model_5xx", "model_503"]   # the faults it retries (names of faults/<name>)
    backoff_s = 1.0                      # the first retry waits this long ...
    backoff_factor = 2.0                 # ... each later one this many times the one before
    retry_after = true                   # waits at least a 429/503's retry-after when it is longer
    turn_deadline_s = 120                # a turn still running after this is failed by the runtime itself
    unhandled = { mcp_crash = "the SDK hangs on a dropped connection; tracked upstream" }

The default (no table) is no retries and no deadline: a runtime written before fault checks existed is
certified as it behaves. A fault named in `unhandled` is reported as INFO with its reason, never PASSED.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated

from windtunnel._configfile import Strict, names_in, reasons_for, spec
from windtunnel._core.faults import FAULT_CLASSES, MODEL_FAULT_CLASSES

RETRYABLE = tuple(MODEL_FAULT_CLASSES)
"""The faults a retry policy may name: a model call's (a tool call is the model's to retry, not the loop's)."""
MAX_RETRIES = 10


class FaultsTable(Strict):
    retries: int | None = spec(
        expect=f"a whole number 0-{MAX_RETRIES}", example="retries = 2 under [faults]", ge=0, le=MAX_RETRIES
    )
    retry_on: Annotated[list[str] | None, names_in(RETRYABLE, "fault")] = spec(
        expect=f"a list of model fault names ({', '.join(RETRYABLE)})",
        example='retry_on = ["model_429", "model_5xx"] under [faults]',
    )
    backoff_s: float | None = spec(
        expect="seconds, 0-60", example="backoff_s = 1.0 under [faults]", ge=0, le=60
    )
    backoff_factor: float | None = spec(
        expect="a factor, 1-10", example="backoff_factor = 2.0 under [faults]", ge=1, le=10
    )
    retry_after: bool | None = spec(
        expect="true or false (a TOML boolean)", example="retry_after = true under [faults]"
    )
    turn_deadline_s: float | None = spec(
        expect="seconds, more than 0", example="turn_deadline_s = 120 under [faults]", gt=0, le=3600
    )
    unhandled: Annotated[
        dict[str, str] | None, reasons_for(FAULT_CLASSES, "fault", "why the runtime does not handle it")
    ] = spec(
        expect='a table of fault name = "the reason it is not handled"',
        example='unhandled = { oom = "the runtime has no memory guard" } under [faults]',
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class FaultPolicy:
    """The merged `[faults]` of a runtime (see the module docstring); the default retries nothing."""

    retries: int = 0
    retry_on: frozenset[str] = frozenset()
    backoff_s: float = 0.0
    backoff_factor: float = 1.0
    retry_after: bool = False
    turn_deadline_s: float | None = None
    unhandled: Mapping[str, str] = field(default_factory=dict)

    def retries_on(self, fault: str) -> int:
        """How many retries of one model call the policy allows after `fault`."""
        return self.retries if fault in self.retry_on else 0

    def backoff(self, retry: int) -> float:
        """The least wait the policy declares before retry number `retry` (1-based)."""
        return self.backoff_s * self.backoff_factor ** (retry - 1)

    def over(self, table: FaultsTable | None) -> FaultPolicy:
        """This policy with `table`'s keys over it (a variant inherits what it leaves out)."""
        if table is None:
            return self
        return FaultPolicy(
            retries=table.retries if table.retries is not None else self.retries,
            retry_on=frozenset(table.retry_on) if table.retry_on is not None else self.retry_on,
            backoff_s=table.backoff_s if table.backoff_s is not None else self.backoff_s,
            backoff_factor=table.backoff_factor if table.backoff_factor is not None else self.backoff_factor,
            retry_after=table.retry_after if table.retry_after is not None else self.retry_after,
            turn_deadline_s=table.turn_deadline_s
            if table.turn_deadline_s is not None
            else self.turn_deadline_s,
            unhandled={**self.unhandled, **(table.unhandled or {})},
        )
