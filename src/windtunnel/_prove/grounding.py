"""Grounded sources (docs/selftests.md): what a scenario cites must really say what it quotes.

`file` sources name a path relative to the pack root; the quote must occur in that file, both
whitespace-normalised (case is kept: a quote is the author's exact words). `rule` and
`requirement` sources name a key of `pack.rules` / `pack.requirements`; the quote must occur in
that text. A resolved cited source records `sha256:<hex>` of the file's bytes (or of the rule's
text), so a later change to what it cites shows. An `assumption` is the author's own word: it
counts as a source when it is not blank. A scenario where no source counts is kept and shown as
"assumed by the author"; only a cited source that does not resolve blocks it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from windtunnel._packs.pack import Pack
from windtunnel._prove.models import SourceResult
from windtunnel._scenario.model import Scenario
from windtunnel._scenario.sources import Source


@dataclass(frozen=True, slots=True)
class Grounding:
    sources: tuple[SourceResult, ...]

    @property
    def unresolved(self) -> tuple[SourceResult, ...]:
        return tuple(source for source in self.sources if not source.resolved)

    @property
    def assumed_by_author(self) -> bool:
        """No source counts: the scenario stands on its author's word."""
        return not any(source.counts for source in self.sources)


def ground(pack: Pack, scenario: Scenario) -> Grounding:
    """Resolve every source of `scenario` against `pack`."""
    return Grounding(tuple(resolve(pack, index, source) for index, source in enumerate(scenario.sources)))


def resolve(pack: Pack, index: int, source: Source) -> SourceResult:
    base = SourceResult(field=f"sources[{index}]", **asdict(source), resolved=False, counts=False)
    if source.kind == "assumption":
        blank = not source.quote.strip()
        reason = "a blank assumption does not count as a source" if blank else None
        return base.model_copy(update={"resolved": True, "counts": not blank, "reason": reason})
    if not source.quote.strip():
        return base.model_copy(update={"reason": "it quotes no words; quote the words it relies on"})
    if source.kind == "file":
        text, digest, reason = _file_text(pack, source.path)
    else:
        table = pack.rules if source.kind == "rule" else pack.requirements
        text, digest, reason = _entry_text(table, f"{source.kind}s", source.ref)
    if text is None:
        return base.model_copy(update={"reason": reason})
    if _normalise(source.quote) not in _normalise(text):
        where = f"file {source.path!r}" if source.kind == "file" else f"{source.kind} {source.ref!r}"
        return base.model_copy(update={"reason": f"{where} does not contain the quoted words"})
    return base.model_copy(update={"resolved": True, "counts": True, "matched_digest": digest})


def _normalise(text: str) -> str:
    return " ".join(text.split())


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _file_text(pack: Pack, path: str | None) -> tuple[str | None, str | None, str]:
    if not path:
        return None, None, "a file source names no path"
    root = (pack.root or Path()).resolve()
    file = (root / path).resolve()
    if not file.is_relative_to(root):
        return None, None, f"path {path!r} leads outside the pack root {root}"
    try:
        data = file.read_bytes()
    except OSError as exc:
        return None, None, f"file {path!r} cannot be read under the pack root {root} ({exc.strerror})"
    try:
        return data.decode("utf-8"), _digest(data), ""
    except UnicodeDecodeError:
        return None, _digest(data), f"file {path!r} is not UTF-8 text"


def _entry_text(table: Mapping[str, str], name: str, ref: str | None) -> tuple[str | None, str | None, str]:
    if not ref:
        return None, None, f"it names no ref; give ref= one of the pack's {name}"
    text = table.get(ref)
    if text is None:
        known = ", ".join(sorted(table)) or "none"
        return None, None, f"the pack has no {name[:-1]} {ref!r} (its {name}: {known})"
    return text, _digest(text.encode()), ""
