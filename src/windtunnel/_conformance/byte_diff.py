"""Where two texts first differ, in UTF-8 bytes, with an excerpt of each around that offset."""

from __future__ import annotations

from dataclasses import dataclass

CONTEXT = 40
"""Bytes shown before the first difference in each excerpt (and about twice as many after it)."""


@dataclass(frozen=True, slots=True)
class ByteDifference:
    offset: int
    """The first byte offset at which the texts differ (the shorter one's length when one is a prefix)."""
    served_bytes: int
    got_bytes: int
    served_excerpt: str
    got_excerpt: str

    def describe(self, what: str) -> str:
        return (
            f"{what} differs from byte {self.offset} on ({self.got_bytes} bytes received, "
            f"{self.served_bytes} served): served {self.served_excerpt!r}, received {self.got_excerpt!r}"
        )


def first_difference(served: str, got: str, context: int = CONTEXT) -> ByteDifference | None:
    """None when `got` is `served` byte for byte; else where it first differs and both excerpts there."""
    a, b = served.encode("utf-8"), got.encode("utf-8")
    if a == b:
        return None
    offset = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    start = max(offset - context, 0)
    return ByteDifference(
        offset=offset,
        served_bytes=len(a),
        got_bytes=len(b),
        served_excerpt=_excerpt(a, start, offset + 2 * context),
        got_excerpt=_excerpt(b, start, offset + 2 * context),
    )


def _excerpt(data: bytes, start: int, end: int) -> str:
    """The bytes [start, end) as text; a multi-byte character cut at either edge shows as U+FFFD."""
    return data[start:end].decode("utf-8", "replace")
