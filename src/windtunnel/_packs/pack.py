"""A pack owns its scenarios, the MCP mock factories they run against, and an optional state probe."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from windtunnel._core.agent_runtime import MCPHandle, MockServerPlan, RecordingMCPHandle, StateProbe
from windtunnel._core.foreign import foreign_code
from windtunnel._core.frozen import freeze
from windtunnel._core.mock_kit import MockServer
from windtunnel._core.tiers import DEFAULT_TIER, TIERS, Tier
from windtunnel._scenario.model import Scenario
from windtunnel.errors import PackError

StateProbeFactory = Callable[[Sequence[MCPHandle]], StateProbe]
PROFILES: tuple[str, ...] = ("live", "record", "replay")


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentSetup:
    """What the agent is told besides the prompt; paths are relative to the pack root."""

    system_prompt: str | None = None
    persona_doc: str | None = None
    skills: Sequence[str] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "skills", freeze(self.skills))


@dataclass(frozen=True, slots=True, kw_only=True)
class Pack:
    """A scenario pack.

    `mcp_servers` maps a server name to a factory returning a fresh MockServer (fresh fixture state).
    `state_probe_factory(handles)` builds the StateProbe for one case from the started handles.
    `rules` and `requirements` are what `rule`/`requirement` sources cite; `evaluator_files` are
    grader-only files (relative paths) that must never reach the agent. `profiles` lists the tape
    profiles the pack supports (live, record, replay).
    """

    name: str
    scenarios: Sequence[Scenario]
    mcp_servers: Mapping[str, Callable[[], MockServer]] = field(default_factory=dict)
    state_probe_factory: StateProbeFactory | None = None
    agent: AgentSetup = field(default_factory=AgentSetup)
    rules: Mapping[str, str] = field(default_factory=dict)
    requirements: Mapping[str, str] = field(default_factory=dict)
    evaluator_files: Sequence[str] = ()
    profiles: Sequence[str] = PROFILES
    owner: str | None = None
    root: Path | None = None
    tier: Tier = DEFAULT_TIER

    def __post_init__(self) -> None:
        if not self.name or not isinstance(self.name, str):
            raise PackError(
                f"a pack has name {self.name!r}", hint="give Pack a non-empty name=", field="name"
            )
        if self.tier not in TIERS:
            raise self._error("tier", f"is {self.tier!r}", f"use one of {', '.join(TIERS)}")
        for name in ("scenarios", "evaluator_files", "profiles"):
            object.__setattr__(self, name, self._sequence(name, getattr(self, name)))
        if not isinstance(self.agent, AgentSetup):
            raise self._error("agent", f"is a {type(self.agent).__name__}", "write agent=AgentSetup(...)")
        self._sequence("agent.skills", self.agent.skills)
        scenarios = tuple(self._adopt(scenario) for scenario in self.scenarios)
        names = [scenario.name for scenario in scenarios]
        for name in names:
            if names.count(name) > 1:
                raise PackError(
                    f"pack {self.name!r} has two scenarios named {name!r}",
                    hint="scenario names must be unique within a pack",
                    pack=self.name,
                    field="scenarios",
                )
        for profile in self.profiles:
            if profile not in PROFILES:
                raise PackError(
                    f"pack {self.name!r} declares profile {profile!r}",
                    hint=f"use profiles from {PROFILES}",
                    pack=self.name,
                    field="profiles",
                )
        object.__setattr__(self, "scenarios", scenarios)
        object.__setattr__(self, "mcp_servers", self._servers(self.mcp_servers))

    def _servers(self, servers: Any) -> dict[str, Callable[[], MockServer]]:
        """mcp_servers: names to factories (a MockServer itself is a mistake the run would only find later)."""
        if not isinstance(servers, Mapping):
            raise self._error(
                "mcp_servers", f"is a {type(servers).__name__}", 'write mcp_servers={"name": factory}'
            )
        for name, factory in servers.items():
            if not isinstance(name, str) or not name or not callable(factory):
                raise self._error(
                    f"mcp_servers[{name!r}]",
                    f"is a {type(factory).__name__}, not a function returning a MockServer",
                    f"write mcp_servers={{{name!r}: make_server}} with def make_server() -> MockServer",
                )
        return dict(servers)

    def _error(self, field: str, problem: str, hint: str) -> PackError:
        return PackError(f"pack {self.name!r}: {field} {problem}", hint=hint, pack=self.name, field=field)

    def _sequence(self, field: str, value: Any) -> tuple[Any, ...]:
        """A list field as a tuple; a bare string is refused, never split into characters."""
        frozen = freeze(value)
        if isinstance(frozen, str):
            raise self._error(
                field,
                f"is the string {frozen!r}; expected a list (a string would be read one character at a time)",
                f"wrap it in a list: {field.rsplit('.', 1)[-1]}=[{frozen!r}]",
            )
        if not isinstance(frozen, tuple):
            raise self._error(field, f"is a {type(frozen).__name__}; expected a list", f"write {field}=[...]")
        return frozen

    def _adopt(self, scenario: Scenario) -> Scenario:
        if not isinstance(scenario, Scenario):
            raise PackError(
                f"pack {self.name!r}: scenarios holds a {type(scenario).__name__}, not a Scenario",
                hint="build each entry with windtunnel.api.Scenario(...)",
                pack=self.name,
                field="scenarios",
            )
        changes: dict[str, Any] = {}
        if scenario.pack is None:
            changes["pack"] = self.name
        if scenario.owner is None and self.owner is not None:
            changes["owner"] = self.owner
        if scenario.tier is None:
            changes["tier"] = self.tier
        return dataclasses.replace(scenario, **changes) if changes else scenario

    def plans(self) -> list[MockServerPlan]:
        """One plan per MCP mock; building a plan calls no factory.

        Each plan's factory is the pack's, guarded: wherever it is called (in-process, loopback, a
        runtime's own hosting), a factory that raises or returns something else is a PackError
        naming the pack and the factory.
        """
        return [
            MockServerPlan(
                pack=self.name,
                server=name,
                factory=guarded_factory(self.name, name, factory),
                pack_root=self.root,
            )
            for name, factory in self.mcp_servers.items()
        ]

    def scenario(self, name: str) -> Scenario:
        for scenario in self.scenarios:
            if scenario.name == name:
                return scenario
        raise KeyError(name)


def guarded_factory(pack: str, server: str, factory: Callable[[], MockServer]) -> Callable[[], MockServer]:
    """`factory`, with what it raises or wrongly returns turned into a PackError naming pack and factory."""
    where = f"pack {pack!r}: mcp_servers[{server!r}]"
    hint = "make the factory build a MockServer from the pack's fixtures without side effects"

    def build() -> MockServer:
        with foreign_code(PackError, where, hint=hint, pack=pack, field=f"mcp_servers[{server}]"):
            server_: object = factory()  # a factory typed to return a MockServer may still not
        if not isinstance(server_, MockServer):
            message = f"{where} returned {type(server_).__name__}, not a windtunnel.api.MockServer"
            raise PackError(message, hint=hint, pack=pack, field=f"mcp_servers[{server}]")
        return server_

    return build


class MockStateProbe:
    """The usual StateProbe: `{server name: state}` read from every recording MCP handle."""

    def __init__(self, handles: Sequence[MCPHandle]) -> None:
        self._handles = [handle for handle in handles if isinstance(handle, RecordingMCPHandle)]

    def snapshot(self) -> Mapping[str, Any]:
        return {handle.name: handle.state() for handle in self._handles}


def mock_state_probe(handles: Sequence[MCPHandle]) -> StateProbe:
    """A state_probe_factory that reads the pack's own MCP mocks."""
    return MockStateProbe(handles)
