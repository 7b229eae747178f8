"""The `minimal` control runtime (runtimes/minimal: Contract C's required parts only, standard library only)
on 127.0.0.1 with the real gateway app and the kit's MCP mocks, bound by URL: it passes the checks of the
three views, tool errors and the final answer, and what it leaves out (usage) is INFO, never a failure.
The Docker conformance suite runs it in its container against every check."""

from __future__ import annotations

import dataclasses
import importlib
import json
import re
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from windtunnel._conformance.checks_mcp_suite import MCP_SUITE_CHECKS
from windtunnel._conformance.kit import CHECK_IDS, check_by_id, run_check
from windtunnel._conformance.subject import Subject
from windtunnel._conformance.suite import Suite
from windtunnel._core.vocabulary import CheckStatus
from windtunnel._drivers.http_inject import HttpInjectHandle
from windtunnel._engine.topology import DEFAULT_MODEL, GATEWAY_URL_FOR_AGENTS, runtime_env
from windtunnel._gateway.app import create_app
from windtunnel._gateway.client import GatewayClient, LogCursor, start_scripted
from windtunnel._gateway.script import ScriptMode
from windtunnel._mcp.loopback import start_loopback, stop_loopback
from windtunnel._net.server_thread import ServerThread
from windtunnel._packs.loader import kit_pack, media_pack
from windtunnel._runtimes.config_fields import refuse_fields
from windtunnel._runtimes.fault_policy import FaultPolicy
from windtunnel._runtimes.manifest import RuntimeManifest, load_manifest
from windtunnel.spi import AgentConfig, MCPHandle, Message, MockServerPlan, ReferenceCase, Response

RUNTIMES = Path(__file__).resolve().parents[2] / "runtimes"
RUNTIME_DIR = RUNTIMES / "minimal"
WIRES = ("minimal", "minimal-messages", "minimal-responses")
"""The control runtime in each model wire: one agent loop, WT_MODEL_WIRE picks chat, messages or responses."""


def _minimal(module: str) -> Any:
    if str(RUNTIME_DIR) not in sys.path:
        sys.path.insert(0, str(RUNTIME_DIR))
    return importlib.import_module(f"minimal_agent.{module}")


class LoopbackHandle:
    """Contract C to one minimal server; the in-process gateway's log is the model evidence."""

    def __init__(self, runtime: LoopbackMinimal, url: str) -> None:
        self.runtime = runtime
        self.inject = HttpInjectHandle(url, 30.0, runtime="minimal")
        self.cursor = LogCursor(runtime.gateway.next_index())

    def send(self, messages: list[Message], session_id: str) -> Response:
        return self.inject.send(messages, session_id)

    def reset_state(self) -> None:
        self.inject.reset_state()

    def model_requests(self) -> list[dict[str, Any]]:
        return self.cursor.read(self.runtime.gateway)

    def teardown(self) -> None:
        self.inject.teardown()
        self.runtime.gateway.clear_script()


class LoopbackMinimal:
    """runtimes/minimal on 127.0.0.1, one server per distinct env, the env computed by the container
    driver's own runtime_env(); the kit's mocks on loopback; the real gateway app in script mode."""

    def __init__(self, manifest: RuntimeManifest, gateway_url: str, mocks: Sequence[Any]) -> None:
        self.manifest = manifest
        self.gateway = GatewayClient(gateway_url)
        self.mocks = {(m.plan.pack, m.plan.server): m for m in mocks}
        self.servers: dict[str, Any] = {}

    def start_mcps(self, plans: Sequence[MockServerPlan]) -> list[MCPHandle]:
        handles = [self.mocks[(plan.pack, plan.server)] for plan in plans]
        for handle in handles:
            handle.reset()
        return handles

    def stop_mcps(self, handles: Sequence[MCPHandle]) -> None:
        return None

    def provision(self, config: AgentConfig, mcps: list[MCPHandle] | None = None) -> LoopbackHandle:
        refuse_fields(config, self.manifest.supported, self.manifest.name)
        env = runtime_env(self.manifest, config, mcps or [], GATEWAY_URL_FOR_AGENTS)
        key = json.dumps(env, sort_keys=True)
        if key not in self.servers:
            urls = {
                "WT_MODEL_BASE_URL": f"{self.gateway.base_url}/v1",
                "WT_MODEL_ROOT_URL": self.gateway.base_url,
            }
            agent = _minimal("agent").Agent({**env, **urls})
            server = _minimal("server").make_server(agent, "127.0.0.1", 0)
            threading.Thread(target=server.serve_forever, daemon=True).start()
            self.servers[key] = server
        return LoopbackHandle(self, f"http://127.0.0.1:{self.servers[key].server_address[1]}")

    def provision_reference(
        self, config: AgentConfig, case: ReferenceCase, mcps: list[MCPHandle] | None = None
    ) -> LoopbackHandle:
        return start_scripted(self.gateway, case, partial(self.provision, config, mcps))

    def close(self) -> None:
        for server in self.servers.values():
            server.shutdown()
            server.server_close()
        self.gateway.close()


@contextmanager
def loopback_subject(directory: str) -> Iterator[Subject]:
    """The runtime of runtimes/<directory> on loopback, with the real gateway app and the kit's mocks."""
    manifest = load_manifest(RUNTIMES / directory)
    gateway = ServerThread(create_app(ScriptMode(), models=[DEFAULT_MODEL])).start()
    mocks = start_loopback([*kit_pack().plans(), *media_pack().plans()])
    runtime = LoopbackMinimal(manifest, gateway.url, mocks)
    yield Subject(
        name=manifest.name,
        runtime=runtime,
        supported=manifest.supported,
        manifest=f"runtimes/{directory}",
        wire=manifest.wire,
        mcp=manifest.mcp,
    )
    runtime.close()
    stop_loopback(mocks)
    gateway.stop()


@pytest.fixture(scope="module", params=WIRES)
def subject(request: pytest.FixtureRequest) -> Iterator[Subject]:
    with loopback_subject(request.param) as found:
        yield found


LOOPBACK_CHECKS = (
    "three_views_agree",
    "tool_errors",
    "final_answer",
    "tool_results_reach_model",
    "long_tool_results",
    "session_attribution",
    "raw_tool_call_shapes",
    "intermediate_tool_calls",
    "session_affinity",
    "sampling",
    "tool_call_ids",
    "config_reaches_model",
    "model_wire",
    "reset_isolation",
)
"""The checks a loopback runtime can take (the rest need its container: recovery, egress, ...)."""


@pytest.mark.parametrize("check", LOOPBACK_CHECKS)
def test_the_minimal_runtime_passes(subject: Subject, check: str) -> None:
    result = run_check(check_by_id(check), subject)
    assert result.status is CheckStatus.PASSED, result.detail


def test_session_attribution_compares_the_report_with_what_the_gateway_and_the_mocks_served(
    subject: Subject,
) -> None:
    # The minimal runtime sends X-WT-Session on its model calls and its tools/calls: both recorders file
    # each call under a session, and each session's reported turn is compared with them, in every phase.
    result = run_check(check_by_id("session_attribution"), subject)
    views = result.evidence["reported_against_recorded"]
    assert sorted({(view["recorder"], view["problem"]) for view in views}) == [
        ("gateway", None),
        ("mocks", None),
    ]
    # The gateway for each of the four turns (two in parallel, then one each after the reset); the mocks for
    # the two parallel turns, the only ones that call a tool.
    assert len(views) == 6
    shown = [f.text for c in result.conversations for f in c.findings if "mocks served" in f.text]
    assert shown, "the comparison shows in the conversation view"


def test_a_stale_session_header_fails_by_what_the_gateway_and_the_mocks_recorded_too() -> None:
    # The first session's header on every later call: the attribution of each call fails, and so does the
    # comparison of each session's reported turn with the calls the gateway filed under it.
    manifest = load_manifest(RUNTIMES / "minimal")
    stale = dataclasses.replace(manifest, env_set={"WT_FAULT": "stale_session_header"})
    gateway = ServerThread(create_app(ScriptMode(), models=[DEFAULT_MODEL])).start()
    mocks = start_loopback([*kit_pack().plans(), *media_pack().plans()])
    runtime = LoopbackMinimal(stale, gateway.url, mocks)
    try:
        subject = Subject(name="stale", runtime=runtime, supported=stale.supported, wire=stale.wire)
        result = run_check(check_by_id("session_attribution"), subject)
    finally:
        runtime.close()
        stop_loopback(mocks)
        gateway.stop()
    assert result.status is CheckStatus.FAILED, result.detail
    assert "carried X-WT-Session" in result.detail  # the attribution of a call to the turn it served
    assert "gateway served no model call for it" in result.detail  # the report against the gateway's record
    wrong = {view["recorder"] for view in result.evidence["reported_against_recorded"] if view["problem"]}
    views = result.evidence["reported_against_recorded"]
    assert "gateway" in wrong and "served no model call for it" in str(views), views
    # The mocks filed every tools/call under the first session: a later session that reported a tool call
    # differs from them too (which session's turn ran the tool depends on how the turns interleaved).
    misfiled = {view["session"] for view in views if view["recorder"] == "gateway" and view["problem"]}
    for view in views:
        if view["recorder"] == "mocks" and view["session"] in misfiled:
            assert (view["problem"] is None) == ("reported 0 tool call(s)" in view["text"]), view


CONTAINER_FAULTS = {"faults/mcp_gone", "faults/silent_restart", "faults/oom", "faults/disk_full"}
"""Faults the harness makes in the runtime's container or its network: they run in the conformance suite."""


@pytest.mark.parametrize(
    "check",
    [
        check
        for check in CHECK_IDS
        if check.startswith("faults/") and check not in {"faults/model_slow", *CONTAINER_FAULTS}
    ],
)
def test_the_minimal_runtime_passes_the_fault_checks(subject: Subject, check: str) -> None:
    """No [faults] table: no retries, so every model fault must end the turn reported failed."""
    result = run_check(check_by_id(check), subject)
    assert result.status is CheckStatus.PASSED, result.detail


def test_a_turn_deadline_is_info_when_undeclared_and_fails_when_declared_but_not_kept(
    subject: Subject,
) -> None:
    assert run_check(check_by_id("faults/model_slow"), subject).status is CheckStatus.INFO
    claims = dataclasses.replace(subject, faults=FaultPolicy(turn_deadline_s=1.0))  # it keeps none
    result = run_check(check_by_id("faults/model_slow"), claims)
    assert result.status is CheckStatus.FAILED and "reported the late answer" in result.detail, result.detail
    declared = dataclasses.replace(subject, faults=FaultPolicy(unhandled={"model_slow": "no deadline"}))
    assert run_check(check_by_id("faults/model_slow"), declared).status is CheckStatus.INFO


def test_usage_it_does_not_report_is_info_never_a_failure(subject: Subject) -> None:
    result = run_check(check_by_id("rendered_prompt_and_usage"), subject)
    assert result.status is CheckStatus.INFO, result.detail
    assert "usage not reported: unknown" in result.detail and result.evidence["rendered_prompt_hash"]


def test_a_runtime_declaring_no_sampling_field_either_way_fails_naming_the_lines_to_add(
    subject: Subject,
) -> None:
    undeclared = Subject(
        name="minimal",
        runtime=subject.runtime,
        supported=frozenset({"mcp_servers"}),
        manifest="x/runtime.toml",
    )
    result = run_check(check_by_id("sampling"), undeclared)
    assert result.status is CheckStatus.FAILED
    assert (
        "declares sampling.temperature, sampling.top_p, sampling.max_tokens, sampling.tool_choice neither"
        in (result.detail)
    )
    assert (
        "in x/runtime.toml, add each to [config] supported if its model calls carry it (e.g. supported = [..."
        in (result.detail)
    )


def test_a_runtime_calling_another_wire_than_it_declares_fails_model_wire(subject: Subject) -> None:
    """The same runtime judged as declaring each other wire: model_wire fails, naming both."""
    for declared in {"chat", "messages", "responses"} - {subject.wire}:
        mislabelled = Subject(name="x", runtime=subject.runtime, supported=subject.supported, wire=declared)
        result = run_check(check_by_id("model_wire"), mislabelled)
        assert result.status is CheckStatus.FAILED, result.detail
        assert f"declares wire {declared!r}" in result.detail
        assert result.evidence["declared"] == declared and result.evidence["model_calls"]


POISONS = {
    str(path.parent.relative_to(RUNTIMES)): f"{path.parents[2].name}-poison-{path.parent.name}"
    for path in sorted(RUNTIMES.glob("minimal*/poison/*/runtime.toml"))
}
"""Every poison of the minimal runtime (its WT_FAULT classes in the Messages and Responses wires, and
speak_chat), by directory: conformance/poisons.toml names each."""


SUITE_SCENARIOS = {f"mcp_client/{name}" for name, _title, _run in MCP_SUITE_CHECKS}


@pytest.mark.parametrize(
    "directory", ["minimal-accepting", "minimal-accepting/poison/elicitation_without_defaults"]
)
def test_a_client_that_accepts_forms_answers_with_content_valid_against_the_schema(directory: str) -> None:
    """Both answer the media pack's form validly (its one field is required): the poison's fault, the
    optional fields left out, is the official suite's scenario's to catch."""
    with loopback_subject(directory) as accepting:
        result = run_check(check_by_id("mcp_client/elicitation"), accepting)
    assert result.status is CheckStatus.PASSED, result.detail


ASKING_CHECKS = ("mcp_client/progress_and_logging", "mcp_client/elicitation", "mcp_client/sampling")


@pytest.mark.parametrize("check", ASKING_CHECKS)
def test_a_servers_requests_during_a_call_are_refused_at_once_and_its_notifications_skipped(
    subject: Subject, check: str
) -> None:
    """Its MCP client reads an SSE answer as it arrives: an elicitation or sampling request is refused at
    once (runtime.toml [mcp] declares "refuse"), log messages pass by, the result reaches the model."""
    result = run_check(check_by_id(check), subject)
    assert result.status is CheckStatus.PASSED, result.detail


MCP_CLIENT_CHECKS = (
    "mcp_client/image_content",
    "mcp_client/mixed_content",
    "mcp_client/embedded_resource",
    "mcp_client/resources",
)
POISON_CHECKS = (*LOOPBACK_CHECKS, "rendered_prompt_and_usage", *MCP_CLIENT_CHECKS)
"""What a poison is judged on, on loopback: every check a loopback runtime can take (usage is INFO for the
correct runtime, which reports none, and FAILED for the one that reports the last call's as the turn's;
the MCP client checks are INFO in the chat wire, which declares no content beyond text)."""


@pytest.mark.parametrize("check", MCP_CLIENT_CHECKS)
def test_images_and_resources_reach_the_model_natively_in_messages_and_responses_and_are_info_in_chat(
    subject: Subject, check: str
) -> None:
    result = run_check(check_by_id(check), subject)
    native = subject.wire != "chat" or check == "mcp_client/resources"  # resources go in the system prompt
    expected = CheckStatus.PASSED if native else CheckStatus.INFO
    assert result.status is expected, result.detail


@pytest.mark.parametrize("directory", sorted(POISONS))
def test_each_poison_of_a_new_wire_fails_exactly_the_checks_the_suite_names(directory: str) -> None:
    """The poisons of conformance/poisons.toml on loopback: each check it must fail fails, the others hold.
    This is the precision the suite's [catches_only] relies on: in containers these poisons run only the
    checks named for them."""
    suite = Suite.load(RUNTIMES.parent / "conformance")
    name = POISONS[directory]
    with loopback_subject(directory) as poison:
        assert poison.name == name
        # An unscored check (faults/...) is judged only for the poisons named for it, as the suite does; one
        # that needs its container (the official MCP suite's scenarios) is proven in tests/integration.
        caught = {check for check in suite.caught_by[name] if check not in SUITE_SCENARIOS}
        checks = dict.fromkeys([*POISON_CHECKS, *caught])
        statuses = {check: run_check(check_by_id(check), poison).status for check in checks}
    failed = {check for check, status in statuses.items() if status is CheckStatus.FAILED}
    assert failed == caught, statuses
    assert all(suite.judge(name, check, status).ok for check, status in statuses.items()), statuses
    holds = {CheckStatus.PASSED, CheckStatus.INFO}  # every other check held: the poison is precise
    assert all(status in holds for check, status in statuses.items() if check not in failed), statuses


@pytest.mark.parametrize(
    ("fault", "check"), [("drop_tool_call_ids", "tool_call_ids"), ("send_user_turn_late", "session_affinity")]
)
@pytest.mark.parametrize("wire", ["minimal-messages", "minimal-responses"])
def test_a_fault_the_wire_itself_refuses_fails_every_turn_with_the_gateways_400(
    wire: str, fault: str, check: str
) -> None:
    """A result without the id of its call, and a first model call with no user message, are requests the
    Messages and the Responses APIs refuse (tool_use_id and call_id are required; so is a first message):
    the gateway answers 400 and the turn fails, so these classes cannot pass silently in those wires and
    need no container poison there (docs/conformance.md, "Poisons in every wire")."""
    manifest = load_manifest(RUNTIMES / wire)
    broken = dataclasses.replace(manifest, env_set={**manifest.env_set, "WT_FAULT": fault})
    gateway = ServerThread(create_app(ScriptMode(), models=[DEFAULT_MODEL])).start()
    mocks = start_loopback([*kit_pack().plans(), *media_pack().plans()])
    runtime = LoopbackMinimal(broken, gateway.url, mocks)
    try:
        subject = Subject(name=fault, runtime=runtime, supported=broken.supported, wire=broken.wire)
        result = run_check(check_by_id(check), subject)
    finally:
        runtime.close()
        stop_loopback(mocks)
        gateway.stop()
    assert result.status is CheckStatus.FAILED, result.detail
    assert "the model gateway answered HTTP 400" in result.detail, result.detail


@pytest.mark.parametrize(
    ("env", "said"),
    [
        (
            {"WT_MODEL_WIRE": "soap"},
            "WT_MODEL_WIRE='soap' is not a model wire: use one of chat, messages, responses",
        ),
        ({"WT_MODEL_WIRE": "messages"}, "WT_MODEL_ROOT_URL is not set"),
        ({"WT_FAULT": "slow"}, "WT_FAULT='slow' is not a known fault: normalize_tool_arguments"),
    ],
)
def test_the_minimal_agent_refuses_a_bad_variable_at_start_naming_it(env: dict[str, str], said: str) -> None:
    base = {"WT_MODEL_BASE_URL": "http://127.0.0.1:9/v1"}
    with pytest.raises(SystemExit, match=re.escape(said)):
        _minimal("agent").Agent({**base, **env})
