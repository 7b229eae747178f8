"""When a runtime service is up: its inject port answers HTTP at all, since Contract C defines no health route.

The probe is `GET /wt/health` (READY_PATH). A runtime may serve it (docs/contract-c.md), but one that
implements only `POST /wt/inject` and `POST /wt/reset` answers 404, 405 or, with Python's http.server,
501: every such answer proves the server listens. Only a 5xx other than 501 means "listening but not ready
yet" (a 503 while it warms up); that is retried until the deadline and then reported with the answer.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from windtunnel._net.tls import shared_tls_context
from windtunnel.errors import RuntimeUnavailableError

READY_PATH = "/wt/health"
"""What a readiness probe GETs: the gateway and the mocks serve it (200); a runtime may (Contract C)."""
NOT_IMPLEMENTED = 501
PROBE_TIMEOUT_S = 2.0
INTERVAL_S = 0.05
GONE_EVERY_S = 0.25
"""How often a wait asks `gone()`: each answer is an engine call (a container's inspect), and a runtime
that takes seconds to boot would otherwise be inspected twenty times a second."""


@dataclass(frozen=True, slots=True)
class Probe:
    """One probe's outcome: whether the service counts as up, and what it answered (for the error)."""

    ready: bool
    answer: str


def probe(http: httpx.Client, base_url: str) -> Probe:
    """GET base_url + READY_PATH once; any HTTP answer but a 5xx (501 aside) counts as ready."""
    try:
        response = http.get(f"{base_url.rstrip('/')}{READY_PATH}")
    except httpx.TransportError as exc:
        return Probe(False, f"no HTTP answer ({type(exc).__name__})")
    status = response.status_code
    if status >= 500 and status != NOT_IMPLEMENTED:
        return Probe(False, f"GET {READY_PATH} answered HTTP {status}: {response.text[:200]!r}")
    return Probe(True, f"HTTP {status}")


def wait_listening(
    base_url: str,
    *,
    timeout: float,
    what: str,
    gone: Callable[[], str | None] = lambda: None,
    details: Callable[[], str] = lambda: "",
    hint: str,
    runtime: str | None = None,
) -> None:
    """Poll until `base_url` answers HTTP (see the module docstring) or raise RuntimeUnavailableError.

    `gone()` returns why waiting is pointless (for example "exited"), asked after a failed probe at most
    every GONE_EVERY_S and at the deadline, so a dead container fails within a quarter second;
    `details()` adds context (its log lines) to the error.
    """
    deadline = time.monotonic() + timeout
    asked = time.monotonic()
    with httpx.Client(timeout=PROBE_TIMEOUT_S, verify=shared_tls_context()) as http:
        while True:
            outcome = probe(http, base_url)
            if outcome.ready:
                return
            now = time.monotonic()
            expired = now > deadline
            reason = None
            if expired or now - asked >= GONE_EVERY_S:
                asked, reason = now, gone()
            if reason is not None or expired:
                state = f" ({reason})" if reason else ""
                raise RuntimeUnavailableError(
                    f"{what} did not answer HTTP at {base_url} within {timeout:.0f}s{state}; "
                    f"last: {outcome.answer}{details()}",
                    hint=hint,
                    runtime=runtime,
                )
            time.sleep(INTERVAL_S)
