"""Tapes in this process: write one from exchanges, replay one without a gateway (windtunnel.api's door).

Both go through the code the gateway uses (TapeBuilder, ReplayMode), so what they write and answer is
exactly what record and replay mode would; only the HTTP server is left out. Benches and tools that
measure or script the tape engine use these instead of its private classes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from windtunnel._tapes.builder import TapeBuilder
from windtunnel._tapes.model import RecordedResponse, Tape
from windtunnel._tapes.replay import ReplayMode, reply_for
from windtunnel._tapes.store import load_tape, write_tape


class TapeExchange(NamedTuple):
    """One recorded model call: the request as the runtime sent it and the upstream's JSON answer."""

    method: str
    path: str
    request: Mapping[str, Any]
    response: Mapping[str, Any]
    status: int = 200


def build_tape(name: str, exchanges: Iterable[TapeExchange], path: Path, *, upstream: str) -> Path:
    """Write tape `name` holding `exchanges` (recorded now, from `upstream`) to `path`, as record mode
    would: redacted, fingerprinted, scanned for secrets and re-read. Raises TapeError (no exchange, a
    secret left in it)."""
    builder = TapeBuilder(name, upstream=upstream)
    for exchange in exchanges:
        answer = RecordedResponse(status=exchange.status, body=dict(exchange.response))
        builder.add(exchange.method, exchange.path, exchange.request, answer)
    write_tape(builder.build(), path)
    return path


@dataclass(frozen=True, slots=True)
class TapeReply:
    """A replayed answer: the HTTP status and the chat completion (assembled when it was streamed), or the
    upstream's recorded error."""

    status: int
    completion: Mapping[str, Any] | None
    error: str | None = None


class TapeReplay:
    """One tape replayed in this process as the gateway's replay mode answers: by request fingerprint,
    duplicates first-in first-out, failing closed. A stale tape is a warning (`warnings`), not a refusal."""

    def __init__(self, tape: Path | Tape, *, strict: bool = True) -> None:
        self.tape = tape if isinstance(tape, Tape) else load_tape(tape)
        self._mode = ReplayMode(self.tape, strict=strict, certification=False)
        self.strict = strict

    @property
    def warnings(self) -> tuple[str, ...]:
        return tuple(self._mode.warnings)

    def again(self) -> TapeReplay:
        """A fresh replay of the same tape (every interaction unused), without reading the file again."""
        return TapeReplay(self.tape, strict=self.strict)

    def reply(self, method: str, path: str, body: Mapping[str, Any]) -> TapeReply:
        """The recorded answer to this request; raises TapeMismatch or TapeExhausted (windtunnel.errors
        TapeError) when the tape holds none."""
        answer = reply_for(self._mode.match(method, path, body), tape=self.tape.label)
        return TapeReply(status=answer.status, completion=answer.completion, error=answer.error)

    def finish(self) -> int:
        """How many recorded interactions were never requested; strict replay raises TapeUnused instead."""
        return len(self._mode.finish().unused)
