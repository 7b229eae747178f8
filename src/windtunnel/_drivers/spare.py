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

Only while the machine has idle CPU (windtunnel._drivers.idle_cpu): where every core is busy a start
ahead overlaps nothing and a spare thrown away is pure extra work. A take for another key neither waits for
the spare's start nor uses it: the worker removes it once started, while the caller starts its own.

`close()` stops it on every way out: it waits for the worker's Docker calls (a stop signal interrupts the
main thread only, so a half-created container is never left behind a run's cleanup), then removes what the
worker started. The run's cleanup by label stays the net under it.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any

from windtunnel._drivers.idle_cpu import IdleCpu
from windtunnel._engine.stack import RunningContainer

log = logging.getLogger("windtunnel.runner")

Start = Callable[[], RunningContainer]
Remove = Callable[[RunningContainer], None]
HasRoom = Callable[[], bool]


class Spare:
    """One container started ahead for the next `take(key)`; `remove` removes a container and its fence;
    `has_room` says whether the machine's CPU has room for a start ahead (default: IdleCpu)."""

    def __init__(self, remove: Remove, has_room: HasRoom | None = None) -> None:
        self._remove = remove
        self._has_room = has_room or IdleCpu().has_room
        self._lock = threading.Lock()
        self._workers: ThreadPoolExecutor | None = None
        self._ahead: tuple[Hashable, Future[RunningContainer]] | None = None
        self._last_job: Future[Any] | None = None
        self._closed = False
        self.counts: Counter[str] = Counter()
        """started (ahead), taken, discarded (started for another key), held_back (no idle CPU)."""

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
        (when enabled, none is ahead and the machine has idle CPU; else nothing)."""
        with self._lock:
            if self._workers is None or self._ahead is not None:
                return
            if not self._has_room():
                self.counts["held_back"] += 1
                return
            future = self._workers.submit(start)
            self._ahead, self._last_job = (key, future), future
            self.counts["started"] += 1

    def take(self, key: Hashable) -> RunningContainer | None:
        """The container started ahead for `key` (waiting for its start calls), or None: none started,
        started for something else (removed in the background once started, never waited for), or its
        start failed (the caller starts one itself, and meets the same failure there, where it is
        reported)."""
        with self._lock:
            ahead, self._ahead = self._ahead, None
        if ahead is None:
            return None
        started_for, future = ahead
        if started_for != key:
            self._discard(future)
            return None
        try:
            running = future.result()
        except Exception as exc:  # noqa: BLE001 - started again on demand, where a failure is reported
            log.debug("a prestarted runtime container failed to start: %s", exc)
            return None
        self.counts["taken"] += 1
        return running

    def ahead(self) -> RunningContainer | None:
        """The container started ahead and not taken yet, or None. It first waits for every job the worker
        was given (one at a time, in order): a start in flight, and a spare being removed, which is then
        gone from the engine too."""
        with self._lock:
            ahead, last = self._ahead, self._last_job
        if last is not None:
            wait([last])
        if ahead is None or ahead[1].exception() is not None:
            return None
        return ahead[1].result()

    def _discard(self, future: Future[RunningContainer]) -> None:
        self.counts["discarded"] += 1
        with self._lock:
            workers = self._workers
            if workers is not None:
                self._last_job = workers.submit(self._remove_started, future)
                return
        self._remove_started(future)  # closed meanwhile: no worker left to do it

    def _remove_started(self, future: Future[RunningContainer]) -> None:
        try:
            running = future.result()
        except Exception:  # noqa: BLE001 - a start that failed left nothing to remove
            return
        self._remove(running)

    def close(self) -> None:
        """Stop starting ahead, wait for the worker, remove what it started; idempotent, never raises."""
        with self._lock:
            self._closed = True
            workers, self._workers = self._workers, None
            ahead, self._ahead = self._ahead, None
        if workers is not None:
            workers.shutdown(wait=True)
            log.info("runtime containers started ahead: %s", dict(self.counts))
        if ahead is not None and ahead[1].exception() is None:
            try:
                self._remove(ahead[1].result())
            except Exception as exc:  # noqa: BLE001 - the run's cleanup by label removes it then
                log.warning("removing a prestarted runtime container failed: %s", exc)
