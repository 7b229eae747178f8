"""The public doors: the authoring example of docs/selftests.md runs verbatim, and __all__ of api/spi/errors is frozen."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

import windtunnel.api
import windtunnel.errors
import windtunnel.spi
import windtunnel.testing

REPO = Path(__file__).resolve().parents[2]


def authoring_example() -> str:
    """The Python block of docs/selftests.md, "Authoring rules": the public authoring contract."""
    text = (REPO / "docs" / "selftests.md").read_text(encoding="utf-8")
    blocks: list[str] = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    assert len(blocks) == 1, "docs/selftests.md holds one Python example"
    return blocks[0]


def test_the_authoring_example_runs_verbatim() -> None:
    namespace: dict[str, Any] = {}
    exec(authoring_example(), namespace)  # the repository's own documentation
    scenario = namespace["scenario"]
    assert [case.name for case in scenario.goldens] == ["known-good"]
    assert [case.name for case in scenario.poisons] == ["unsafe-write"]
    assert scenario.target_facts == (("artifact complete",),)


def test_spi_import_paths() -> None:
    from windtunnel.spi import AgentConfig, ReferenceCase  # noqa: F401
    from windtunnel.spi.agent_runtime import AgentConfig as Config
    from windtunnel.spi.runtime_plugin import RuntimePlugin  # noqa: F401

    assert Config is AgentConfig


API = [
    "Scenario",
    "ReferenceCase",
    "ReferenceDecision",
    "ReferenceToolCall",
    "Expect",
    "Outcome",
    "Security",
    "Benchmark",
    "StateExpectation",
    "Source",
    "Precondition",
    "PreconditionContext",
    "StateProbeAvailable",
    "Pack",
    "AgentSetup",
    "Tool",
    "MockServer",
    "ToolError",
    "ToolDenied",
    "ToolResult",
    "Text",
    "Image",
    "Audio",
    "EmbeddedResource",
    "ResourceLink",
    "Progress",
    "Log",
    "Elicit",
    "Sample",
    "CloseStream",
    "Reply",
    "Resource",
    "ResourceTemplate",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "mock_state_probe",
    "load_pack",
    "run_scenario",
    "run_reference_case",
    "run_reset_canary",
    "CanaryResult",
    "score_trace",
    "RunResult",
    "Trace",
    "Turn",
    "TraceError",
    "Score",
    "ScoreStatus",
    "CheckResult",
    "TapeExchange",
    "build_tape",
    "TapeReplay",
    "TapeReply",
]
SPI = [
    "AgentConfig",
    "AgentHandle",
    "AgentRuntime",
    "MCPHandle",
    "MCPHostingAgentRuntime",
    "MCPSpec",
    "Message",
    "MockServerPlan",
    "ModelEvidenceHandle",
    "ModelSpec",
    "RecordingMCPHandle",
    "ReferenceCapableAgentRuntime",
    "ReferenceCase",
    "ReferenceDecision",
    "ReferenceToolCall",
    "Response",
    "RuntimePlugin",
    "SamplingConfig",
    "StateProbe",
    "ClosableRuntime",
    "ContainerListingRuntime",
    "EgressAttempt",
    "EgressProbingRuntime",
    "EgressReport",
    "ImageDigestsRuntime",
    "KillableHandle",
    "ReachAttempt",
    "ReachRecordingRuntime",
    "StateProbingRuntime",
    "ToolListingMCPHandle",
    "LockKeyPlugin",
    "ModelLabelPlugin",
    "PostRunPlugin",
    "PreRunPlugin",
    "container_plugin",
]
TESTING = [
    "WindTunnelStack",
    "GatewayContainer",
    "McpMockContainer",
    "RuntimeContainer",
    "ScriptedModel",
    "Reply",
    "GatewaySpec",
    "PlannedContainer",
    "ProjectNetwork",
    "ServiceReady",
]
SPI_MODULES = {
    "agent_runtime": [
        "AgentConfig",
        "AgentHandle",
        "AgentRuntime",
        "MCPHandle",
        "MCPHostingAgentRuntime",
        "MCPSpec",
        "Message",
        "MockServerPlan",
        "ModelEvidenceHandle",
        "ModelSpec",
        "RecordingMCPHandle",
        "ReferenceCapableAgentRuntime",
        "Response",
        "SamplingConfig",
        "StateProbe",
    ],
    "abilities": [
        "ClosableRuntime",
        "ContainerListingRuntime",
        "EgressAttempt",
        "EgressProbingRuntime",
        "EgressReport",
        "ImageDigestsRuntime",
        "KillableHandle",
        "ReachAttempt",
        "ReachRecordingRuntime",
        "StateProbingRuntime",
        "ToolListingMCPHandle",
    ],
    "runtime_plugin": [
        "RuntimePlugin",
        "LockKeyPlugin",
        "ModelLabelPlugin",
        "PreRunPlugin",
        "PostRunPlugin",
        "PLUGIN_OPTIONAL_HOOKS",
    ],
}
ERRORS = [
    "WindTunnelError",
    "UsageError",
    "ScenarioError",
    "PackError",
    "SelectionError",
    "ConfigFileError",
    "PluginError",
    "UnknownRuntimeError",
    "UnsupportedConfigError",
    "RuntimeFault",
    "EnvelopeError",
    "ResetFailedError",
    "RuntimeTimeoutError",
    "RuntimeUnavailableError",
    "IntegrityError",
    "ProbeError",
    "GatewayError",
    "TapeError",
    "HarnessError",
    "EngineUnavailableError",
    "VerificationError",
]


def test_public_all_is_frozen() -> None:
    """Adding or removing a public name is an API change: update this list on purpose."""
    assert sorted(windtunnel.api.__all__) == sorted(API)
    assert sorted(windtunnel.spi.__all__) == sorted(SPI)
    assert sorted(windtunnel.errors.__all__) == sorted(ERRORS)
    assert sorted(windtunnel.testing.__all__) == sorted(TESTING)
    for module, names in SPI_MODULES.items():  # the import paths docs/writing-a-runtime.md names
        assert sorted(importlib.import_module(f"windtunnel.spi.{module}").__all__) == sorted(names), module


def test_public_names_resolve_and_show_public_module() -> None:
    for door in (windtunnel.api, windtunnel.spi, windtunnel.testing):
        for name in door.__all__:
            value = getattr(door, name)
            lazy = name == "container_plugin"  # the container driver's own, imported on first use
            if (isinstance(value, type) or callable(value)) and not lazy:
                assert not value.__module__.startswith("windtunnel._"), name
    assert repr(windtunnel.errors.PackError("x")).startswith("PackError")
    assert windtunnel.errors.PackError.__module__ == "windtunnel.errors"


def test_errors_share_one_root_and_carry_context() -> None:
    for name in windtunnel.errors.__all__:
        assert issubclass(getattr(windtunnel.errors, name), windtunnel.errors.WindTunnelError)
    error = windtunnel.errors.ScenarioError("bad", hint="fix it", scenario="s", case="c", decision_index=2)
    assert (error.scenario, error.case, error.decision_index) == ("s", "c", 2)  # type: ignore[attr-defined]
    assert "how to fix: fix it" in str(error)
