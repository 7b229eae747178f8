"""The official MCP conformance suite's client scenarios against the reference runtime, in containers.

Nothing is stood in for: the suite (@modelcontextprotocol/conformance, its own image with Node 22) runs on the
runtime's run network, the reference runtime's container is fenced to that network, and the model gateway
scripts the calls each scenario needs. The suite's own checks are the verdict.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import pytest

from windtunnel._conformance.checks_mcp_suite import SuiteScenario, run_scenario
from windtunnel._conformance.kit import check_by_id, run_check
from windtunnel._conformance.model import CheckFailed
from windtunnel._conformance.subject import Subject
from windtunnel._core.vocabulary import CheckStatus
from windtunnel._drivers.container_plugin import ContainerRuntimePlugin
from windtunnel._runtimes.manifest import load_manifest
from windtunnel._runtimes.mcp_client import McpClientPolicy

pytestmark = [pytest.mark.docker, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def reference(docker_client: docker.DockerClient, base_image: str, run_label: str) -> Iterator[Any]:
    env = {**os.environ, "WT_BASE_IMAGE": base_image, "WT_SESSION_LABEL": run_label}
    runtime = ContainerRuntimePlugin(load_manifest(REPO / "runtimes" / "reference"), env=env).build(
        "reference", "t", None
    )
    yield runtime
    runtime.close()


def subject_of(runtime: Any) -> Subject:
    return Subject(name="reference", runtime=runtime)


@pytest.mark.parametrize("scenario", ["initialize", "tools_call", "sse-retry"])
def test_the_reference_runtime_passes_the_suites_client_scenario(reference: Any, scenario: str) -> None:
    result = run_check(check_by_id(f"mcp_client/{scenario}"), subject_of(reference))
    assert result.status is CheckStatus.PASSED, (result.detail, result.evidence)
    checks = result.evidence["checks"]
    assert checks and all(check["status"] in {"SUCCESS", "INFO"} for check in checks)
    assert result.evidence["suite_url"].startswith("http://localhost:")  # the suite's own view of its server
    assert result.evidence["server_url"].startswith("http://mcp-suite-")  # the runtime's: the peer's alias
    if scenario == "tools_call":
        (added,) = [check for check in checks if check["id"] == "tool-add-numbers"]
        assert added["details"] == {"a": 2, "b": 3, "result": 5}


def test_the_elicitation_scenario_is_info_unless_accept_is_declared_and_starts_nothing(
    reference: Any,
) -> None:
    # The reference declares elicitation = "refuse" (mcp_client/elicitation judges that): the suite's
    # scenario judges a client that accepts a form, so it is not measured, and no suite peer is started.
    declared = Subject(name="reference", runtime=reference, mcp=McpClientPolicy(elicitation="refuse"))
    result = run_check(check_by_id("mcp_client/elicitation-sep1034-client-defaults"), declared)
    assert result.status is CheckStatus.INFO, (result.detail, result.evidence)
    assert "declares elicitation = 'refuse'" in result.detail and result.evidence["declared"] == "refuse"
    assert not [alias for alias in reference.stack.peer_addresses() if alias.startswith("mcp-suite-")]


def test_an_elicitation_scenario_is_info_for_a_client_that_declares_no_elicitation(reference: Any) -> None:
    # Were "accept" declared, the scenario runs; the reference runtime's MCP client still declares no
    # capabilities in its initialize (its README): the suite's server asks anyway, the client refuses, and
    # the check records that as not measured, never as a verdict.
    accepting = Subject(name="reference", runtime=reference, mcp=McpClientPolicy(elicitation="accept"))
    result = run_check(check_by_id("mcp_client/elicitation-sep1034-client-defaults"), accepting)
    assert result.status is CheckStatus.INFO, (result.detail, result.evidence)
    assert "declares no elicitation capability" in result.detail
    bodies = [check.get("details", {}).get("body") for check in result.evidence["checks"]]
    (initialize,) = [body for body in bodies if isinstance(body, dict) and body.get("method") == "initialize"]
    assert "elicitation" not in initialize["params"]["capabilities"]


def test_a_turn_that_never_calls_the_tool_fails_the_suites_tools_call(reference: Any) -> None:
    lazy = SuiteScenario(name="tools_call", title="no call")  # the model answers without calling add_numbers
    with pytest.raises(CheckFailed) as failed:
        run_scenario(subject_of(reference), lazy)
    assert "FAILURE tool-add-numbers" in failed.value.detail
    assert not [alias for alias in reference.stack.peer_addresses() if alias.startswith("mcp-suite-")]


@pytest.mark.parametrize(
    ("fault", "scenarios"),
    [
        ("old_mcp_protocol_version", ["initialize"]),
        ("accept_json_only", ["tools_call"]),
        ("no_get_streams", ["sse-retry"]),
    ],
)
def test_the_poisons_fail_the_suites_scenarios_named_for_them(
    docker_client: docker.DockerClient, base_image: str, run_label: str, fault: str, scenarios: list[str]
) -> None:
    env = {**os.environ, "WT_BASE_IMAGE": base_image, "WT_SESSION_LABEL": run_label}
    directory = REPO / "runtimes" / "reference" / "poison" / fault
    poison = ContainerRuntimePlugin(load_manifest(directory), env=env).build(
        f"reference-poison-{fault}", "t", None
    )
    try:
        for scenario in scenarios:
            result = run_check(check_by_id(f"mcp_client/{scenario}"), subject_of(poison))
            assert result.status is CheckStatus.FAILED, (scenario, result.detail, result.evidence)
    finally:
        poison.close()
