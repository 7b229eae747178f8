"""Work that may finish after a teardown returns: a fence holder's record read and the holder removed.

A runtime container's teardown removes the container itself at once (its process is gone when teardown
returns, as the SPI says), then leaves its fence holder to `Retirer`: reading what the fence refused and
removing the holder take ~0.25 s of engine calls that the next check need not wait for. The holder is
inert by then (its only user is gone; its resolver listens on its own loopback), and the record it holds
is complete (nothing is left to send a packet). `settle()` waits for everything handed over so far: a
reader of the fence record, and the run's close() before its sweep by label, call it first.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

log = logging.getLogger("windtunnel.runner")


class Retirer:
    """One worker thread that runs handed-over jobs in order; `settle()` waits for them all."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._worker: ThreadPoolExecutor | None = None

    def later(self, job: Callable[[], None]) -> None:
        """Run `job` on the worker thread, after every job handed over before it. A job's failure is logged
        there (the run's sweep by label removes what it left), never raised."""
        with self._lock:
            if self._worker is None:
                self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="wt-retire")
            self._worker.submit(_logged, job)

    def settle(self) -> None:
        """Wait for every job handed over so far: the one worker runs jobs in order, so a job handed over
        now runs after all of them."""
        with self._lock:
            marker = None if self._worker is None else self._worker.submit(_nothing)
        if marker is not None:
            marker.result()

    def close(self) -> None:
        """Wait for every job handed over, then stop the worker; idempotent. A later `later()` starts a new
        worker."""
        with self._lock:
            worker, self._worker = self._worker, None
        if worker is not None:
            worker.shutdown(wait=True)


def _nothing() -> None:
    return None


def _logged(job: Callable[[], None]) -> None:
    try:
        job()
    except Exception as exc:  # noqa: BLE001 - close() sweeps by label whatever a job left
        log.warning("retiring a fence holder failed: %s", exc)
