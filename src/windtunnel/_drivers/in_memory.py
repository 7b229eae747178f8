"""The in_memory runtime: a scripted agent in the runner's process, to exercise the harness quickly.

It follows each selected scenario's golden decisions, calling the pack's tools directly on in-process
mocks (no model, no MCP transport). It proves the runner, packs, mocks, gates and outputs work
together; it certifies nothing about any agent. By design it is not reference-capable (docs/selftests.md): it
shortcuts the very agent loop a self-test certifies.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from windtunnel._core.agent_runtime import AgentConfig, MCPHandle, Message, MockServerPlan, Response
from windtunnel._core.reference import ReferenceDecision
from windtunnel._mcp.inprocess import InProcessMCPHandle
from windtunnel._runtimes.config_fields import refuse_fields
from windtunnel._runtimes.manifest import RuntimeManifest
from windtunnel._scenario.matching_prompt import prompt_key
from windtunnel._scenario.model import Scenario

NAME = "in_memory"


class InMemoryRuntime:
    """Builds handles that replay a scenario's golden decisions against in-process mocks."""

    def __init__(self, scenarios: Sequence[Scenario] = ()) -> None:
        self._playbook: dict[str, tuple[ReferenceDecision, ...]] = {}
        self.learn(scenarios)

    def learn(self, scenarios: Sequence[Scenario]) -> None:
        """Take the golden decisions of these scenarios as the agent's policy, keyed by the first prompt."""
        for scenario in scenarios:
            if scenario.goldens:
                self._playbook[prompt_key(scenario.turns[0])] = tuple(scenario.goldens[0].decisions)

    def provision(self, config: AgentConfig, mcps: list[MCPHandle] | None = None) -> InMemoryHandle:
        refuse_fields(config, SUPPORTED, NAME)
        tools = [handle for handle in mcps or [] if isinstance(handle, InProcessMCPHandle)]
        return InMemoryHandle(dict(self._playbook), tools, config)

    def start_mcps(self, plans: Sequence[MockServerPlan]) -> list[MCPHandle]:
        return [InProcessMCPHandle(plan) for plan in plans]

    def stop_mcps(self, handles: Sequence[MCPHandle]) -> None:
        return None


SUPPORTED = frozenset({"system_prompt", "persona_doc", "skills"})
"""in_memory has no model: model, sampling and extensions cannot be honoured, so they raise."""


@dataclass
class _Session:
    turn: int = 0
    position: int = 0


class InMemoryHandle:
    def __init__(
        self,
        playbook: Mapping[str, tuple[ReferenceDecision, ...]],
        tools: list[InProcessMCPHandle],
        config: AgentConfig,
    ) -> None:
        self._playbook = playbook
        self._tools = tools
        self._config = config
        self._sessions: dict[str, _Session] = {}
        self._plans: dict[str, tuple[ReferenceDecision, ...]] = {}

    def send(self, messages: list[Message], session_id: str) -> Response:
        users = [message for message in messages if message["role"] == "user"]
        if session_id not in self._plans:
            self._plans[session_id] = self._playbook.get(prompt_key(users[0]["content"] or ""), ())
            self._sessions[session_id] = _Session()
        plan, session = self._plans[session_id], self._sessions[session_id]
        calls: list[dict[str, Any]] = []
        content = "in_memory has no golden decisions for this prompt"
        while session.position < len(plan):
            decision = plan[session.position]
            session.position += 1
            for call in decision.tool_calls:
                calls.append({"name": call.name, "arguments": dict(call.arguments)})
                self._call(call.name, dict(call.arguments))
            if not decision.tool_calls:
                content = decision.content or ""
                break
        rendered = self._render(messages)
        words = len(rendered.split())
        return {
            "content": content,
            "tool_calls": calls,
            "usage": {"prompt_tokens": words, "completion_tokens": len(content.split())},
            "rendered_prompt": rendered,
        }

    def _call(self, name: str, arguments: dict[str, Any]) -> None:
        for handle in self._tools:
            if any(tool["name"] == name for tool in handle.tools()):
                handle.call(name, arguments)
                return
        if self._tools:
            self._tools[0].call(name, arguments)  # recorded there as an unknown tool, as a real mock would

    def _render(self, messages: list[Message]) -> str:
        system = (
            [{"role": "system", "content": self._config.system_prompt}] if self._config.system_prompt else []
        )
        return json.dumps([*system, *messages], ensure_ascii=False)

    def reset_state(self) -> None:
        self._sessions.clear()
        self._plans.clear()

    def teardown(self) -> None:
        self.reset_state()


class InMemoryPlugin:
    """Registered as `in_memory`; runs any number of jobs at once (nothing is shared between handles)."""

    max_concurrency: int | None = None

    def build(self, runtime_name: str, label: str, soul_path: Path | None) -> InMemoryRuntime:
        return InMemoryRuntime()

    def pre_run(self, runtime: InMemoryRuntime, scenarios: Sequence[Scenario], runtime_name: str) -> None:
        runtime.learn(scenarios)


plugin = InMemoryPlugin()


def driver(_manifest: RuntimeManifest) -> InMemoryPlugin:
    """The `in_memory` driver kind (`[driver] kind = "in_memory"` in a runtime.toml): the same plugin as the
    runtime registered under that name; the manifest adds nothing it reads."""
    return plugin
