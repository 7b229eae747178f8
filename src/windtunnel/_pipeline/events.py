"""What a certify run reports as it goes, as data: each stage's start, and its end with its time and checks
(the CLI's progress view, `wt certify --json` and the timings behind its ETA read these)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class StageStarted:
    """A stage of one runtime's run began."""

    runtime: str
    stage: str


@dataclass(frozen=True, slots=True)
class StageFinished:
    """`checks` are (check id, status) in the order the stage recorded them."""

    runtime: str
    stage: str
    seconds: float
    checks: tuple[tuple[str, str], ...]


Event = StageStarted | StageFinished
EventSink = Callable[[Event], None]


def ignore(event: Event) -> None:
    """The default sink: a run reported to nobody."""
