"""Scan bundle files for credentials with the tapes' scanner, so "a secret" means one thing everywhere.

Findings name the file, line and kind, never the value. Only UTF-8 text is read: a binary file (an
image, an archive) is skipped.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from windtunnel._tapes.secrets import SecretScanner

_SCANNER = SecretScanner()


@dataclass(frozen=True, slots=True)
class Finding:
    """What a bundle scan (secrets here, host facts in privacy_scan) found: file, line, kind; never the value."""

    path: str
    line: int
    kind: str

    def __str__(self) -> str:
        return f"{self.path} line {self.line}: {self.kind}"


def scan_text(text: str, *, path: str) -> list[Finding]:
    return [Finding(path, hit.line, hit.kind) for hit in _SCANNER.scan(text)]


def scan_file(root: Path, name: str) -> list[Finding]:
    data = (root / name).read_bytes()
    if b"\x00" in data:
        return []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return []
    return scan_text(text, path=name)
