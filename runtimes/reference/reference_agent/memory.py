"""Everything the runtime remembers: per-session histories, a runtime-wide search index, and a turn log.

The index is platform memory, shared by all sessions like a real product's: a new session asking about
something an earlier one said or saw gets it back as "Relevant notes:". `/wt/reset` must wipe all three;
the WT_FAULT branches here are the poison runtimes that fail to.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
from windtunnel_inject import DEFAULT_SYSTEM_PROMPT

from reference_agent.settings import Fault

SHARED_HISTORY_KEY = "<shared>"
TOKEN = re.compile(r"[a-z0-9]+")
# Words too common to say two texts are about the same thing.
_COMMON_WORDS = (
    "the and for you your was what that this with are have did please from can will about into not "
    "but they them there their then than which who how why when where also just any all our out has "
    "had been were would could should tell give me"
)
STOPWORDS = frozenset(_COMMON_WORDS.split())
NOTE_LIMIT = 3
NOTE_CHARS = 300


def tokens(text: str) -> set[str]:
    return {token for token in TOKEN.findall(text.lower()) if len(token) >= 3 and token not in STOPWORDS}


@dataclass(frozen=True, slots=True)
class Note:
    session_id: str
    kind: str  # "user" or "tool"
    text: str
    generation: int = 0  # the memory generation it was written in: a reset starts a new one


class SearchIndex:
    """A small inverted index; a query matches a note sharing two of its words (one, for one-word queries)."""

    def __init__(self) -> None:
        self._notes: list[Note] = []
        self._postings: dict[str, set[int]] = {}

    def __len__(self) -> int:
        return len(self._notes)

    def add(self, note: Note) -> None:
        position = len(self._notes)
        self._notes.append(note)
        for token in tokens(note.text):
            self._postings.setdefault(token, set()).add(position)

    def search(self, text: str, *, session_id: str, generation: int) -> list[Note]:
        """Notes matching `text`, leaving out the asking conversation's own (its history already has them)."""
        query = tokens(text)
        hits: dict[int, int] = {}
        for token in query:
            for position in self._postings.get(token, ()):
                hits[position] = hits.get(position, 0) + 1
        needed = min(2, len(query))
        ranked = sorted(
            (position for position, score in hits.items() if score >= needed),
            key=lambda position: (-hits[position], -position),  # best match first, then the newest
        )
        notes = [self._notes[position] for position in ranked]
        own = (session_id, generation)
        return [note for note in notes if (note.session_id, note.generation) != own][:NOTE_LIMIT]

    def clear(self) -> None:
        self._notes.clear()
        self._postings.clear()

    def snapshot(self) -> list[dict[str, str]]:
        return [{"session_id": note.session_id, "kind": note.kind, "text": note.text} for note in self._notes]


def render_notes(notes: Sequence[Note]) -> str:
    lines = [f"- ({note.kind}, earlier session) {note.text[:NOTE_CHARS]}" for note in notes]
    return "Relevant notes:\n" + "\n".join(lines)


@dataclass(eq=False)
class Session:
    key: str
    messages: list[dict[str, Any]]
    lock: anyio.Lock = field(default_factory=anyio.Lock)


class Memory:
    """Sessions, index and log; `generation` changes on every wipe so an in-flight turn cannot write back."""

    def __init__(self, system_prompt: str, fault: Fault | None) -> None:
        # fault `ignore_system_prompt`: the configured prompt is dropped for the built-in one.
        self._system_prompt = DEFAULT_SYSTEM_PROMPT if fault is Fault.IGNORE_SYSTEM_PROMPT else system_prompt
        self._fault = fault
        self._sessions: dict[str, Session] = {}
        self.index = SearchIndex()
        self.log: list[dict[str, Any]] = []
        self.generation = 0

    def _key(self, session_id: str) -> str:
        if self._fault is Fault.BREAK_SESSION_AFFINITY:
            return SHARED_HISTORY_KEY  # fault: every session reads and writes one history
        return session_id

    def session(self, session_id: str) -> Session:
        key = self._key(session_id)
        if key not in self._sessions:
            self._sessions[key] = Session(key, [{"role": "system", "content": self._system_prompt}])
        return self._sessions[key]

    def commit(
        self,
        session: Session,
        generation: int,
        messages: Sequence[dict[str, Any]],
        notes: Sequence[Note],
        entry: dict[str, Any],
    ) -> bool:
        """Append a finished turn; False (nothing written) when a reset happened while it ran."""
        if generation != self.generation:
            return False
        session.messages.extend(messages)
        for note in notes:
            self.index.add(Note(note.session_id, note.kind, note.text, generation))
        self.log.append(entry)
        return True

    def reset(self) -> None:
        """Wipe every session, the index and the log (unless a WT_FAULT says otherwise)."""
        if self._fault is Fault.RESET_NOOP:
            return  # fault: answer 200, wipe nothing
        self.generation += 1
        if self._fault is not Fault.KEEP_CONVERSATION_ACROSS_RESET:
            self._sessions.clear()
        # else fault: histories survive, so a reused session_id resumes its pre-reset conversation
        if self._fault is not Fault.KEEP_SEARCH_INDEX_ACROSS_RESET:
            self.index.clear()
        # else fault: the index survives and answers the next run's questions from this run's data
        self.log.clear()

    def snapshot(self) -> dict[str, Any]:
        return {
            "sessions": {key: list(session.messages) for key, session in self._sessions.items()},
            "index": self.index.snapshot(),
            "log": list(self.log),
        }
