"""The kit's checks over the real reference runtime on 127.0.0.1 (its own app, the gateway app, the kit's MCP
mocks, reached by URL: tests/unit/loopback_runtime.py): the correct runtime passes each check, and each
poison fault of the runtime fails exactly the check named for it in the suite. No Docker needed."""

from __future__ import annotations

import importlib
import sys
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from windtunnel_inject import create_app as inject_app

from tests.unit.loopback_runtime import Endpoint, LoopbackMock, LoopbackRuntime, profile_key
from windtunnel._config import SUITE_VERSION
from windtunnel._conformance.checks_config import kit_configs
from windtunnel._conformance.checks_mcp_suite import MCP_SUITE_CHECKS
from windtunnel._conformance.kit import CHECK_IDS, check_by_id, run_check
from windtunnel._conformance.subject import Subject
from windtunnel._conformance.suite import Suite
from windtunnel._conversation.model import DiffKind
from windtunnel._core.vocabulary import CheckStatus
from windtunnel._engine.topology import DEFAULT_MODEL, GATEWAY_URL_FOR_AGENTS, runtime_env
from windtunnel._gateway.app import create_app
from windtunnel._gateway.script import ScriptMode
from windtunnel._mcp.loopback import start_loopback, stop_loopback
from windtunnel._net.server_thread import ServerThread, stop_servers
from windtunnel._packs.loader import kit_pack, media_pack
from windtunnel._runtimes.manifest import load_manifest
from windtunnel.spi.agent_runtime import AgentConfig

REPO = Path(__file__).resolve().parents[2]
RUNTIME_DIR = REPO / "runtimes" / "reference"
SUITE = Suite.load(REPO / "conformance", SUITE_VERSION)


def _fault(runtime: str) -> str | None:
    """The WT_FAULT a poison manifest sets; None for a poison whose fault sits in its driver."""
    manifest = tomllib.loads(
        (RUNTIME_DIR / "poison" / runtime.removeprefix("reference-poison-") / "runtime.toml").read_text()
    )
    fault = manifest.get("env", {}).get("set", {}).get("WT_FAULT")
    return str(fault) if fault and "driver" not in manifest else None


# The reference's poisons that are the runtime's own WT_FAULT branches run here; driver faults need
# containers, and the minimal runtime's poisons run in test_minimal_runtime.
FAULTS = {
    fault: checks
    for name, checks in SUITE.caught_by.items()
    if name.startswith("reference-poison-") and (fault := _fault(name)) is not None
}
CONTAINER_FAULTS = {
    "faults/mcp_gone",
    "faults/silent_restart",
    "faults/oom",
    "faults/disk_full",
    *(f"mcp_client/{name}" for name, _title, _run in MCP_SUITE_CHECKS),
}
"""Faults the harness makes in the runtime's container or its network, and the official MCP suite's client
scenarios (its server is a container on the run network): they run in the conformance suite and in
tests/integration/test_mcp_suite_client.py."""
CHECKS = sorted(
    ({c for checks in FAULTS.values() for c in checks} - CONTAINER_FAULTS)
    | {
        "session_affinity",
        "reference_capability",
        "faults/mcp_late",
        "model_wire",
        "response_shapes",
        "unsupported_config",
    }
)


def _reference_agent(name: str) -> Any:
    if str(RUNTIME_DIR) not in sys.path:
        sys.path.insert(0, str(RUNTIME_DIR))
    return importlib.import_module(f"reference_agent.{name}")


MAX_TOKENS_ONLY = frozenset({"sampling.max_tokens"})


class _Stack:
    """Gateway, mocks and one reference service per profile the kit provisions, with WT_FAULT set."""

    def __init__(self, fault: str | None) -> None:
        manifest = load_manifest(RUNTIME_DIR)
        self.gateway = ServerThread(create_app(ScriptMode(), models=[DEFAULT_MODEL])).start()
        kit = start_loopback(kit_pack().plans())
        media = start_loopback(media_pack().plans())  # the mcp_client checks' tools, default config only
        self.mocks = [*kit, *media]
        self.servers: list[ServerThread] = [self.gateway]
        runtimes = {}
        # ... and the sampling check's configs for a runtime that honours max_tokens alone (declared below)
        configs = [AgentConfig(), *kit_configs(manifest.supported), *kit_configs(MAX_TOKENS_ONLY)]
        profiles = [
            *((mcps, config) for mcps in ([], kit) for config in configs),
            (media, AgentConfig()),
        ]
        for mocks, config in profiles:
            mcps = [Endpoint(m.name, m.url) for m in mocks]
            env = runtime_env(manifest, config, mcps, GATEWAY_URL_FOR_AGENTS)
            local = {**env, "WT_MODEL_BASE_URL": f"{self.gateway.url}/v1", "WT_FAULT": fault or ""}
            settings = _reference_agent("settings").Settings.from_env(local)
            server = ServerThread(
                inject_app(_reference_agent("loop").ReferenceLoop(settings), name="reference")
            ).start()
            self.servers.append(server)
            runtimes[profile_key(env)] = server.url
        self.runtime = LoopbackRuntime(
            manifest,
            gateway=self.gateway.url,
            mocks={
                f"{m.plan.pack}/{m.plan.server}": LoopbackMock(url=m.url, admin=m.admin_url)
                for m in self.mocks
            },
            runtimes=runtimes,
        )

    def close(self) -> None:
        self.runtime.close()
        stop_loopback(self.mocks)
        stop_servers(self.servers)


@pytest.fixture(scope="module")
def stacks() -> Iterator[Callable[[str | None], LoopbackRuntime]]:
    built: dict[str | None, _Stack] = {}

    def get(fault: str | None) -> LoopbackRuntime:
        if fault not in built:
            built[fault] = _Stack(fault)
        return built[fault].runtime

    yield get
    for stack in built.values():
        stack.close()


def _status(runtime: LoopbackRuntime, check: str) -> tuple[CheckStatus, str]:
    manifest = runtime.manifest
    subject = Subject(name="reference", runtime=runtime, supported=manifest.supported, mcp=manifest.mcp)
    result = run_check(check_by_id(check), subject)
    return result.status, result.detail


def test_the_matrix_covers_the_new_poisons() -> None:
    assert {
        "sort_tool_calls",
        "drop_tool_call_ids",
        "ignore_system_prompt",
        "cache_answers_across_reset",
    } <= set(FAULTS)
    assert set(CHECKS) <= set(CHECK_IDS)


@pytest.mark.parametrize("check", CHECKS)
def test_the_reference_runtime_passes(stacks: Callable[[str | None], LoopbackRuntime], check: str) -> None:
    status, detail = _status(stacks(None), check)
    assert status is CheckStatus.PASSED, detail


@pytest.mark.parametrize(
    ("fault", "check"),
    sorted((f, c) for f, checks in FAULTS.items() for c in checks if c not in CONTAINER_FAULTS),
)
def test_each_poison_fails_its_checks(
    stacks: Callable[[str | None], LoopbackRuntime], fault: str, check: str
) -> None:
    status, detail = _status(stacks(fault), check)
    assert status is CheckStatus.FAILED, detail


# A loopback server outlives provisions (Docker starts a fresh container for each), so state a poison keeps
# across reset also reaches the next check's runs here (a repeated prompt, a reused session id): these
# poisons' "only their check" is proven by the Docker conformance suite.
SHARED_SERVICE_LEAKS = {fault for fault, checks in FAULTS.items() if "reset_isolation" in checks}


@pytest.mark.parametrize("fault", sorted(set(FAULTS) - SHARED_SERVICE_LEAKS))
def test_each_poison_passes_the_other_checks(
    stacks: Callable[[str | None], LoopbackRuntime], fault: str
) -> None:
    statuses = {other: _status(stacks(fault), other) for other in CHECKS if other not in FAULTS[fault]}
    wrong = {
        other: detail for other, (status, detail) in statuses.items() if status is not CheckStatus.PASSED
    }
    assert not wrong, wrong


def _result(runtime: LoopbackRuntime, check: str) -> Any:
    return run_check(check_by_id(check), Subject(name="reference", runtime=runtime))


def test_a_check_records_its_sessions_conversations_with_the_views_aligned(
    stacks: Callable[[str | None], LoopbackRuntime],
) -> None:
    result = _result(stacks(None), "tool_call_ids")
    (conversation,) = result.conversations
    assert conversation.title.startswith("tool_call_ids: session ") and conversation.source == "session"
    assert conversation.disagreements == []
    (turn,) = conversation.turns
    assert turn.user == "Read alpha and echo, then store beta." and len(turn.model_calls) == 3
    assert [r.model.name if r.model else None for r in turn.tool_calls] == ["lookup", "echo", "store"]
    assert all(r.mock is not None and r.runtime is not None for r in turn.tool_calls)
    assert (
        turn.tool_calls[0].result_to_model is not None and "first note" in turn.tool_calls[0].result_to_model
    )
    # the scripted run path (Session.run) records its trace's conversation too
    (run,) = _result(stacks(None), "intermediate_tool_calls").conversations
    assert run.source == "trace" and run.disagreements == []


def test_a_poisons_failing_check_names_the_disagreement_in_its_conversation(
    stacks: Callable[[str | None], LoopbackRuntime],
) -> None:
    hidden = _result(stacks("hide_intermediate_tool_calls"), "intermediate_tool_calls")
    assert hidden.status is CheckStatus.FAILED
    (conversation,) = hidden.conversations
    assert [(d.kind, d.text.split(" {")[0]) for d in conversation.disagreements] == [
        (DiffKind.NOT_REPORTED, "the model emitted and the mock received lookup"),
        (DiffKind.NOT_REPORTED, "the model emitted and the mock received store"),
    ]
    assert all(d.text.endswith("but the runtime did not report it") for d in conversation.disagreements)
    ((only,),) = [
        [d.kind for d in c.disagreements]
        for c in _result(stacks("sort_tool_calls"), "raw_tool_call_shapes").conversations
    ]
    assert only is DiffKind.ORDER


SAMPLING_REASONS = {
    "sampling.temperature": "no temperature knob",
    "sampling.top_p": "no top_p knob",
    "sampling.tool_choice": "tool_choice fixed",
}


def _declaring(runtime: Any, supported: frozenset[str], unsupported: dict[str, str]) -> Any:
    """`sampling` run on a subject whose runtime.toml declares `supported` and `unsupported` ([config])."""
    subject = Subject(name="declared", runtime=runtime, supported=supported, unsupported=unsupported)
    return run_check(check_by_id("sampling"), subject)


def test_sampling_fails_a_field_declared_neither_supported_nor_unsupported() -> None:
    # raised before any session: the runtime is never touched
    result = _declaring(object(), frozenset({"sampling.max_tokens"}), {"sampling.top_p": "no knob"})
    assert result.status is CheckStatus.FAILED
    assert (
        "declares sampling.temperature, sampling.tool_choice neither supported nor unsupported"
        in result.detail
    )
    assert '[config] unsupported with the reason it cannot (e.g. unsupported = { "sampling.temperature"' in (
        result.detail
    )


def test_sampling_with_every_field_declared_unsupported_is_info_naming_the_reasons() -> None:
    reasons = {**SAMPLING_REASONS, "sampling.max_tokens": "no max_tokens knob"}
    result = _declaring(object(), frozenset({"system_prompt"}), reasons)
    assert result.status is CheckStatus.INFO
    assert result.detail.startswith("declared not handled ([config] unsupported): sampling.temperature: no ")
    assert result.evidence == {"measured": [], "declared": reasons}


def test_sampling_measures_what_is_supported_then_is_info_for_what_is_declared_unsupported(
    stacks: Callable[[str | None], LoopbackRuntime],
) -> None:
    supported = stacks(None).manifest.supported - set(SAMPLING_REASONS)
    assert (
        supported & {f"sampling.{key}" for key in ("temperature", "top_p", "max_tokens")} == MAX_TOKENS_ONLY
    )
    result = _declaring(stacks(None), supported, SAMPLING_REASONS)
    assert result.status is CheckStatus.INFO, result.detail
    assert "sampling.top_p: no top_p knob" in result.detail and result.evidence["measured"] == ["max_tokens"]
    assert [run["configured"] for run in result.evidence["runs"]] == [
        {"max_tokens": 321},
        {"max_tokens": 321},
        {"max_tokens": 123},
    ]
    # what is measured is still scored: a runtime that drops max_tokens fails, declaration or not
    poisoned = _declaring(stacks("ignore_sampling"), supported, SAMPLING_REASONS)
    assert (
        poisoned.status is CheckStatus.FAILED and "sampling.max_tokens=321 did not reach" in poisoned.detail
    )
