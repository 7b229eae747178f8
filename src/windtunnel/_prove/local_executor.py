"""The local executor: plays a case's decisions in this process, against in-process mocks, scored by the real gates.

Like the reference runtime it substitutes inference only: the scripted decisions stand in for the
model, the pack's tools really run on fresh fixture state, the evidence is cross-checked and the
scenario's gate scores the run through the ordinary runner path (`run_reference_case`). Unlike it,
there is no agent loop, no model gateway and no MCP transport: everything stays in this process.
So it shows what a gate does with a decision path, and nothing about any runtime; certification
plays the same cases through the container-backed reference runtime.
"""

from __future__ import annotations

from pathlib import Path

from windtunnel._core.agent_runtime import AgentConfig, MCPHandle
from windtunnel._core.reference import ReferenceCase
from windtunnel._drivers.in_memory import InMemoryHandle
from windtunnel._mcp.inprocess import InProcessMCPHandle
from windtunnel._packs.pack import Pack
from windtunnel._prove.seam import CaseOutcome
from windtunnel._runner.batch import effective_config, make_probe
from windtunnel._runner.library import run_reference_case
from windtunnel._scenario.matching_prompt import prompt_key
from windtunnel._scenario.model import Scenario
from windtunnel.errors import UsageError

RUNTIME_NAME = "prove-local"


class _ScriptedRuntime:
    """A reference-capable runtime for one scenario: each handle plays one case's decisions."""

    def __init__(self, scenario: Scenario) -> None:
        self._first_prompt = prompt_key(scenario.turns[0])

    def provision(self, config: AgentConfig, mcps: list[MCPHandle] | None = None) -> InMemoryHandle:
        raise UsageError(
            "the local proving executor has no agent of its own; it only plays reference cases",
            hint="call provision_reference() with the case to play",
            runtime=RUNTIME_NAME,
        )

    def provision_reference(
        self, config: AgentConfig, case: ReferenceCase, mcps: list[MCPHandle] | None = None
    ) -> InMemoryHandle:
        tools = [handle for handle in mcps or [] if isinstance(handle, InProcessMCPHandle)]
        return InMemoryHandle({self._first_prompt: tuple(case.decisions)}, tools, config)


class LocalCaseRunner:
    """A CaseRunner that plays each case in-process; with `out_dir`, traces and scores are written there."""

    def __init__(self, out_dir: Path | None = None) -> None:
        self.out_dir = out_dir

    def __call__(self, pack: Pack, scenario: Scenario, case: ReferenceCase) -> CaseOutcome:
        mcps = [InProcessMCPHandle(plan) for plan in pack.plans()]  # fresh fixtures for every case
        result = run_reference_case(
            _ScriptedRuntime(scenario),
            scenario,
            case,
            effective_config(AgentConfig(), pack, scenario),
            mcps=mcps,
            state_probe=make_probe(pack, mcps),
            runtime_name=RUNTIME_NAME,
            out_dir=self.out_dir,
        )
        return CaseOutcome.from_result(result)
