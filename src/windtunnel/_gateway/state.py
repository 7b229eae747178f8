"""What one gateway app holds (mode, models, request log): shared by the app and its admin routes."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from windtunnel._chat.mode import GatewayMode
from windtunnel._gateway.log import RequestLog
from windtunnel.errors import TapeError


@dataclass(slots=True)
class GatewayState:
    """What one gateway app holds: its mode, the models it lists and the request log.

    `shutdown_error` is the tape error closing the mode raised (a record run with nothing recorded, a strict
    replay with unused interactions): kept for whoever serves the app to report, never lost in a traceback.
    """

    mode: GatewayMode
    models: tuple[str, ...]
    log: RequestLog = field(default_factory=RequestLog)
    started_at: float = field(default_factory=time.time)
    shutdown_error: TapeError | None = None
