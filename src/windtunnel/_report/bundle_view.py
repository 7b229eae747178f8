"""What the report shows of a bundle directory: its result files and each check's conversations.

Conversations come from a check's evidence: a trace (`*.trace.json`) is turned into one; a conformance
result carries them under `conversations`. Evidence is untrusted: only regular files inside the bundle are
read, and one that cannot be read is named in the report instead of breaking it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from windtunnel._bundle.content import Contents, load_contents
from windtunnel._bundle.layout import LayoutError, check_name
from windtunnel._bundle.models import CheckRecord
from windtunnel._conversation.build import from_trace
from windtunnel._conversation.model import Conversation
from windtunnel._trace.models import Trace

MAX_EVIDENCE_BYTES = 32 << 20
"""Evidence files larger than this are linked, not read into the page."""


@dataclass(frozen=True, slots=True)
class CheckConversations:
    conversations: list[Conversation] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class BundleView:
    root: Path
    contents: Contents
    by_check: dict[str, CheckConversations]

    def files(self) -> set[str]:
        """The evidence paths that exist as files in the bundle (the report links only those)."""
        cited = {path for check in self.contents.checks.checks for path in check.evidence}
        return {path for path in cited if self.has(path)}

    def has(self, name: str) -> bool:
        """Whether `name` is a regular file inside the bundle."""
        return _inside(self.root, name) is not None


def load_bundle(root: Path) -> BundleView:
    """Raises VerificationError (content.missing, content.format) when `root` holds no readable bundle."""
    contents = load_contents(root)
    return BundleView(
        root=root,
        contents=contents,
        by_check={check.id: conversations_of(root, check) for check in contents.checks.checks},
    )


def conversations_of(root: Path, check: CheckRecord) -> CheckConversations:
    found = CheckConversations()
    for name in check.evidence:
        path = _inside(root, name)
        if path is None or not name.endswith(".json"):
            continue
        try:
            found.conversations.extend(_read(path, name))
        except (OSError, ValueError) as exc:  # ValidationError and JSONDecodeError are ValueErrors
            found.problems.append(f"{name} could not be read as a conversation: {_reason(exc)}")
    return found


def _read(path: Path, name: str) -> list[Conversation]:
    if path.stat().st_size > MAX_EVIDENCE_BYTES:
        raise ValueError(f"it is larger than {MAX_EVIDENCE_BYTES >> 20} MiB")
    raw = path.read_bytes()
    if name.endswith(".trace.json"):
        return [from_trace(Trace.model_validate_json(raw))]
    data = json.loads(raw)
    listed = data.get("conversations") if isinstance(data, dict) else None
    if not isinstance(listed, list):
        return []
    return [Conversation.model_validate(item) for item in listed]


def _inside(root: Path, name: str) -> Path | None:
    """The evidence file, when `name` is a safe relative name of a regular file inside the bundle."""
    try:
        check_name(name)
    except LayoutError:
        return None
    path = root / name
    if path.is_symlink() or not path.is_file():
        return None
    return path if path.resolve().is_relative_to(root.resolve()) else None


def _reason(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        return f"{where}: {first['msg']}"
    return str(exc)
