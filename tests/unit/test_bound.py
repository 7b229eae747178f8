"""The bound driver over real servers on 127.0.0.1: the gateway app, the kit's MCP mocks and the reference
runtime's own app, one per profile, started as another executor would start them."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from windtunnel_inject import create_app as inject_app

from windtunnel._conformance.kit import check_by_id, run_check
from windtunnel._conformance.subject import Subject
from windtunnel._core.vocabulary import CheckStatus
from windtunnel._drivers.bound import BoundMock, BoundReferenceRuntime, BoundStack, load_bound_stacks
from windtunnel._drivers.topology import (
    DEFAULT_MODEL,
    GATEWAY_URL_FOR_AGENTS,
    MockEndpoint,
    mock_url,
    profile_key,
    runtime_env,
)
from windtunnel._gateway.app import create_app
from windtunnel._gateway.client import GatewayClient
from windtunnel._gateway.script import ScriptMode
from windtunnel._mcp.loopback import start_loopback, stop_loopback
from windtunnel._net.server_thread import ServerThread
from windtunnel._packs.loader import kit_pack
from windtunnel._runtimes.manifest import load_manifest
from windtunnel.api import ReferenceCase, ReferenceDecision
from windtunnel.errors import ConfigFileError, HarnessError
from windtunnel.spi.agent_runtime import AgentConfig

REPO = Path(__file__).resolve().parents[2]
RUNTIME_DIR = REPO / "runtimes" / "reference"


def _reference_agent(name: str) -> Any:
    if str(RUNTIME_DIR) not in sys.path:
        sys.path.insert(0, str(RUNTIME_DIR))
    return importlib.import_module(f"reference_agent.{name}")


@pytest.fixture(scope="module")
def bound() -> Iterator[tuple[BoundReferenceRuntime, GatewayClient]]:
    """Gateway, mocks and two runtime profiles (no mocks; the kit's mocks), bound by URL.

    The runtimes are started with the env the plan gives them, except that the gateway alias resolves
    to its loopback address here (the one rewrite a name service would do); the profile key is the
    plan's own.
    """
    manifest = load_manifest(RUNTIME_DIR)
    plans = kit_pack().plans()
    gateway = ServerThread(create_app(ScriptMode(), models=[DEFAULT_MODEL])).start()
    mocks = start_loopback(plans)
    servers, runtimes = [gateway], {}
    for mcps in ([], [MockEndpoint(m.name, m.url) for m in mocks]):
        env = runtime_env(manifest, AgentConfig(), mcps, GATEWAY_URL_FOR_AGENTS)
        settings = _reference_agent("settings").Settings.from_env(
            {**env, "WT_MODEL_BASE_URL": f"{gateway.url}/v1"}
        )
        server = ServerThread(
            inject_app(_reference_agent("loop").ReferenceLoop(settings), name="reference")
        ).start()
        servers.append(server)
        runtimes[profile_key(env)] = server.url
    stack = BoundStack(
        runtime="reference",
        gateway=gateway.url,
        mocks={
            f"{p.pack}/{p.server}": BoundMock(url=m.url, admin=m.admin_url)
            for p, m in zip(plans, mocks, strict=True)
        },
        runtimes=runtimes,
        images={"runtime:reference": "sha256:" + "0" * 64},
    )
    runtime = BoundReferenceRuntime(manifest, stack, timeout_s=30.0)
    client = GatewayClient(gateway.url)
    try:
        yield runtime, client
    finally:
        runtime.close()
        client.close()
        stop_loopback(mocks)
        for server in servers:
            server.stop()


@pytest.mark.parametrize(
    "check",
    [
        "intermediate_tool_calls",
        "raw_tool_call_shapes",
        "session_affinity",
        "reference_capability",
        "teardown",
    ],
)
def test_conformance_checks_pass_on_the_bound_reference_runtime(
    bound: tuple[BoundReferenceRuntime, GatewayClient], check: str
) -> None:
    runtime, _ = bound
    subject = Subject(name="reference", runtime=runtime, supported=runtime.manifest.supported)
    result = run_check(check_by_id(check), subject)
    assert result.status is CheckStatus.PASSED, result.detail


@pytest.mark.parametrize(("check", "reason"), [("recovery", "kill()"), ("egress_closed", "egress probe")])
def test_what_a_bound_runtime_cannot_do_is_not_measured(
    bound: tuple[BoundReferenceRuntime, GatewayClient], check: str, reason: str
) -> None:
    runtime, _ = bound
    subject = Subject(name="reference", runtime=runtime, supported=runtime.manifest.supported)
    result = run_check(check_by_id(check), subject)
    assert result.status is CheckStatus.NOT_MEASURED and reason in result.detail


def test_teardown_clears_the_script_and_keeps_the_service(
    bound: tuple[BoundReferenceRuntime, GatewayClient],
) -> None:
    runtime, gateway = bound
    case = ReferenceCase(name="hello", kind="golden", decisions=(ReferenceDecision(content="Hi."),))
    handle = runtime.provision_reference(AgentConfig(), case, [])
    handle.reset_state()
    assert (
        handle.send([{"role": "user", "content": "Say hi."}], "s-1")["choices"][0]["message"]["content"]
        == "Hi."
    )
    assert [r["messages"][-1]["content"] for r in handle.model_requests()] == ["Say hi."]
    assert gateway.scripts()["global"] is not None
    handle.teardown()
    handle.teardown()
    assert gateway.scripts()["global"] is None
    again = runtime.provision(AgentConfig(), [])
    again.reset_state()  # the same running service answers the next provision after a wipe
    again.teardown()


def test_a_provision_no_profile_foresaw_fails_loudly(
    bound: tuple[BoundReferenceRuntime, GatewayClient],
) -> None:
    runtime, _ = bound
    with pytest.raises(HarnessError, match="no running service was started with the env") as raised:
        runtime.provision(AgentConfig(system_prompt="Something else."), [])
    assert "WT_SYSTEM_PROMPT" in str(raised.value)


def test_mocks_are_the_bound_ones_reset_per_start(bound: tuple[BoundReferenceRuntime, GatewayClient]) -> None:
    runtime, _ = bound
    (plan,) = kit_pack().plans()
    (handle,) = runtime.start_mcps([plan])
    assert handle.url == runtime.stack.mocks[f"{plan.pack}/{plan.server}"].url
    assert handle.url != mock_url(plan.pack, plan.server)  # this stack binds loopback URLs, not aliases
    missing = type(plan)(pack="nope", server="x", factory=plan.factory)
    with pytest.raises(HarnessError, match="no bound MCP mock 'nope/x'"):
        runtime.start_mcps([missing])


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("{", "<document>"),
        ("{}", "stacks"),
        (json.dumps({"stacks": {"r": {"gateway": "http://g", "runtimes": {}}}}), "stacks.r.runtimes"),
        (json.dumps({"stacks": {"r": {"runtimes": {"k": "http://r"}}}}), "stacks.r.gateway"),
        (
            json.dumps({"stacks": {"r": {"gateway": "g", "runtimes": {"k": "u"}, "mocks": {"p/s": {}}}}}),
            "stacks.r.mocks",
        ),
    ],
)
def test_a_bad_bound_document_names_its_field(text: str, field: str) -> None:
    with pytest.raises(ConfigFileError) as raised:
        load_bound_stacks(text)
    assert raised.value.field == field  # type: ignore[attr-defined]
