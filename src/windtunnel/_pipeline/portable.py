"""Host paths made portable before they enter a bundle: bundle- or project-relative, never a home path.

A bundle is shared, so it must not say where it was made (docs/bundle.md, "The privacy scan"). Publish
passes every file of the bundle through `Portable` before it seals (whoever wrote it: stages, traces, a
runtime's log lines quoted in evidence), and the result files it writes too: the bundle directory's
absolute path becomes nothing (its files are named bundle-relative), the project root's becomes `.` (the
paths under it relative), this machine's home directory becomes `~`, and any other home directory
(`/home/<x>/`, `/Users/<x>/`, `/root/`, a container's too) becomes `~<x>/`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from windtunnel._env_values import process_env
from windtunnel._files import write_atomic

_START = r"(?<![\w./~-])"
_END = r"(?=[\s\"',;:)\]}]|$)"
_OTHER_HOMES = re.compile(_START + r"(?:/home/|/Users/)([^/\s\"'\\]+)/")
_ROOT_HOME = re.compile(_START + r"/root/")


class Portable:
    """Rewrites absolute host paths in strings (and in the strings of JSON-like values)."""

    def __init__(self, *, root: Path, bundle: Path, home: str | None = None) -> None:
        home = (home if home is not None else process_env().get("HOME") or str(Path.home())).rstrip("/")
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
        return _ROOT_HOME.sub("~root/", _OTHER_HOMES.sub(r"~\1/", value))

    def rewrite_file(self, path: Path) -> bool:
        """Rewrite a text file of the bundle in place (atomically) when it names a host path; binary files
        (NUL bytes, not UTF-8) are left alone. True when it changed."""
        data = path.read_bytes()
        if b"\x00" in data:
            return False
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return False
        portable = self.text(text)
        if portable == text:
            return False
        write_atomic(path, portable)
        return True

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
