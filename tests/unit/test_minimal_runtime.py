"""The `minimal` control runtime (runtimes/minimal: Contract C's required parts only, standard library only)
on 127.0.0.1 with the real gateway app and the kit's MCP mocks, bound by URL: it passes the checks of the
three views, tool errors and the final answer, and what it leaves out (usage) is INFO, never a failure.
The Docker conformance suite runs it in its container against every check."""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from windtunnel._conformance.checks_config import kit_configs
from windtunnel._conformance.kit import check_by_id, run_check
from windtunnel._conformance.subject import Subject
from windtunnel._core.vocabulary import CheckStatus
from windtunnel._drivers.bound import BoundMock, BoundReferenceRuntime, BoundStack
from windtunnel._drivers.topology import (
    DEFAULT_MODEL,
    GATEWAY_URL_FOR_AGENTS,
    MockEndpoint,
    profile_key,
    runtime_env,
)
from windtunnel._gateway.app import create_app
from windtunnel._gateway.script import ScriptMode
from windtunnel._mcp.loopback import start_loopback, stop_loopback
from windtunnel._net.server_thread import ServerThread
from windtunnel._packs.loader import kit_pack
from windtunnel._runtimes.manifest import load_manifest
from windtunnel.spi.agent_runtime import AgentConfig

RUNTIME_DIR = Path(__file__).resolve().parents[2] / "runtimes" / "minimal"


def _minimal(module: str) -> Any:
    if str(RUNTIME_DIR) not in sys.path:
        sys.path.insert(0, str(RUNTIME_DIR))
    return importlib.import_module(f"minimal_agent.{module}")


@pytest.fixture(scope="module")
def subject() -> Iterator[Subject]:
    manifest = load_manifest(RUNTIME_DIR)
    gateway = ServerThread(create_app(ScriptMode(), models=[DEFAULT_MODEL])).start()
    mocks = start_loopback(kit_pack().plans())
    servers, runtimes = [], {}
    for endpoints in ([], [MockEndpoint(m.name, m.url) for m in mocks]):
        for config in [AgentConfig(), *kit_configs(manifest.supported)]:
            env = runtime_env(manifest, config, endpoints, GATEWAY_URL_FOR_AGENTS)
            agent = _minimal("agent").Agent({**env, "WT_MODEL_BASE_URL": f"{gateway.url}/v1"})
            server = _minimal("server").make_server(agent, "127.0.0.1", 0)
            threading.Thread(target=server.serve_forever, daemon=True).start()
            servers.append(server)
            runtimes[profile_key(env)] = f"http://127.0.0.1:{server.server_address[1]}"
    stack = BoundStack(
        runtime="minimal",
        gateway=gateway.url,
        mocks={f"{m.plan.pack}/{m.plan.server}": BoundMock(url=m.url, admin=m.admin_url) for m in mocks},
        runtimes=runtimes,
        images={},
    )
    runtime = BoundReferenceRuntime(manifest, stack, timeout_s=30.0)
    yield Subject(name="minimal", runtime=runtime, supported=manifest.supported, manifest="runtimes/minimal")
    runtime.close()
    for server in servers:
        server.shutdown()
        server.server_close()
    stop_loopback(mocks)
    gateway.stop()


@pytest.mark.parametrize(
    "check",
    [
        "three_views_agree",
        "tool_errors",
        "final_answer",
        "tool_results_reach_model",
        "raw_tool_call_shapes",
        "intermediate_tool_calls",
        "session_affinity",
        "sampling",
    ],
)
def test_the_minimal_runtime_passes(subject: Subject, check: str) -> None:
    result = run_check(check_by_id(check), subject)
    assert result.status is CheckStatus.PASSED, result.detail


def test_usage_it_does_not_report_is_info_never_a_failure(subject: Subject) -> None:
    result = run_check(check_by_id("rendered_prompt_and_usage"), subject)
    assert result.status is CheckStatus.INFO, result.detail
    assert "usage not reported: unknown" in result.detail and result.evidence["rendered_prompt_hash"]


def test_a_runtime_declaring_no_sampling_field_fails_naming_the_line_to_add(subject: Subject) -> None:
    undeclared = Subject(
        name="minimal",
        runtime=subject.runtime,
        supported=frozenset({"mcp_servers"}),
        manifest="x/runtime.toml",
    )
    result = run_check(check_by_id("sampling"), undeclared)
    assert result.status is CheckStatus.FAILED
    assert 'in x/runtime.toml, e.g. [config] supported = [..., "sampling.temperature"' in result.detail
