"""Calling code Wind Tunnel does not own (a runtime plugin's, a pack's): its crashes become our errors."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from windtunnel.errors import WindTunnelError


@contextlib.contextmanager
def foreign_code(
    error: Callable[..., WindTunnelError], subject: str, *, hint: str, note: str = "", **context: Any
) -> Iterator[None]:
    """Around a call into someone else's code. A WindTunnelError it raises passes as it is (it already says
    what to fix); any other exception becomes `error` with the message `<subject> raised <Type>: <message>`
    (then `note`, say where the code was loaded from), `hint` and `context`, chained to the original."""
    try:
        yield
    except WindTunnelError:
        raise
    except Exception as exc:
        raise error(f"{subject} raised {type(exc).__name__}: {exc}{note}", hint=hint, **context) from exc
