"""Secret scanning and redaction: known credential patterns plus the exact key values in use.

Patterns are deliberately anchored and long (an OpenAI key is `sk-` plus 32 or more characters) so prose
does not trip them. Key values in use count from 8 characters: a shorter "key" (`ollama`, `none`) is a
placeholder, and redacting every occurrence of it would destroy the recording.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

MIN_KNOWN_SECRET = 8

PATTERNS: tuple[tuple[str, str], ...] = (
    ("anthropic-key", r"(?<![\w-])sk-ant-[A-Za-z0-9_-]{32,}"),
    ("openai-key", r"(?<![\w-])sk-[A-Za-z0-9_-]{32,}"),
    ("aws-access-key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    ("github-token", r"\bgh[pousr]_[A-Za-z0-9]{36,}\b"),
    ("github-pat", r"\bgithub_pat_[A-Za-z0-9_]{22,}"),
    ("google-api-key", r"\bAIza[0-9A-Za-z_-]{35}"),
    ("slack-token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    ("huggingface-token", r"\bhf_[A-Za-z0-9]{30,}"),
    ("groq-key", r"\bgsk_[A-Za-z0-9]{40,}"),
    ("bearer-token", r"\b(?i:bearer)\s+[A-Za-z0-9._~+/=-]{16,}"),
    ("private-key", r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    ("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
)

_KINDS = [kind for kind, _ in PATTERNS]
_COMBINED = re.compile("|".join(f"(?P<p{i}>{pattern})" for i, (_, pattern) in enumerate(PATTERNS)))


@dataclass(frozen=True, slots=True)
class SecretHit:
    """One secret found: where (1-based line), what kind, and a masked excerpt safe to print."""

    line: int
    kind: str
    excerpt: str


class SecretScanner:
    """Find or redact secrets: the known patterns plus `known` exact values (the keys in use)."""

    def __init__(self, known: Iterable[str] = ()) -> None:
        values = sorted({value for value in known if len(value) >= MIN_KNOWN_SECRET}, key=len, reverse=True)
        self._known = re.compile("|".join(re.escape(value) for value in values)) if values else None

    def find(self, text: str) -> list[tuple[str, str]]:
        """(kind, matched text) for every secret in `text`."""
        found = [(_kind(match), match.group()) for match in _COMBINED.finditer(text)]
        if self._known is not None:
            found += [("key-in-use", match.group()) for match in self._known.finditer(text)]
        return found

    def scan(self, text: str) -> list[SecretHit]:
        """Every secret in a multi-line text, with its line number and a masked excerpt."""
        hits: list[SecretHit] = []
        for number, line in enumerate(text.splitlines(), start=1):
            hits += [SecretHit(number, kind, mask(value)) for kind, value in self.find(line)]
        return hits

    def redact_text(self, text: str) -> str:
        if self._known is not None:
            text = self._known.sub("[REDACTED:key-in-use]", text)
        return _COMBINED.sub(lambda match: f"[REDACTED:{_kind(match)}]", text)

    def redact(self, value: Any) -> Any:
        """A copy of a JSON-like value with every string redacted (keys included)."""
        if isinstance(value, str):
            return self.redact_text(value)
        if isinstance(value, Mapping):
            return {self.redact_text(str(key)): self.redact(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self.redact(item) for item in value]
        return value


_PATTERNS_ONLY = SecretScanner()


def redact(value: Any) -> Any:
    """Redact the known patterns only; the same on record and replay, so fingerprints agree."""
    return _PATTERNS_ONLY.redact(value)


def mask(value: str) -> str:
    """Enough of a secret to recognise it in a report, never enough to use it."""
    return f"{value[:4]}…({len(value)} chars)"


def _kind(match: re.Match[str]) -> str:
    group = match.lastgroup or "p0"
    return _KINDS[int(group[1:])]
