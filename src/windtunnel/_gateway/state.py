"""What one gateway app holds (mode, models, request log): shared by the app and its admin routes."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from windtunnel._chat.mode import GatewayMode
from windtunnel._gateway.log import RequestLog
from windtunnel._wire.dialect import Memory
from windtunnel.errors import TapeError


@dataclass(slots=True)
class GatewayState:
    """What one gateway app holds: its mode, the models it lists, the request log, the side models
    (answered beside the script; PUT /wt/side replaces them) and the memory of answers a later
    request may name by id (Responses' previous_response_id).

    `shutdown_error` is the tape error closing the mode raised (a record run with nothing recorded, a strict
    replay with unused interactions): kept for whoever serves the app to report, never lost in a traceback.
    """

    mode: GatewayMode
    models: tuple[str, ...]
    side_models: frozenset[str] = frozenset()
    log: RequestLog = field(default_factory=RequestLog)
    memory: Memory = field(default_factory=dict)
    started_at: float = field(default_factory=time.time)
    shutdown_error: TapeError | None = None
