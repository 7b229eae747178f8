"""A prestarted runtime container, depth 1: the next provision's fenced container starts while this one runs.

A container start is mostly waiting (the fence holder, its rules, create and start, the runtime's own
imports), so `Spare` starts the next one on a worker thread as soon as a handle is handed out, for what
the provision just made asked for. The next provision takes it only when it was started for exactly what
it asks (the same service environment, mocks and peers its fence answers); anything else is removed and a
container started as before.

A spare is a fresh process nobody has sent anything to: what it hands over is the same as a start on
demand, only earlier. Readiness is still awaited by the caller (the container boots either way).

Why the last key, not the most asked: a check's sessions ask for one environment in a row (its mocks, its
config), then the next check for its own. Measured over a warm certify of the reference (about 73
provisions each): started ahead for the most asked key so far, the container was taken 27 times and
removed unused 40 times; for the last key, taken 48 times and removed 19: more starts saved, and fewer
thrown away on a machine whose cores the containers share.

`close()` stops it on every way out: it waits for the worker's Docker calls (a stop signal interrupts the
main thread only, so a half-created container is never left behind a run's cleanup), then removes what the
worker started. The run's cleanup by label stays the net under it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor

from windtunnel._engine.stack import RunningContainer

log = logging.getLogger("windtunnel.runner")

Start = Callable[[], RunningContainer]
Remove = Callable[[RunningContainer], None]


class Spare:
    """One container started ahead for the next `take(key)`; `remove` removes a container and its fence."""

    def __init__(self, remove: Remove) -> None:
        self._remove = remove
        self._lock = threading.Lock()
        self._workers: ThreadPoolExecutor | None = None
        self._ahead: tuple[Hashable, Future[RunningContainer]] | None = None
        self._closed = False

    @property
    def enabled(self) -> bool:
        return self._workers is not None

    def enable(self) -> None:
        """From now on `start_next` starts ahead; idempotent."""
        with self._lock:
            if self._workers is None and not self._closed:
                self._workers = ThreadPoolExecutor(max_workers=1, thread_name_prefix="wt-spare")

    def start_next(self, key: Hashable, start: Start) -> None:
        """`key` was just asked for: start ahead, in the background, another container for it with `start`
        (when enabled and none is ahead; else nothing)."""
        with self._lock:
            if self._workers is None or self._ahead is not None:
                return
            self._ahead = (key, self._workers.submit(start))

    def take(self, key: Hashable) -> RunningContainer | None:
        """The container started ahead for `key` (waiting for its start calls), or None: none started,
        started for something else (removed, in the background), or its start failed (the caller starts
        one itself, and meets the same failure there, where it is reported)."""
        with self._lock:
            ahead, self._ahead = self._ahead, None
        if ahead is None:
            return None
        started_for, future = ahead
        try:
            running = future.result()
        except Exception as exc:  # noqa: BLE001 - started again on demand, where a failure is reported
            log.debug("a prestarted runtime container failed to start: %s", exc)
            return None
        if started_for == key:
            return running
        self._discard(running)
        return None

    def ahead(self) -> RunningContainer | None:
        """The container started ahead and not taken yet (waiting for a start in flight), or None. The
        worker runs one call at a time in order, so a removal asked for before it is done by then too."""
        with self._lock:
            ahead = self._ahead
        if ahead is None or ahead[1].exception() is not None:
            return None
        return ahead[1].result()

    def _discard(self, running: RunningContainer) -> None:
        with self._lock:
            workers = self._workers
        if workers is None:
            self._remove(running)
        else:
            workers.submit(self._remove, running)

    def close(self) -> None:
        """Stop starting ahead, wait for the worker, remove what it started; idempotent, never raises."""
        with self._lock:
            self._closed = True
            workers, self._workers = self._workers, None
            ahead, self._ahead = self._ahead, None
        if workers is not None:
            workers.shutdown(wait=True)
        if ahead is not None and ahead[1].exception() is None:
            try:
                self._remove(ahead[1].result())
            except Exception as exc:  # noqa: BLE001 - the run's cleanup by label removes it then
                log.warning("removing a prestarted runtime container failed: %s", exc)
