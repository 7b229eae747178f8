"""What a scenario cites as its ground truth (docs/selftests.md): rules, files, requirements, assumptions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

SourceKind = Literal["rule", "file", "requirement", "assumption"]
SOURCE_KINDS: tuple[str, ...] = ("rule", "file", "requirement", "assumption")


@dataclass(frozen=True, slots=True, kw_only=True)
class Source:
    """One cited source with the quoted words.

    `file` sources name `path`, relative to the pack's root, and must contain `quote`.
    `rule` and `requirement` sources name `ref`, a key of the pack's `rules`/`requirements`.
    An `assumption` is the author's own word; a blank one does not count as a source.
    """

    kind: SourceKind
    quote: str
    path: str | None = None
    ref: str | None = None
