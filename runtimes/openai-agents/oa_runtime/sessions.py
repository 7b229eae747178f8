"""Per-session conversation memory: one SDK SQLiteSession (in memory) per session_id, wiped by reset."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import anyio
from agents import SQLiteSession, TResponseInputItem


@dataclass(eq=False)
class SessionEntry:
    """A session's SDK store and the lock that runs its turns one at a time."""

    session: SQLiteSession
    lock: anyio.Lock = field(default_factory=anyio.Lock)

    async def restore(self, items: list[TResponseInputItem]) -> None:
        """Put the history back as it was before a failed turn."""
        await self.session.clear_session()
        if items:
            await self.session.add_items(items)


class Sessions:
    """Every live session by id; reset forgets them all, so a reused session_id starts empty."""

    def __init__(self) -> None:
        self._entries: dict[str, SessionEntry] = {}

    def get(self, session_id: str) -> SessionEntry:
        entry = self._entries.get(session_id)
        if entry is None:
            entry = self._entries[session_id] = SessionEntry(SQLiteSession(session_id))
        return entry

    async def reset(self) -> None:
        """Wipe every session. A turn still running keeps writing to its dropped store, which nobody reads."""
        dropped, self._entries = self._entries, {}
        for entry in dropped.values():
            await entry.session.clear_session()
            # Not closed here: a turn may still hold it; the in-memory database goes with the last reference.

    async def snapshot(self) -> dict[str, list[Any]]:
        return {session_id: await entry.session.get_items() for session_id, entry in self._entries.items()}

    async def close(self) -> None:
        entries, self._entries = self._entries, {}
        for entry in entries.values():
            entry.session.close()
