"""Host paths made portable before they enter a bundle: bundle- or project-relative, never a home path.

A bundle is shared, so it must not say where it was made (docs/bundle.md, "The privacy scan"). Every
string the pipeline writes into the bundle's JSON goes through `portable()`: the bundle directory's
absolute path becomes nothing (its files are named bundle-relative), the project root's becomes `.`
(and the paths under it relative), and the home directory becomes `~`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

_START = r"(?<![\w./~-])"
_END = r"(?=[\s\"',;:)\]}]|$)"


class Portable:
    """Rewrites absolute host paths in strings (and in the strings of JSON-like values)."""

    def __init__(self, *, root: Path, bundle: Path, home: str | None = None) -> None:
        home = (home if home is not None else os.environ.get("HOME") or str(Path.home())).rstrip("/")
        # (prefix, what it becomes before a "/", what it becomes alone); the longest prefix wins
        rules = {str(bundle): ("", "."), str(root): ("", "."), home: ("~/", "~")}
        rules |= {str(bundle.resolve()): ("", "."), str(root.resolve()): ("", ".")}
        self._rules: list[tuple[re.Pattern[str], str, str]] = [
            (re.compile(_START + re.escape(prefix) + "(/|" + _END + ")"), under, alone)
            for prefix, (under, alone) in sorted(rules.items(), key=lambda item: -len(item[0]))
            if prefix.startswith("/") and len(prefix) > 1
        ]

    def text(self, value: str) -> str:
        for pattern, under, alone in self._rules:
            value = pattern.sub(_replacement(under, alone), value)
        return value

    def json(self, value: Any) -> Any:
        """`value` with every string rewritten (dict keys too); other values as they are."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {self.json(key): self.json(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self.json(item) for item in value]
        return value


def _replacement(under: str, alone: str) -> Callable[[re.Match[str]], str]:
    """What a matched prefix becomes: `under` when a path continues after it, `alone` when it ends there."""
    return lambda match: under if match.group(1) == "/" else alone
