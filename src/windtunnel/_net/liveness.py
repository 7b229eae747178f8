"""Naming a dead server: a client whose call failed asks whether the server behind it is gone.

A container that was killed or crashed leaves its clients with connection errors, timeouts or a stranger
answering on its address; the message then misleads (a hint about a wrong URL or a 404). A client given a
`Liveness` asks it after a failure, and when the server is gone the error says so, with the exit code and
last log lines the container driver knows.
"""

from __future__ import annotations

from collections.abc import Callable

from windtunnel.errors import HarnessError

Liveness = Callable[[], str | None]
"""Why the server is gone ("the model gateway container exited (code 137)", with its log tail), or None."""


def named_death(error: HarnessError, liveness: Liveness | None) -> HarnessError:
    """`error`, or a HarnessError that leads with the server's death when `liveness` reports one."""
    gone = liveness() if liveness is not None else None
    if gone is None:
        return error
    return HarnessError(
        f"{gone}\n  so: {error.message}",
        hint="Wind Tunnel's own container died (killed, out of memory, crashed): see its log lines above; "
        "the run cannot be judged on it",
    )
