"""The tape-fidelity check: a replay saw exactly the recorded requests, in order, none left, none stale.

The stage that replays committed tapes through a runtime in containers collects the requests the gateway
received and hands them here; this module judges them, it runs nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from windtunnel._chat.mode import ChatRequest
from windtunnel._tapes.checks import recomputed
from windtunnel._tapes.diff import json_diff
from windtunnel._tapes.fingerprint import VOLATILE_RULES, fingerprint, normalize_upstream, request_parts
from windtunnel._tapes.model import Tape
from windtunnel._tapes.policy import MAX_AGE, Clock, is_stale, stale_error, utcnow
from windtunnel._tapes.secrets import SecretScanner
from windtunnel._tapes.store import load_tape
from windtunnel._tapes.volatile import RULE_SETS

RequestSeen = ChatRequest | Mapping[str, Any]
"""A request as the gateway logged it: a ChatRequest, or a mapping with method, path and body."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FidelityReport:
    tape: str
    recorded: int
    requested: int
    matched: int
    unused: tuple[int, ...]
    stale: bool
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    def render(self) -> str:
        head = (
            f"tape {self.tape}: {self.matched}/{self.recorded} matched in order, {self.requested} requested"
        )
        return "\n".join([head + (" - ok" if self.ok else " - FAILED"), *(f"  {p}" for p in self.problems)])


def replay_check(
    tape: Tape | Path,
    requests_seen: Sequence[RequestSeen],
    *,
    upstream: str | None = None,
    clock: Clock = utcnow,
    max_age: timedelta = MAX_AGE,
    recorded_verdict: str | None = None,
    replayed_verdict: str | None = None,
    known_secrets: Iterable[str] = (),
) -> FidelityReport:
    """Judge one replay: request i must carry the fingerprint of interaction i, with nothing left over.

    With both verdicts given, they must also be equal (the replayed run graded as the recorded one).
    `known_secrets` are redacted from the requests before hashing, as the recording redacted them.
    """
    scanner = SecretScanner(known_secrets)
    loaded = tape if isinstance(tape, Tape) else load_tape(tape)
    label = normalize_upstream(upstream or loaded.header.lineage.upstream)
    expected = recomputed(loaded)
    # Hashed as the tape was (replay does the same); a set this version does not know is replay's refusal.
    named = loaded.header.volatile_rules
    rules = named if named is not None and named in RULE_SETS else VOLATILE_RULES
    problems: list[str] = []
    matched = 0
    for index, seen in enumerate(requests_seen):
        method, path, body = _unpack(seen)
        parts = request_parts(method, label, path, body, scanner=scanner, rules=rules)
        if index >= len(expected):
            problems.append(f"request {index} is beyond the tape: {len(expected)} recorded")
        elif fingerprint(parts) == expected[index]:
            matched += 1
        else:
            problems.append(_out_of_order(loaded, index, parts))
    unused = tuple(i.seq for i in loaded.interactions[len(requests_seen) :])
    if unused:
        problems.append(f"{len(unused)} interaction(s) never requested: seq {', '.join(map(str, unused))}")
    stale = is_stale(loaded, clock, max_age)
    if stale:
        problems.append(str(stale_error(loaded, clock, max_age)).replace("\n", " "))
    if recorded_verdict is not None and replayed_verdict is not None and recorded_verdict != replayed_verdict:
        problems.append(f"verdict differs: recorded {recorded_verdict!r}, replayed {replayed_verdict!r}")
    return FidelityReport(
        tape=loaded.label,
        recorded=len(expected),
        requested=len(requests_seen),
        matched=matched,
        unused=unused,
        stale=stale,
        problems=tuple(problems),
    )


def _unpack(seen: RequestSeen) -> tuple[str, str, Mapping[str, Any]]:
    if isinstance(seen, ChatRequest):
        return seen.method, seen.path, seen.body
    return str(seen.get("method", "POST")), str(seen["path"]), seen["body"]


def _out_of_order(tape: Tape, index: int, parts: Mapping[str, Any]) -> str:
    recorded = tape.interactions[index].request.model_dump(mode="json", exclude={"headers"})
    changes = json_diff(recorded, dict(parts))
    shown = "; ".join(change.render() for change in changes[:3])
    return f"request {index} does not match seq {index}: {shown}"
