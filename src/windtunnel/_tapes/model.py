"""The tape format: a header line and one line per interaction, each a versioned pydantic model.

A tape is JSONL. Line 1 is the header, every other line is one interaction:

    {"kind": "header", "schema_version": 1, "tape": ..., "recorded_at": ..., "fingerprint_version": 1,
     "lineage": {...}}
    {"kind": "interaction", "seq": 0, "fingerprint": ..., "recorded_at": ...,
     "request": {"method", "upstream", "path", "body"},
     "response": {"status", "body"} | {"status", "events": [...]}}
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, model_validator

TAPE_SCHEMA_VERSION = 1
RECORDER = "windtunnel.gateway.record"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Lineage(_Strict):
    """Where a tape came from. `promoted_*` are set only on golden tapes.

    `runtime`, `pack` and `scenario` name the run that recorded the tape, and `verdict` is that run's score
    status: the tape-fidelity stage replays the scenario through the runtime and requires the same verdict.
    `wt tapes record` fills them in when it promotes; a tape recorded another way may leave them unset.
    """

    recorder: str = RECORDER
    recorder_version: str
    fingerprint_version: int
    upstream: str
    source_run: str | None = None
    requested_models: list[str] = Field(default_factory=list)
    reported_models: list[str] = Field(default_factory=list)
    recorded_at: AwareDatetime
    promoted_at: AwareDatetime | None = None
    promoted_from: str | None = None
    runtime: str | None = None
    pack: str | None = None
    scenario: str | None = None
    verdict: str | None = None
    scripted: bool = Field(
        default=False,
        description="recorded from the scripted stand-in upstream (`wt tapes record --scripted-upstream`): "
        "every answer is a decision of the scenario's golden case, so the tape is exempt from the age "
        "limit; set only by the recorder, and checked against the scenario wherever it is at hand",
    )


class TapeHeader(_Strict):
    kind: Literal["header"] = "header"
    schema_version: Literal[1] = 1
    tape: str
    recorded_at: AwareDatetime
    fingerprint_version: int
    lineage: Lineage
    # The rule set that normalised volatile request fields before hashing (fingerprint.VOLATILE_RULES);
    # absent on tapes that hold only chat requests, whose fingerprints no rule touches.
    volatile_rules: str | None = None


class RecordedRequest(_Strict):
    """The fingerprinted parts of a request: the body holds only allowlisted fields, secrets redacted."""

    method: str
    upstream: str
    path: str
    body: dict[str, Any]
    headers: dict[str, str] = Field(default_factory=dict)


class RecordedResponse(_Strict):
    """A JSON response (`body`) or a stream (`events`: the SSE data objects in order, without [DONE])."""

    status: int
    body: Any = None
    events: list[dict[str, Any]] | None = None
    headers: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_payload(self) -> RecordedResponse:
        if (self.body is None) == (self.events is None):
            raise ValueError("a response holds exactly one of body (JSON) or events (stream)")
        return self

    @property
    def is_stream(self) -> bool:
        return self.events is not None


class Interaction(_Strict):
    kind: Literal["interaction"] = "interaction"
    seq: int = Field(ge=0)
    fingerprint: str = Field(pattern=r"^[0-9a-f]{64}$")
    recorded_at: AwareDatetime
    request: RecordedRequest
    response: RecordedResponse


@dataclass(frozen=True, slots=True)
class Tape:
    """A loaded tape. `path` is None for a tape built in memory and not yet written."""

    header: TapeHeader
    interactions: tuple[Interaction, ...]
    path: Path | None = None

    @property
    def name(self) -> str:
        return self.header.tape

    @property
    def label(self) -> str:
        """How errors name this tape: its path when it has one."""
        return str(self.path) if self.path is not None else self.header.tape

    @property
    def oldest(self) -> datetime:
        """When the oldest interaction was recorded (the header's time for an empty tape)."""
        times = [interaction.recorded_at for interaction in self.interactions]
        return min(times) if times else self.header.recorded_at
