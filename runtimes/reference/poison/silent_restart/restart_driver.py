"""A custom driver around the reference runtime whose handles restart their runtime container silently when it
has idled between turns: the container's main process is killed and started again (`docker restart`), the
driver waits until it serves Contract C again, then sends the turn on. Only the check that pauses between
turns meets it (the others send their turns back to back); there Wind Tunnel must see the restarted
sandbox and fail the turn.

The module name differs from other poisons' driver modules: runtime directories share one import namespace.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # ../wrapped_reference.py, shared by poisons
from wrapped_reference import WrappingPlugin  # importable only once the line above ran

IDLE_S = 1.5
"""An idle gap longer than this between two turns of one handle gets the container restarted. The kit's
checks send their turns back to back; the sandbox check pauses longer than this."""
BOOT_TIMEOUT_S = 60.0


class RecyclingHandle:
    """The reference runtime's handle, its container restarted before a turn that follows an idle gap."""

    def __init__(self, runtime: Any, handle: Any) -> None:
        self._runtime = runtime
        self._handle = handle
        self._last: float | None = None

    def send(self, messages: Any, session_id: str) -> Any:
        if self._last is not None and time.monotonic() - self._last > IDLE_S:
            self._recycle()
        try:
            return self._handle.send(messages, session_id)
        finally:
            self._last = time.monotonic()

    def _recycle(self) -> None:
        running = self._handle.container
        running.container.restart(timeout=0)
        port = self._runtime.manifest.port
        self._runtime.stack.wait_listening(
            running, port, timeout=BOOT_TIMEOUT_S, what="the restarted runtime"
        )

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handle, name)


plugin = WrappingPlugin(lambda: RecyclingHandle)
