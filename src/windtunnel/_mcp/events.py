"""The mcp SDK's EventStore kept in memory: what makes a session mock's SSE streams resumable (Last-Event-ID).

Event ids count up per mock (`1`, `2`, ...), so a run's event ids are the same on every run. The store keeps
the newest MAX_EVENTS events: a client reconnecting later than that gets what is left, not a crash.
"""

from __future__ import annotations

import collections
import threading

from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp_types import JSONRPCMessage

MAX_EVENTS = 10_000


class MemoryEventStore(EventStore):
    """Events by id, in the order they were stored; replay sends a stream's events after a given one."""

    def __init__(self, max_events: int = MAX_EVENTS) -> None:
        self._events: collections.OrderedDict[EventId, tuple[StreamId, JSONRPCMessage | None]] = (
            collections.OrderedDict()
        )
        self._max = max_events
        self._next = 0
        self._lock = threading.Lock()

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        with self._lock:
            self._next += 1
            event_id = str(self._next)
            self._events[event_id] = (stream_id, message)
            while len(self._events) > self._max:
                self._events.popitem(last=False)
        return event_id

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        with self._lock:
            if last_event_id not in self._events:
                return None
            stream_id = self._events[last_event_id][0]
            ids = list(self._events)
            later = [
                (event_id, message)
                for event_id in ids[ids.index(last_event_id) + 1 :]
                for stream, message in [self._events[event_id]]
                if stream == stream_id and message is not None  # priming events carry no message
            ]
        for event_id, message in later:
            await send_callback(EventMessage(message, event_id))
        return stream_id
