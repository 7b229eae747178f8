"""Per-session state: one fresh Claude Code config directory per session_id (its transcript lives there),
removed by reset; a failed turn puts the transcript back as it was."""

from __future__ import annotations

import shutil
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import anyio

TRANSCRIPTS = "projects"
"""Where Claude Code keeps a session's transcript (JSON lines) inside CLAUDE_CONFIG_DIR."""


@dataclass(eq=False)
class SessionEntry:
    """A session's config directory (CLAUDE_CONFIG_DIR, HOME and working directory of its CLI), the CLI's
    session id, whether a turn has been kept yet (then the next one resumes it), and the turn lock."""

    directory: Path
    claude_session: str = field(default_factory=lambda: str(uuid.uuid4()))
    started: bool = False
    lock: anyio.Lock = field(default_factory=anyio.Lock)

    def files(self) -> dict[Path, bytes]:
        """Every transcript file, by path: what a failed turn restores."""
        root = self.directory / TRANSCRIPTS
        return {path: path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}

    def restore(self, files: dict[Path, bytes]) -> None:
        """Put the transcripts back as `files` had them: drop what the failed turn added, rewrite the rest."""
        for path in self.files():
            if path not in files:
                path.unlink()
        for path, data in files.items():
            path.write_bytes(data)

    def transcript(self) -> list[str]:
        """The session's transcript lines (what the CLI remembers), for GET /wt/state."""
        return [
            line for data in self.files().values() for line in data.decode("utf-8", "replace").splitlines()
        ]


class Sessions:
    """Every live session by id; reset removes their config directories, so a reused session_id starts empty."""

    def __init__(self) -> None:
        self._entries: dict[str, SessionEntry] = {}

    def get(self, session_id: str) -> SessionEntry:
        entry = self._entries.get(session_id)
        if entry is None:
            directory = Path(tempfile.mkdtemp(prefix="wt-claude-"))
            entry = self._entries[session_id] = SessionEntry(directory)
        return entry

    def reset(self) -> None:
        """Remove every session's directory (this runtime made each one). A turn still running writes into a
        directory nobody reads again."""
        dropped, self._entries = self._entries, {}
        for entry in dropped.values():
            shutil.rmtree(entry.directory, ignore_errors=True)

    def snapshot(self) -> dict[str, list[str]]:
        return {session_id: entry.transcript() for session_id, entry in self._entries.items()}
