"""Tapes through containers: gateway specs for record and replay, the scripted stand-in upstream, and one
scenario run through a runtime on a stack of its own.

Recording and the tape-fidelity stage share this, so a tape is replayed exactly the way it was recorded:
a fresh runtime of the same images from the driver (windtunnel._runtimes.abilities.FreshGatewayRuntime,
opened by windtunnel._runner.lifecycle.fresh_runtime), the ordinary `provision()` path (a tape replaces the
model, so nothing is scripted on the runtime's gateway), the same agent config.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from windtunnel._core.agent_runtime import AgentConfig, AgentRuntime, ModelSpec
from windtunnel._core.reference import ReferenceCase
from windtunnel._engine.stack import ANY_ADDRESS, ContainerStack, GatewaySpec
from windtunnel._engine.topology import DEFAULT_MODEL, ServicePlan
from windtunnel._gateway.client import GatewayClient
from windtunnel._gateway.upstream_key import in_container
from windtunnel._packs.pack import Pack
from windtunnel._runner.batch import effective_config, fresh_mocks
from windtunnel._runner.execute import RunResult
from windtunnel._runner.library import run_scenario
from windtunnel._scenario.model import Scenario
from windtunnel._tapes.model import Tape
from windtunnel._tapes.policy import SCRIPTED_UPSTREAM_ALIAS, SCRIPTED_UPSTREAM_PORT, is_scripted
from windtunnel.errors import HarnessError

TAPE_DIR = "/wt/tapes"
"""Where tapes are inside the gateway container (copied in for replay, copied out after a recording)."""


def replay_spec(tape_path: Path) -> GatewaySpec:
    """A replay gateway serving `tape_path`, copied in. It runs in development mode: staleness is judged by
    the harness with its own (injectable) clock, not by the container's clock."""
    inside = f"{TAPE_DIR}/{tape_path.name}"
    return GatewaySpec(mode="replay", extra_args=("--tape", inside), files={inside: tape_path.resolve()})


def record_spec(
    upstream: str,
    out_dir: Path,
    tape_name: str,
    *,
    key: str | None,
    lineage: Mapping[str, str],
) -> GatewaySpec:
    """A record gateway proxying to `upstream` and writing `<out_dir>/<tape_name>.jsonl` (copied out by
    `ContainerStack.collect_outputs()` once the tape is flushed).

    `key` (the upstream key) goes in as a read-only file named with --upstream-key-file
    (windtunnel._gateway.upstream_key.in_container); `lineage` (runtime, pack, scenario) is what the tape says
    it recorded. A real upstream needs the egress network; the scripted stand-in lives on the run network.
    """
    args = ["--upstream", upstream, "--tape-out", f"{TAPE_DIR}/{tape_name}.jsonl", "--tape-name", tape_name]
    args += [
        item
        for key in ("runtime", "pack", "scenario")
        if lineage.get(key)
        for item in (f"--{key}", lineage[key])
    ]
    key_args, secrets = in_container(key)
    out_dir.mkdir(parents=True, exist_ok=True)
    return GatewaySpec(
        mode="record",
        extra_args=(*args, *key_args),
        secrets=secrets,
        outputs={TAPE_DIR: out_dir.resolve()},
        needs_egress=not is_scripted(upstream),
    )


class TapeRuntime(AgentRuntime, Protocol):
    """A fresh runtime from FreshGatewayRuntime.with_gateway() (windtunnel._runtimes.abilities): the tapes
    reach its gateway (and put the scripted stand-in upstream beside it) through its stack."""

    @property
    def stack(self) -> ContainerStack: ...


def start_scripted_upstream(stack: ContainerStack, case: ReferenceCase) -> None:
    """A second gateway, in script mode with `case`'s decisions, on the stack's network as the upstream."""
    port = SCRIPTED_UPSTREAM_PORT
    command = ("gateway", "serve", "--mode", "script", "--host", ANY_ADDRESS, "--port", str(port))
    upstream = ServicePlan(role="upstream", alias=SCRIPTED_UPSTREAM_ALIAS, port=port, args=command)
    running = stack.start(upstream)
    with GatewayClient(f"http://{running.ip}:{port}") as client:
        try:
            client.wait_until_healthy(timeout=30.0)
        except HarnessError as exc:
            raise HarnessError(
                f"the scripted upstream did not start: {exc.message}",
                hint="check the windtunnel image (`wt images build`) and `docker logs` of the upstream",
            ) from exc
        client.install_script(case.name, case.decisions)


def agent_config(pack: Pack, scenario: Scenario, model: str | None) -> AgentConfig:
    """The config a tape run provisions with: the pack's and scenario's setup, and the model if not default."""
    base = AgentConfig(model=ModelSpec(model)) if model and model != DEFAULT_MODEL else AgentConfig()
    return effective_config(base, pack, scenario)


def recorded_model(tape: Tape) -> str | None:
    """The model the recording run asked for, when it asked for exactly one."""
    models = tape.header.lineage.requested_models
    return models[0] if len(models) == 1 else None


def run_through(
    runtime: AgentRuntime,
    pack: Pack,
    scenario: Scenario,
    *,
    runtime_name: str,
    config: AgentConfig,
    out_dir: Path,
) -> RunResult:
    """One run of `scenario` on the ordinary path (fresh mocks, provision, reset, turns, score)."""
    with fresh_mocks(runtime, pack) as (mcps, probe):
        results = run_scenario(
            runtime,
            scenario,
            config,
            mcps=mcps,
            state_probe=probe,
            runtime_name=runtime_name,
            out_dir=out_dir,
        )
    return results[0]


def tape_name(pack: str, scenario: str, runtime: str) -> str:
    """A golden tape's name: unique across packs and runtimes, so the bundle's tape index keeps them all."""
    return f"{pack}.{scenario}.{runtime}"
