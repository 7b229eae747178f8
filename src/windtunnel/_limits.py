"""Size limits on bodies Wind Tunnel reads from others: model calls the gateway receives, MCP calls a mock
receives, and Contract C answers the runner receives. One variable sets them all, WT_MAX_BODY_BYTES.

A body over the limit is refused with a clear error (HTTP 413 on the servers, an EnvelopeError naming the
limit on the runner) instead of being buffered, logged and written into runs/ several times over. The
default is generous for chat traffic (a long conversation with tool schemas is well under 1 MiB).
"""

from __future__ import annotations

from collections.abc import Mapping

from windtunnel._env_values import env_bytes, process_env

MAX_BODY_ENV = "WT_MAX_BODY_BYTES"
DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024


def max_body_bytes(env: Mapping[str, str] | None = None) -> int:
    """The limit from `env` (the process environment when None: the runner's handles are built in several
    places, and this is the one that reads it)."""
    return env_bytes(process_env() if env is None else env, MAX_BODY_ENV, DEFAULT_MAX_BODY_BYTES)
