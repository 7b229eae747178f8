"""The agent loop a runtime author writes: two required methods, and optional abilities as Protocols of their own."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

from windtunnel_inject._settings import Settings
from windtunnel_inject._transcript import Turn


@runtime_checkable
class AgentLoop(Protocol):
    """A runtime's agent loop: what POST /wt/inject and POST /wt/reset run.

    A loop that holds resources needing the server's event loop (an HTTP client session, a task group) is
    also an async context manager: the server enters it before the first request and leaves it at shutdown.
    """

    async def turn(self, session_id: str, text: str) -> Turn:
        """Run one user turn of session `session_id` and report it (Transcript records it as you go).

        The loop keeps each session's history itself; only the newest user message arrives. Turns of one
        session arrive one at a time from the harness, but turns of different sessions may overlap. The
        server cancels the call when the request's `timeout_s` passes (answered 504), so leave the session
        as it was when a turn does not finish. Raise TurnFailed (502) for a turn that cannot finish; any
        other exception is answered 500 as a bug of the runtime.
        """
        ...

    async def reset(self) -> None:
        """Forget everything: every session, history, memory store, search index and log (docs/contract-c.md).

        Answered 200 only after it returns; a raise is answered 500, which the harness treats as a failed
        wipe. Called between runs while no turn is in flight; a turn still running must not write back.
        """
        ...


@runtime_checkable
class ListsTools(Protocol):
    """Optional: the loop can list its tools now. Adds the deep health check GET /wt/health?tools=1."""

    async def list_tools(self) -> Mapping[str, str]:
        """Every tool offered now, by name, with the name of the MCP server offering it.

        Ask the servers (do not answer from a cache): the check proves the tools are reachable. Raise to say
        they are not; the answer is then 503 with the reason.
        """
        ...


@runtime_checkable
class SnapshotsState(Protocol):
    """Optional: the loop can show its state. Adds GET /wt/state (name it in runtime.toml's
    [capabilities] state_route), which the hermetic reset canary reads to find what a reset left behind."""

    async def snapshot(self) -> Mapping[str, Any]:
        """Everything the loop remembers (sessions, memory, indexes, logs) as a JSON-serialisable object."""
        ...


LoopFactory = Callable[[Settings], AgentLoop]
"""Builds a loop from the validated settings, before the server starts: read your own variables from
`settings.env` here and raise SettingsError for a bad one, so the runtime refuses to start naming it. A class
whose constructor takes Settings is one."""
