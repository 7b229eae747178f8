"""Scan bundle files for facts of the host: its home directory, user name, host name, the project's absolute
path, and any absolute home-directory path. A bundle is shared; these say who ran it and where.

What counts (docs/bundle.md, "The privacy scan"):
- this machine's $HOME (when it is more than one path component deep), and the project root's absolute
  path (the same), as paths: followed by `/`, a quote, whitespace or the end;
- any `/home/<name>/`, `/Users/<name>/` or `/root/` path, whoever's it is;
- the user name where it names an account: a path component (`/alice/`) or `alice@<this host>`;
- the host name as a whole word (case-sensitive; `localhost` is not a host's name).
A path inside a container (`/app`, `/opt/venv`, `/wt/tapes`) is none of these. Files that hold only digests,
signatures and keys (the attestations, MANIFEST.sha256, keys/) are not scanned: base64 and hex can spell a
short host name by chance, and what they sign is scanned in the files it came from.
Findings name the file, line and kind, never the value.
"""

from __future__ import annotations

import getpass
import re
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from windtunnel._bundle import layout
from windtunnel._bundle.secret_scan import Finding
from windtunnel._env_values import process_env

_GENERIC_HOSTS = frozenset({"localhost", "localhost.localdomain"})
_END = r"(?=[/\\\"'\s,;:)\]}]|$)"
_HOME_PATH = re.compile(r"(?:/home/|/Users/)[^/\s\"'\\]+/|(?<![\w.-])/root/")
_SKIPPED = frozenset({*layout.ATTESTATIONS, layout.MANIFEST, layout.PUBLIC_KEY})


@dataclass(frozen=True, slots=True, kw_only=True)
class HostFacts:
    """What would identify the machine: each None when unknown or too generic to look for."""

    home: str | None = None
    user: str | None = None
    hostname: str | None = None
    project_root: str | None = None

    @classmethod
    def here(cls, project_root: Path | None = None) -> HostFacts:
        """This machine's facts (read now, from the environment and the OS)."""
        return cls(
            home=_deep_path(process_env().get("HOME") or str(Path.home())),
            user=_user(),
            hostname=_hostname(socket.gethostname()),
            project_root=_deep_path(str(project_root.resolve())) if project_root is not None else None,
        )

    def patterns(self) -> list[tuple[str, re.Pattern[str]]]:
        """(kind, pattern) for every fact known, then the generic home-directory paths."""
        found: list[tuple[str, re.Pattern[str]]] = []
        if self.home:
            found.append(("this machine's home directory", re.compile(re.escape(self.home) + _END)))
        if self.project_root:
            found.append(("the project's absolute path", re.compile(re.escape(self.project_root) + _END)))
        if self.user:
            user = re.escape(self.user)
            # A separator must follow: `/`, or a `\` that is not a JSON escape of a quote. In `"/alice\""`
            # (a JSON-encoded string ending in `/alice`) the backslash escapes the closing quote, and the
            # string is one path component, such as Codex's root agent path `/root`, not an account.
            account = rf"(?<=[/\\]){user}(?=/|\\(?![\"']))"
            if self.hostname:
                account += rf"|(?<![\w.-]){user}@{re.escape(self.hostname)}(?![\w-])"
            found.append(("this machine's user name", re.compile(account)))
        if self.hostname:
            found.append(
                ("this machine's host name", re.compile(rf"(?<![\w-]){re.escape(self.hostname)}(?![\w-])"))
            )
        found.append(("an absolute home-directory path", _HOME_PATH))
        return found


def scan_text(text: str, *, path: str, facts: HostFacts) -> list[Finding]:
    patterns = facts.patterns()
    return [
        Finding(path, number, kind)
        for number, line in enumerate(text.splitlines(), start=1)
        for kind, pattern in patterns
        if pattern.search(line)
    ]


def scan_files(root: Path, files: Iterable[str], facts: HostFacts) -> list[Finding]:
    """Every finding in the bundle's files (any bytes: undecodable ones cannot hide a path)."""
    findings: list[Finding] = []
    for name in files:
        if name in _SKIPPED or PurePosixPath(name).parts[0] == layout.KEYS_DIR:
            continue
        text = (root / name).read_bytes().decode("utf-8", errors="replace")
        findings += scan_text(text, path=name, facts=facts)
    return findings


def _deep_path(value: str) -> str | None:
    """A path worth looking for: absolute and at least two components deep (`/root` is the generic rule's)."""
    path = PurePosixPath(value.rstrip("/"))
    return str(path) if path.is_absolute() and len(path.parts) >= 3 else None


def _user() -> str | None:
    try:
        name = getpass.getuser()
    except (OSError, KeyError):  # no name for this uid (a container with an arbitrary uid)
        return None
    return name if len(name) >= 2 else None


def _hostname(name: str) -> str | None:
    return name if len(name) >= 2 and name.lower() not in _GENERIC_HOSTS else None
