"""Secret scanning and redaction: known credential patterns plus the exact key values in use.

Patterns are deliberately anchored and long (an OpenAI key is `sk-` plus 32 or more characters) so prose
does not trip them. Key values in use count from 8 characters: a shorter "key" (`ollama`, `none`) is a
placeholder, and redacting every occurrence of it would destroy the recording.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

MIN_KNOWN_SECRET = 8

_B64_CHAR = r"[A-Za-z0-9_.~+/-]"
BEARER = (
    r"\b(?i:bearer)[ \t]+"
    # A token, not a word: 16+ characters of the RFC 6750 alphabet holding a digit or an inner capital.
    rf"(?={_B64_CHAR}*?(?:[0-9]|[a-z][A-Z]))"
    rf"{_B64_CHAR}{{16,}}=*"
)
"""`Bearer <token>` where the token looks like one: prose such as "the bearer responsibilities" is not a secret."""

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
    ("bearer-token", BEARER),
    ("private-key", r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    ("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
)

HINTS: tuple[str, ...] = ("sk-", "AKIA", "ASIA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")
HINTS += ("AIza", "xox", "hf_", "gsk_", "-----BEGIN", "eyJ")
"""Literals every pattern match contains (checked with `in`, which is fast); `bearer` is checked in lower case.

Most text holds none of them, so the regular expressions (slow on long text) run only on text that might
match. A test keeps every pattern covered by a hint.
"""

_KINDS = [kind for kind, _ in PATTERNS]
# The look-ahead lets the engine skip positions that cannot start any pattern.
_COMBINED = re.compile(
    "(?=[sAgxhbBe-])(?:" + "|".join(f"(?P<p{i}>{pattern})" for i, (_, pattern) in enumerate(PATTERNS)) + ")"
)


def _may_match(text: str) -> bool:
    return any(hint in text for hint in HINTS) or "bearer" in text.lower()


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
        self._values = tuple(values)
        self._known = re.compile("|".join(re.escape(value) for value in values)) if values else None

    def _holds_known(self, text: str) -> bool:
        return any(value in text for value in self._values)

    def might_hold(self, text: str) -> bool:
        """A fast check: False means `text` certainly holds no secret."""
        return _may_match(text) or self._holds_known(text)

    def find(self, text: str) -> list[tuple[str, str]]:
        """(kind, matched text) for every secret in `text`."""
        found = (
            [(_kind(match), match.group()) for match in _COMBINED.finditer(text)] if _may_match(text) else []
        )
        if self._known is not None and self._holds_known(text):
            found += [("key-in-use", match.group()) for match in self._known.finditer(text)]
        return found

    def scan(self, text: str) -> list[SecretHit]:
        """Every secret in a multi-line text, with its line number and a masked excerpt."""
        if not self.might_hold(text):
            return []
        hits: list[SecretHit] = []
        for number, line in enumerate(text.splitlines(), start=1):
            hits += [SecretHit(number, kind, mask(value)) for kind, value in self.find(line)]
        return hits

    def redact_text(self, text: str) -> str:
        if self._known is not None and self._holds_known(text):
            text = self._known.sub("[REDACTED:key-in-use]", text)
        if not _may_match(text):
            return text
        return _COMBINED.sub(lambda match: f"[REDACTED:{_kind(match)}]", text)

    def redact(self, value: Any) -> Any:
        """The value with every string redacted (keys included); returned as is when it holds no secret."""
        if not isinstance(value, str) and not self.might_hold(
            json.dumps(value, ensure_ascii=False, default=str)
        ):
            return value
        return self._redact(value)

    def _redact(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.redact_text(value)
        if isinstance(value, Mapping):
            return {self.redact_text(str(key)): self._redact(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self._redact(item) for item in value]
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
