"""The client libraries only a turn needs (aiohttp, the mcp SDK), imported off the start-up path.

The Contract C server (starlette, uvicorn) is all the runtime imports before it listens. Once it serves,
a background thread imports the libraries of its model and MCP clients (about 1 s in the image, more than
the server's own), so a readiness probe, a reset or a state read never waits for them; the first model or
tool call awaits that thread before it touches them, so no module is ever imported by two threads at once.
"""

from __future__ import annotations

import importlib
import threading

import anyio.to_thread

# In the order the clients import them; reference_agent.mcp_http pulls in httpx2 with aiohttp.
MODULES = ("aiohttp", "reference_agent.mcp_http", "mcp", "mcp.client.streamable_http", "mcp_types")

_thread: threading.Thread | None = None


def start() -> None:
    """Start importing MODULES in a daemon thread (once per process)."""
    global _thread  # noqa: PLW0603 - imports are process-wide, so is the one thread that does them
    if _thread is None:
        _thread = threading.Thread(target=_import_all, name="reference-preload", daemon=True)
        _thread.start()


async def loaded() -> None:
    """Return once the background imports are over (at once when they never started or are done)."""
    thread = _thread
    if thread is not None and thread.is_alive():
        await anyio.to_thread.run_sync(thread.join)


def _import_all() -> None:
    for name in MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - the first use imports it again and reports the real error
            return
