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


@dataclass(frozen=True, slots=True)
class Framing:
    """Text a runtime put around a result it passed on whole: the bytes before and after the served text."""

    before_bytes: int
    after_bytes: int
    before: str
    """The last bytes before the served text (at most 2 * CONTEXT)."""
    after: str
    """The first bytes after it (at most 2 * CONTEXT)."""

    def describe(self) -> str:
        return (
            f"whole and contiguous, framed by {self.before_bytes} bytes before ({self.before!r}) "
            f"and {self.after_bytes} after ({self.after!r})"
        )


def framing(served: str, got: str) -> Framing | None:
    """Where `served` sits byte for byte and contiguous inside `got`: the bytes around it (both counts zero
    when `got` is exactly `served`); None when `got` does not hold it whole."""
    a, b = served.encode("utf-8"), got.encode("utf-8")
    start = b.find(a)
    if start < 0:
        return None
    end = start + len(a)
    return Framing(
        before_bytes=start,
        after_bytes=len(b) - end,
        before=_excerpt(b, max(start - 2 * CONTEXT, 0), start),
        after=_excerpt(b, end, end + 2 * CONTEXT),
    )


OPENING = CONTEXT // 2
"""Bytes of the served text's start looked for in a result that does not hold it whole: short, so a change
close to the start still finds where the served text begins."""


def skip_framing(served: str, got: str) -> tuple[int, str]:
    """`got` from where the served text's opening appears in it, and how many bytes were skipped: a result
    framed and then cut is compared from its start, so the difference is where it was cut, not byte 0."""
    opening = served.encode("utf-8")[:OPENING]
    data = got.encode("utf-8")
    start = data.find(opening) if opening else -1
    if start <= 0:
        return 0, got
    return start, data[start:].decode("utf-8", "replace")
