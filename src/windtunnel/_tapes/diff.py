"""JSON-pointer diffs between a requested and a recorded request, and the nearest recorded requests."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from windtunnel._tapes.model import Interaction

SNIPPET = 60


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


ABSENT: Any = _Absent()


@dataclass(frozen=True, slots=True)
class Change:
    """One difference at an RFC 6901 JSON pointer."""

    pointer: str
    recorded: Any
    requested: Any

    def render(self, labels: tuple[str, str] = ("recorded", "requested")) -> str:
        recorded, requested = _show_pair(self.recorded, self.requested)
        return f"{self.pointer or '/'}: {labels[0]} {recorded}, {labels[1]} {requested}"


@dataclass(frozen=True, slots=True)
class Nearest:
    """A recorded interaction close to a request that matched nothing, with what differs."""

    seq: int
    fingerprint: str
    changes: tuple[Change, ...]

    def render(self, limit: int = 8, labels: tuple[str, str] = ("recorded", "requested")) -> str:
        lines = [f"seq {self.seq} (fingerprint {self.fingerprint[:12]}), {len(self.changes)} difference(s):"]
        lines += [f"    {change.render(labels)}" for change in self.changes[:limit]]
        if len(self.changes) > limit:
            lines.append(f"    ... and {len(self.changes) - limit} more")
        return "\n".join(lines)


def escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def json_diff(recorded: Any, requested: Any, pointer: str = "") -> list[Change]:
    """Every leaf-level difference, addressed by JSON pointer."""
    if isinstance(recorded, Mapping) and isinstance(requested, Mapping):
        changes: list[Change] = []
        for key in sorted(set(recorded) | set(requested)):
            changes += json_diff(
                recorded.get(key, ABSENT), requested.get(key, ABSENT), f"{pointer}/{escape(str(key))}"
            )
        return changes
    if isinstance(recorded, list) and isinstance(requested, list):
        changes = []
        for index in range(max(len(recorded), len(requested))):
            left = recorded[index] if index < len(recorded) else ABSENT
            right = requested[index] if index < len(requested) else ABSENT
            changes += json_diff(left, right, f"{pointer}/{index}")
        return changes
    if _same(recorded, requested):
        return []
    return [Change(pointer, recorded, requested)]


def nearest(
    requested: Mapping[str, Any], interactions: Iterable[Interaction], count: int = 3
) -> list[Nearest]:
    """The `count` recorded requests with the fewest differences (one per fingerprint, earliest first)."""
    seen: set[str] = set()
    scored: list[Nearest] = []
    for interaction in interactions:
        if interaction.fingerprint in seen:
            continue
        seen.add(interaction.fingerprint)
        recorded = interaction.request.model_dump(mode="json", exclude={"headers"})
        changes = json_diff(recorded, dict(requested))
        scored.append(Nearest(interaction.seq, interaction.fingerprint, tuple(changes)))
    scored.sort(key=lambda item: (len(item.changes), item.seq))
    return scored[:count]


def _same(left: Any, right: Any) -> bool:
    # JSON does not tell 1 from 1.0, and neither does the fingerprint (RFC 8785); it does tell 1 from true.
    if isinstance(left, bool) or isinstance(right, bool):
        return left is right
    if isinstance(left, int | float) and isinstance(right, int | float):
        return left == right
    return type(left) is type(right) and bool(left == right)


def _show_pair(left: Any, right: Any) -> tuple[str, str]:
    """Both sides short enough to read; long strings are cut around their first difference."""
    if isinstance(left, str) and isinstance(right, str) and max(len(left), len(right)) > SNIPPET:
        start = next((i for i, (a, b) in enumerate(zip(left, right, strict=False)) if a != b), 0)
        start = max(0, min(start, len(left), len(right)) - SNIPPET // 3)
        return _cut(left, start), _cut(right, start)
    return _show(left), _show(right)


def _cut(text: str, start: int) -> str:
    piece = text[start : start + SNIPPET]
    prefix = "…" if start else ""
    suffix = "…" if start + SNIPPET < len(text) else ""
    return f"{prefix}{json.dumps(piece, ensure_ascii=False)}{suffix} (at char {start})"


def _show(value: Any) -> str:
    if value is ABSENT:
        return "(absent)"
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= SNIPPET * 2 else text[: SNIPPET * 2] + "…"
