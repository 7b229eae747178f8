"""windtunnel-inject: the server side of Wind Tunnel's Contract C v1, so a runtime is only its agent loop.

A runtime under certification serves POST /wt/inject and POST /wt/reset (docs/contract-c.md). This library
owns everything of that but the agent loop: the WT_* environment (Settings), the strict request validation,
the response envelope, turn deadlines, error answers, the optional GET /wt/health?tools=1 and GET /wt/state
(when the loop can list its tools or snapshot its state), and the entry point (serve). The author writes a
class with `async def turn(session_id, text) -> Turn` and `async def reset()`, recording what the model did
with a Transcript. docs/writing-a-runtime.md has a complete example.
"""

from __future__ import annotations

from windtunnel_inject._app import create_app
from windtunnel_inject._loop import AgentLoop, ListsTools, LoopFactory, SnapshotsState
from windtunnel_inject._serve import serve
from windtunnel_inject._settings import (
    DEFAULT_PORT,
    DEFAULT_SYSTEM_PROMPT,
    SAMPLING_KEYS,
    McpServer,
    Settings,
    SettingsError,
    env_flag,
    env_positive_int,
)
from windtunnel_inject._transcript import (
    ToolCall,
    Transcript,
    Turn,
    TurnFailed,
    decode_arguments,
    describe,
    find_cause,
    usage_total,
)

__version__ = "1.0.0"

__all__ = [
    # the loop an author writes, and what a turn reports
    "AgentLoop",
    "ListsTools",
    "SnapshotsState",
    "LoopFactory",
    "Turn",
    "ToolCall",
    "Transcript",
    "TurnFailed",
    # the WT_* environment
    "Settings",
    "McpServer",
    "SettingsError",
    "env_flag",
    "env_positive_int",
    "DEFAULT_PORT",
    "DEFAULT_SYSTEM_PROMPT",
    "SAMPLING_KEYS",
    # serving
    "serve",
    "create_app",
    # helpers for loops
    "decode_arguments",
    "usage_total",
    "find_cause",
    "describe",
]


def _publish() -> None:
    """Reprs and tracebacks name the public module: windtunnel_inject.Turn, not windtunnel_inject._transcript."""
    for name in __all__:
        value = globals()[name]
        if getattr(value, "__module__", "").startswith("windtunnel_inject._"):
            try:
                value.__module__ = __name__
            except (AttributeError, TypeError):
                continue


_publish()
