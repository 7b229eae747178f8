"""The official MCP conformance suite's client scenarios against a runtime's MCP client, through its agent loop
(`mcp_client/<scenario>`; docs/conformance.md, "The official suite's client scenarios").

The suite starts its scenario's test server (a peer container on the runtime's run network,
windtunnel._engine.mcp_suite); Wind Tunnel provisions the runtime with that one server in WT_MCP_SERVERS and
scripts the model to make the calls the scenario needs (its tool names are the suite's); the suite then judges
the traffic its server saw. Its checks are the verdict: any FAILURE or WARNING fails, and so does a scenario
whose server saw nothing it could count as a success.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from windtunnel._conformance.model import CheckFailed, NotMeasured, OptionalAbsent
from windtunnel._conformance.subject import Subject, call, say, tools
from windtunnel._core.abilities import McpSuiteHostingRuntime, SuiteOutcome, has_ability
from windtunnel._core.reference import ReferenceDecision
from windtunnel._engine.npm_packs import NpmPackError

DONE = "wt-mcp-suite-done"
CLIENT_TIMEOUT_S = 120.0  # how long the suite waits for its client command (the agent's turn) to judge
NOT_PASSING = frozenset({"FAILURE", "WARNING"})  # what the suite itself counts against a client
LOG_LINES = 40  # the last lines of the suite's log kept in the evidence


@dataclass(frozen=True, slots=True, kw_only=True)
class SuiteScenario:
    """A client scenario of the suite: the one tool of its server the scripted model calls before it answers."""

    name: str
    title: str
    tool: str | None = None
    """The suite's tool the model calls once, with `arguments`; None: the model only answers."""
    arguments: Mapping[str, Any] = field(default_factory=dict)
    capability: str | None = None
    """The client capability the scenario needs: a client whose `initialize` does not declare it is INFO,
    not measured (its runtime does not offer the feature), never PASSED or FAILED."""
    elicitation: str | None = None
    """The `[mcp] elicitation` answer the scenario judges: a runtime that declares another answer (or none)
    is INFO before anything starts; `mcp_client/elicitation` judges what it does declare."""

    @property
    def decisions(self) -> tuple[ReferenceDecision, ...]:
        if self.tool is None:
            return (say(DONE),)
        return (tools(call(self.tool, **self.arguments)), say(DONE))

    @property
    def prompt(self) -> str:
        return "Reply with one word." if self.tool is None else f"Use the {self.tool} tool, then answer."


SCENARIOS = (
    SuiteScenario(
        name="initialize",
        title="the suite's initialize scenario: the runtime's MCP client initializes with its server",
    ),
    SuiteScenario(
        name="tools_call",
        title="the suite's tools_call scenario: the model's add_numbers call reaches its server",
        tool="add_numbers",
        arguments={"a": 2, "b": 3},
    ),
    SuiteScenario(
        name="elicitation-sep1034-client-defaults",
        title="the suite's elicitation-sep1034-client-defaults scenario: an elicitation during a tool call is "
        "accepted with the requested schema's defaults",
        tool="test_client_elicitation_defaults",
        capability="elicitation",
        elicitation="accept",
    ),
    SuiteScenario(
        name="sse-retry",
        title="the suite's sse-retry scenario: a tool call's SSE stream closed early is resumed after its "
        "retry delay",
        tool="test_reconnection",
    ),
)


def suite_check(scenario: SuiteScenario) -> Any:
    """The check function of one client scenario."""

    def run(subject: Subject) -> dict[str, Any]:
        return run_scenario(subject, scenario)

    run.__doc__ = f"mcp_client/{scenario.name}: {scenario.title}."
    return run


def run_scenario(subject: Subject, scenario: SuiteScenario) -> dict[str, Any]:
    """Start the suite's scenario, drive one scripted turn of the runtime against its server, and judge."""
    if scenario.elicitation is not None and subject.mcp.elicitation != scenario.elicitation:
        declared = subject.mcp.elicitation
        raise OptionalAbsent(
            f"the scenario judges a client that answers a form with {scenario.elicitation!r}; this runtime "
            f"declares {f'elicitation = {declared!r}' if declared else 'no elicitation answer'} ([mcp] in "
            "runtime.toml), which mcp_client/elicitation judges: not measured",
            {"declared": declared},
        )
    runtime = subject.reference()
    if not has_ability(runtime, McpSuiteHostingRuntime):
        raise NotMeasured(
            f"{subject.name} runs no containers on a run network, so the conformance suite's server cannot be "
            "put where its MCP client reaches it"
        )
    try:
        started = runtime.start_mcp_suite(scenario.name, client_timeout_s=CLIENT_TIMEOUT_S)
    except NpmPackError as missing:  # no npm on this host, or no registry: the suite cannot be installed
        raise NotMeasured(
            f"the MCP conformance suite could not be installed: {missing.message} ({missing.hint})"
        ) from missing
    try:
        with subject.scripted(
            scenario.decisions, name=f"mcp_client-{scenario.name}", servers=[started.server]
        ) as session:
            session.turn(scenario.prompt, f"wt-kit-suite-{scenario.name}")
        # After the session's teardown: the runtime's MCP client is gone, so the suite sees all it will see.
        outcome = started.finish()
    finally:
        started.close()
    evidence = suite_evidence(outcome, started.server.url)
    if scenario.capability is not None and undeclared(outcome.checks, scenario.capability):
        raise OptionalAbsent(
            f"its MCP client declares no {scenario.capability} capability (initialize): not measured",
            evidence,
        )
    problem = verdict(outcome.checks)
    if problem:
        raise CheckFailed(f"the MCP conformance suite's {scenario.name} scenario: {problem}", evidence)
    return evidence


def undeclared(checks: list[dict[str, Any]], capability: str) -> bool:
    """The client's initialize, as the suite's server logged it, declares no `capability` (MCP clients
    declare theirs in `initialize`: a server may use only those)."""
    for check in checks:
        details = check.get("details")
        body = details.get("body") if isinstance(details, dict) else None
        if isinstance(body, dict) and body.get("method") == "initialize":
            params = body.get("params")
            capabilities = params.get("capabilities") if isinstance(params, dict) else None
            return not (isinstance(capabilities, dict) and capability in capabilities)
    return False  # no initialize seen: the verdict says the runtime never reached the server


def verdict(checks: list[dict[str, Any]]) -> str | None:
    """Why the suite's checks fail the client, or None: no FAILURE or WARNING, and at least one SUCCESS (a
    server that saw nothing records no check, and the suite would call that a pass)."""
    failing = [check for check in checks if check.get("status") in NOT_PASSING]
    if failing:
        return "; ".join(
            f"{check.get('status')} {check.get('id')}: {check.get('errorMessage') or check.get('description')}"
            for check in failing
        )
    if not any(check.get("status") == "SUCCESS" for check in checks):
        return "its server saw no request it could count (no check succeeded): the runtime never reached it"
    return None


def suite_evidence(outcome: SuiteOutcome, server_url: str) -> dict[str, Any]:
    """The suite's checks as it wrote them, the last lines of its log, and where the runtime was pointed."""
    return {
        "scenario": outcome.scenario,
        "checks": [
            {key: check[key] for key in ("id", "status", "errorMessage", "details") if key in check}
            for check in outcome.checks
        ],
        "suite_log": outcome.log.strip().splitlines()[-LOG_LINES:],
        "suite_url": outcome.suite_url,
        "server_url": server_url,
    }


MCP_SUITE_CHECKS = tuple((scenario.name, scenario.title, suite_check(scenario)) for scenario in SCENARIOS)
