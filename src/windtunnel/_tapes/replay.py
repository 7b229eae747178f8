"""Replay mode: answer every model call from a tape by fingerprint, fail closed, never touch the network.

Duplicate requests replay first-in first-out per fingerprint. A request the tape cannot answer becomes a
refusal (a ModeReply with `error` and `error_code`), so the runtime's model call fails and the run is an
ERROR that names the cause; the TapeError itself is kept in `refusals`.
"""

from __future__ import annotations

from collections import Counter, defaultdict, deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from windtunnel._chat.mode import ChatRequest, ModeReply
from windtunnel._tapes.diff import nearest
from windtunnel._tapes.errors import TapeCorrupt, TapeExhausted, TapeMismatch, TapeUnused, error_code
from windtunnel._tapes.fingerprint import VOLATILE_RULES, fingerprint, normalize_upstream, request_parts
from windtunnel._tapes.model import Interaction, Tape
from windtunnel._tapes.policy import MAX_AGE, Clock, enforce_fresh, rerecord_command, utcnow
from windtunnel._tapes.secrets import SecretScanner
from windtunnel._tapes.store import load_tape
from windtunnel._tapes.volatile import RULE_SETS
from windtunnel._wire.registry import dialect_for_path
from windtunnel.errors import TapeError

REFUSAL_STATUS = 400
"""HTTP status of a tape refusal: a client error, which OpenAI clients do not retry."""


@dataclass(frozen=True, slots=True)
class UnusedReport:
    """What a replay left on the tape: interactions recorded but never requested."""

    tape: str
    recorded: int
    unused: tuple[Interaction, ...]

    @property
    def ok(self) -> bool:
        return not self.unused

    def render(self) -> str:
        if not self.unused:
            return f"tape {self.tape}: all {self.recorded} interaction(s) used"
        lines = [f"tape {self.tape}: {len(self.unused)} of {self.recorded} interaction(s) never requested:"]
        lines += [
            f"  seq {i.seq} {i.request.method} {i.request.path} model={i.request.body.get('model')!r} "
            f"(fingerprint {i.fingerprint[:12]})"
            for i in self.unused
        ]
        return "\n".join(lines)


class ReplayMode:
    """A GatewayMode that serves from one tape.

    `certification=True` refuses a stale tape at construction (TapeStale); `False` warns (in `warnings`).
    `strict=True` makes finish() raise TapeUnused when interactions were never requested. Interactions are
    indexed by the fingerprint recomputed from their recorded request, so a request edited on tape can
    never answer the request it no longer describes. A request that matches nothing once every interaction
    has been served is TapeExhausted (the tape ran out), otherwise TapeMismatch. `known_secrets` are the key
    values the recording redacted (the upstream key): requests are redacted the same way before hashing.

    `seen` holds every request in arrival order (its fingerprinted parts) and `answered` the seq that
    answered it (None for a refusal): the harness reads both, through the gateway's GET /wt/tape, to judge
    a replay with fidelity.replay_check.
    """

    name = "replay"

    def __init__(
        self,
        tape: Tape | Path,
        *,
        upstream: str | None = None,
        strict: bool = False,
        certification: bool = True,
        clock: Clock = utcnow,
        max_age: timedelta = MAX_AGE,
        known_secrets: Iterable[str] = (),
    ) -> None:
        known = tuple(value for value in known_secrets if value)
        self.tape = tape if isinstance(tape, Tape) else load_tape(tape, known_secrets=known)
        self._rules = _check_rules(self.tape)
        self._scanner = SecretScanner(known)
        self.upstream = normalize_upstream(upstream or self.tape.header.lineage.upstream)
        self.strict = strict
        self.clock = clock
        self.max_age = max_age
        self.warnings: list[str] = []
        stale = enforce_fresh(self.tape, certification=certification, clock=clock, max_age=max_age)
        if stale:
            self.warnings.append(stale)
        self._queues: dict[str, deque[Interaction]] = defaultdict(deque)
        for interaction in self.tape.interactions:
            self._queues[fingerprint(interaction.request.model_dump(mode="json"))].append(interaction)
        self._recorded = {key: len(queue) for key, queue in self._queues.items()}
        self._requested: Counter[str] = Counter()
        self.refusals: list[TapeError] = []
        self.seen: list[dict[str, Any]] = []
        self.answered: list[int | None] = []
        self._left = len(self.tape.interactions)
        self._finished: UnusedReport | None = None

    def match(self, method: str, path: str, body: Mapping[str, Any]) -> Interaction:
        """The next recorded interaction for this request; raises TapeMismatch or TapeExhausted."""
        parts = request_parts(method, self.upstream, path, body, scanner=self._scanner, rules=self._rules)
        key = fingerprint(parts)
        self._requested[key] += 1
        self.seen.append(parts)
        self.answered.append(None)
        queue = self._queues.get(key)
        if queue:
            interaction = queue.popleft()
            self._left -= 1
            self.answered[-1] = interaction.seq
            return interaction
        if queue is not None:
            raise self._exhausted(key, parts)
        if self._left == 0 and self.tape.interactions:
            raise self._ran_out(key, parts)
        raise self._mismatch(key, parts)

    async def complete(self, request: ChatRequest) -> ModeReply:
        try:
            interaction = self.match(request.method, request.path, request.body)
        except TapeError as exc:
            self.refusals.append(exc)
            context = {"tape": self.tape.label, "fingerprint": getattr(exc, "fingerprint", None)}
            return ModeReply(
                status=REFUSAL_STATUS, error=str(exc), error_code=error_code(exc), context=context
            )
        return reply_for(interaction, tape=self.tape.label)

    def unused(self) -> UnusedReport:
        left = sorted((i for queue in self._queues.values() for i in queue), key=lambda i: i.seq)
        return UnusedReport(tape=self.tape.label, recorded=len(self.tape.interactions), unused=tuple(left))

    def finish(self) -> UnusedReport:
        """The unused-interactions report; in strict mode, raise TapeUnused when any are left."""
        report = self.unused()
        self._finished = report
        if self.strict and not report.ok:
            raise TapeUnused(
                report.render(),
                hint="the runtime made fewer or different model calls than recorded; re-record the tape "
                f"({rerecord_command(self.tape)}) or find why the run diverged",
                tape=self.tape.label,
                unused=[i.seq for i in report.unused],
            )
        return report

    async def aclose(self) -> None:
        """Finish once (strict mode raises TapeUnused here); idempotent."""
        if self._finished is None:
            self.finish()

    def _exhausted(self, key: str, parts: Mapping[str, Any]) -> TapeExhausted:
        recorded, requested = self._recorded[key], self._requested[key]
        return self._tape_exhausted(
            f"tape {self.tape.label}: request {_describe(parts, key)} was recorded {recorded}, "
            f"requested {requested}",
            "the runtime repeated a model call more often than when the tape was recorded",
            key,
            recorded,
            requested,
        )

    def _ran_out(self, key: str, parts: Mapping[str, Any]) -> TapeExhausted:
        """Every recorded interaction was served and one more request came: the tape ended too early."""
        recorded, requested = len(self.tape.interactions), len(self.seen)
        close = nearest(parts, self.tape.interactions)
        lines = [
            f"tape {self.tape.label} is exhausted: all {recorded} recorded interaction(s) were served and "
            f"request {_describe(parts, key)} asks for one more: recorded {recorded}, requested {requested}"
        ]
        lines += [f"  nearest recorded request: {item.render()}" for item in close]
        lines.append(f"  re-record this tape: {rerecord_command(self.tape)}")
        return self._tape_exhausted(
            "\n".join(lines),
            "the runtime made more model calls than when the tape was recorded (or the tape was cut short)",
            key,
            recorded,
            requested,
        )

    def _tape_exhausted(
        self, message: str, why: str, key: str, recorded: int, requested: int
    ) -> TapeExhausted:
        """A request the tape has no answer left for; `why` says what the runtime did more than recorded."""
        return TapeExhausted(
            message,
            hint=f"{why}; re-record the tape: {rerecord_command(self.tape)}",
            tape=self.tape.label,
            recorded=recorded,
            requested=requested,
            fingerprint=key,
        )

    def _mismatch(self, key: str, parts: Mapping[str, Any]) -> TapeMismatch:
        close = nearest(parts, self.tape.interactions)
        command = rerecord_command(self.tape)
        lines = [f"tape {self.tape.label}: no recorded request matches {_describe(parts, key)}"]
        lines += [f"  nearest recorded request: {item.render()}" for item in close]
        if not close:
            lines.append("  the tape holds no interactions")
        lines.append(f"  re-record this tape: {command}")
        return TapeMismatch(
            "\n".join(lines),
            hint="if the runtime's request changed on purpose, re-record the tape with the command above; "
            "otherwise the diff shows what the runtime now sends differently",
            tape=self.tape.label,
            fingerprint=key,
            nearest=close,
            rerecord_command=command,
        )


def _check_rules(tape: Tape) -> str:
    """The volatile-field rule set the tape was hashed with, which live requests are hashed with too; a set
    this version does not know would match nothing: say so."""
    rules = tape.header.volatile_rules or VOLATILE_RULES  # none named: a chat-only tape, never normalised
    if rules not in RULE_SETS:
        raise TapeCorrupt(
            f"tape {tape.label} was fingerprinted with the volatile-field rules {rules!r}; this Wind Tunnel "
            f"knows {', '.join(map(repr, RULE_SETS))}, so none of its requests could match",
            hint=f"re-record the tape: {rerecord_command(tape)}",
            tape=tape.label,
            line=1,
        )
    return rules


def reply_for(interaction: Interaction, *, tape: str | None = None) -> ModeReply:
    """The recorded answer as a ModeReply: a completion, a stream of events, or the upstream's error.

    `context` names the tape, seq and fingerprint, which the gateway adds to the request's log entry.
    """
    response = interaction.response
    context = {"tape": tape, "tape_seq": interaction.seq, "fingerprint": interaction.fingerprint}
    if response.status >= 400:
        error = _upstream_error(response.body)
        return ModeReply(status=response.status, error=error, error_code="upstream_error", context=context)
    if response.events is not None:
        events = tuple(response.events)
        completion = dialect_for_path(interaction.request.path).assemble(events)
        return ModeReply(status=response.status, completion=completion, events=events, context=context)
    return ModeReply(status=response.status, completion=response.body, context=context)


def _upstream_error(body: Any) -> str:
    error = body.get("error") if isinstance(body, Mapping) else None
    message = error.get("message") if isinstance(error, Mapping) else None
    return f"recorded upstream error: {message or body!r}"


def _describe(parts: Mapping[str, Any], key: str) -> str:
    model = parts["body"].get("model")
    return f"{parts['method']} {parts['path']} model={model!r} (fingerprint {key[:12]})"
