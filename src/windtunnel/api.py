"""The door for scenario authors and callers: scenarios, packs, mocks, and the functions that run them."""

from windtunnel._canary.canary import CanaryResult, run_reset_canary
from windtunnel._core.doors import publish
from windtunnel._core.mock_kit import MockServer, Tool, ToolDenied, ToolError
from windtunnel._core.mock_steps import CloseStream, Elicit, Log, Progress, Reply, Sample
from windtunnel._core.mock_surface import (
    Audio,
    EmbeddedResource,
    Image,
    Prompt,
    PromptArgument,
    PromptMessage,
    Resource,
    ResourceLink,
    ResourceTemplate,
    Text,
    ToolResult,
)
from windtunnel._core.reference import ReferenceCase, ReferenceDecision, ReferenceToolCall
from windtunnel._packs.loader import load_pack
from windtunnel._packs.pack import AgentSetup, Pack, mock_state_probe
from windtunnel._runner.execute import RunResult
from windtunnel._runner.library import run_reference_case, run_scenario
from windtunnel._scenario.expectations import Benchmark, Expect, Outcome, Security, StateExpectation
from windtunnel._scenario.model import Scenario
from windtunnel._scenario.preconditions import Precondition, PreconditionContext, StateProbeAvailable
from windtunnel._scenario.sources import Source
from windtunnel._score.gates import score_trace
from windtunnel._score.models import CheckResult, Score, ScoreStatus
from windtunnel._tapes.inprocess import TapeExchange, TapeReplay, TapeReply, build_tape
from windtunnel._trace.models import Trace, TraceError, Turn

__all__ = [
    # authoring
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
    # packs and mocks
    "Pack",
    "AgentSetup",
    "Tool",
    "MockServer",
    "ToolError",
    "ToolDenied",
    # what a mock may serve beyond JSON tools (docs/design.md, "MCP mocks")
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
    # running and results
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
    # tapes in this process (the gateway's record and replay code, without the server)
    "TapeExchange",
    "build_tape",
    "TapeReplay",
    "TapeReply",
]


publish(__name__, globals(), __all__)
