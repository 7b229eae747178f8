"""The reference runtime as windtunnel_inject serves it: the clients and tasks it holds while serving, reset,
the tools it lists (GET /wt/health?tools=1) and the state it shows (GET /wt/state)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping
from contextlib import AsyncExitStack
from typing import Any

import anyio
import anyio.abc
import windtunnel_inject
from windtunnel_inject import Turn

from reference_agent import preload
from reference_agent.agent import Agent
from reference_agent.memory import Memory
from reference_agent.model import ModelClient
from reference_agent.settings import Settings
from reference_agent.tools import ToolBox


def open_loop(settings: windtunnel_inject.Settings) -> ReferenceLoop:
    """The loop factory for windtunnel_inject.serve(): the runtime's own WT_STREAM and WT_FAULT are read,
    and refused when bad, before the server starts."""
    return ReferenceLoop(Settings.from_env(settings.env))


class ReferenceLoop:
    """Memory and tools live as long as the loop; the model's HTTP client and the MCP connections' owner
    tasks live while the server runs it (it is an async context manager, entered by the server). Entering
    it starts the background import of the clients' libraries (reference_agent.preload)."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._spawner = _Spawner()
        self.memory = Memory(settings.system_prompt, settings.fault)
        self.tools = ToolBox(settings.mcp_servers, self._spawner.spawn, settings.fault)
        self._agent: Agent | None = None
        self._resources = AsyncExitStack()

    async def __aenter__(self) -> ReferenceLoop:
        preload.start()
        async with AsyncExitStack() as stack:
            model = ModelClient(self._settings)
            stack.push_async_callback(model.aclose)
            self._spawner.group = await stack.enter_async_context(anyio.create_task_group())
            self._agent = Agent(self._settings, model, self.tools, self.memory)
            self._resources = stack.pop_all()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.tools.close()
        if self._spawner.group is not None:
            self._spawner.group.cancel_scope.cancel()
        await self._resources.aclose()

    async def turn(self, session_id: str, text: str) -> Turn:
        if self._agent is None:
            raise RuntimeError("the reference loop was not entered; serve it with lifespan on")
        return await self._agent.turn(session_id, text)

    async def reset(self) -> None:
        self.memory.reset()
        self.tools.forget()

    async def list_tools(self) -> Mapping[str, str]:
        offered = await self.tools.list_tools(fresh=True)
        return {name: tool.server for name, tool in offered.items()}

    async def snapshot(self) -> Mapping[str, Any]:
        return self.memory.snapshot()


class _Spawner:
    """Starts background tasks in the loop's task group, which exists only while the server runs the loop."""

    group: anyio.abc.TaskGroup | None = None

    def spawn(self, task: Callable[[], Coroutine[Any, Any, None]]) -> None:
        if self.group is None:
            raise RuntimeError(
                "the reference runtime was served without its lifespan; run uvicorn with lifespan on"
            )
        self.group.start_soon(task)
