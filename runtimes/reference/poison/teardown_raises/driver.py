"""A custom driver around the reference runtime whose handles raise from teardown(): a poison that only the
teardown check may catch. Everything else is delegated untouched (see ../wrapped_reference.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # ../wrapped_reference.py, shared by poisons
from wrapped_reference import WrappingPlugin  # importable only once the line above ran


class RaisingTeardownHandle:
    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def send(self, messages: Any, session_id: str) -> Any:
        return self._inner.send(messages, session_id)

    def reset_state(self) -> None:
        self._inner.reset_state()

    def model_requests(self) -> Any:
        return self._inner.model_requests()

    def kill(self) -> None:
        self._inner.kill()

    def teardown(self) -> None:
        self._inner.teardown()
        raise RuntimeError("teardown failed: the driver could not release its session")


plugin = WrappingPlugin(lambda: lambda _runtime, handle: RaisingTeardownHandle(handle))
