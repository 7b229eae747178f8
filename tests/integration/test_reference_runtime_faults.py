"""WT_FAULT: each poison variant of the reference runtime breaks exactly one promise, observably.

These are the conformance suite's negative controls (issue 4); here they run in-process against the real
parts of the stack from reference_standins: Wind Tunnel's model gateway in script mode and the
support_desk pack's MCP mocks, both on 127.0.0.1.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterator

import httpx
import pytest
from windtunnel_inject import SettingsError

from tests.integration.reference_standins import (
    REFUND_ARGS,
    RUNTIME_DIR,
    Stack,
    inject,
    prompt_text,
    refund_script,
    running_stack,
    runtime_module,
    say,
)


@pytest.fixture
def stack() -> Iterator[Stack]:
    with running_stack() as running:
        yield running


def seed_and_reset(client: httpx.Client, stack: Stack) -> None:
    stack.script(say("Noted."), session="s1")
    assert inject(client, "s1", "My locker code is 4471, keep it in mind.").status_code == 200
    assert client.post("/wt/reset").status_code == 200
    stack.gateway.clear_script()  # later turns of s1 answer from the global script


def test_fault_hide_intermediate_tool_calls_reports_none(stack: Stack) -> None:
    client = stack.start(WT_FAULT="hide_intermediate_tool_calls")
    refund_script(stack)
    body = inject(client, "s1", "Refund A-1042").json()
    assert body["tool_calls"] == []
    assert [name for name, _ in stack.mcp_calls()] == ["lookup_order", "issue_refund"]  # yet both ran


def test_fault_normalize_tool_arguments_reshapes_what_it_reports(stack: Stack) -> None:
    client = stack.start(WT_FAULT="normalize_tool_arguments")
    refund_script(stack)
    reported = inject(client, "s1", "Refund A-1042").json()["tool_calls"][1]["arguments"]
    assert reported == {"amount": "12.5", "order_id": "A-1042", "reason": "damaged"}
    assert list(reported) == ["amount", "order_id", "reason"]
    received = stack.mcp_calls()[1]
    assert received == ("issue_refund", REFUND_ARGS) and list(received[1]) == list(REFUND_ARGS)


def test_fault_keep_conversation_across_reset(stack: Stack) -> None:
    client = stack.start(WT_FAULT="keep_conversation_across_reset")
    seed_and_reset(client, stack)
    state = client.get("/wt/state").json()
    assert "s1" in state["sessions"]
    assert state["index"] == []
    stack.script(say("ok"), say("ok"))
    inject(client, "s1", "What is my locker code?")
    inject(client, "s2", "What is my locker code?")
    assert "4471" in prompt_text(stack.bodies("s1")[-1])  # the reused session resumes pre-reset history
    assert "4471" not in prompt_text(stack.bodies("s2")[0])


def test_fault_keep_search_index_across_reset(stack: Stack) -> None:
    client = stack.start(WT_FAULT="keep_search_index_across_reset")
    seed_and_reset(client, stack)
    state = client.get("/wt/state").json()
    assert state["sessions"] == {}
    assert [n["text"] for n in state["index"]] == ["My locker code is 4471, keep it in mind."]
    stack.script(say("ok"), say("ok"))
    inject(client, "s2", "What is my locker code?")
    inject(client, "s1", "What is my locker code?")
    for session in ("s1", "s2"):
        assert "Relevant notes:" in prompt_text(stack.bodies(session)[-1])
        assert "4471" in prompt_text(stack.bodies(session)[-1])


def test_fault_reset_noop_answers_200_and_wipes_nothing(stack: Stack) -> None:
    client = stack.start(WT_FAULT="reset_noop")
    seed_and_reset(client, stack)
    state = client.get("/wt/state").json()
    assert set(state["sessions"]) == {"s1"}
    assert len(state["index"]) == 1
    assert len(state["log"]) == 1


def test_correct_reset_leaves_no_nonce_for_a_reused_or_fresh_session(stack: Stack) -> None:
    client = stack.start()
    seed_and_reset(client, stack)
    stack.script(say("ok"), say("ok"))
    inject(client, "s1", "What is my locker code?")
    inject(client, "s2", "What is my locker code?")
    after_reset = [entry["messages"] for entry in stack.requests()[1:]]
    assert len(after_reset) == 2 and "4471" not in json.dumps(after_reset)


def test_fault_ignore_sampling_drops_the_knobs(stack: Stack) -> None:
    client = stack.start(WT_FAULT="ignore_sampling", WT_SAMPLING='{"temperature": 0, "top_p": 0.5}')
    stack.script(say("ok"))
    inject(client, "s1", "hello")
    (request,) = stack.requests()
    assert "temperature" not in request["sampling"]
    assert "top_p" not in request["sampling"]


def test_fault_break_session_affinity_mixes_sessions(stack: Stack) -> None:
    client = stack.start(WT_FAULT="break_session_affinity")
    stack.script(say("ok"), say("ok"))
    inject(client, "alpha", "My favourite colour is teal.")
    inject(client, "beta", "Say hello.")
    beta = stack.requests("beta")[0]["messages"]
    assert {"role": "user", "content": "My favourite colour is teal."} in beta


def test_an_unknown_fault_is_refused_by_name() -> None:
    settings = runtime_module("settings")
    with pytest.raises(SettingsError, match="WT_FAULT='drop_tables' is not a known fault"):
        settings.Settings.from_env({"WT_MODEL_BASE_URL": "http://127.0.0.1:9/v1", "WT_FAULT": "drop_tables"})


def test_every_fault_has_a_poison_manifest_and_every_manifest_a_fault() -> None:
    faults = {fault.value for fault in runtime_module("settings").Fault}
    manifests = {
        path.parent.name: tomllib.loads(path.read_text())
        for path in RUNTIME_DIR.glob("poison/*/runtime.toml")
    }
    # A poison whose fault sits in its driver (teardown_raises) sets no WT_FAULT: the runtime is untouched.
    manifests = {name: data for name, data in manifests.items() if "driver" not in data}
    assert set(manifests) == faults
    for fault, manifest in manifests.items():
        assert manifest["extends"] == "../.."
        assert manifest["env"]["set"] == {"WT_FAULT": fault}
        assert manifest["name"] == f"reference-poison-{fault}"


def test_fault_stale_session_header_names_the_first_session_on_every_call(stack: Stack) -> None:
    client = stack.start(WT_FAULT="stale_session_header")
    stack.script(say("ok"), say("ok"))
    inject(client, "alpha", "Say hello.")
    inject(client, "beta", "Say hello again.")
    assert [request["session"] for request in stack.requests()] == ["alpha", "alpha"]
