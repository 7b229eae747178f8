"""The reset canary against small in-process runtimes that do or do not wipe their memory."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from windtunnel._mcp.client import call_tool
from windtunnel.api import run_reset_canary
from windtunnel.errors import UsageError
from windtunnel.spi import AgentConfig, MCPHandle, Message, ReferenceCase


class MemoryHandle:
    """Answers from a memory of every user message; `wipes` decides whether reset_state() clears it."""

    def __init__(self, wipes: bool, shared_recall: bool) -> None:
        self.memory: list[str] = []
        self.wipes, self.shared_recall = wipes, shared_recall
        self.sent_after_reset = 0
        self.resets = 0

    def send(self, messages: list[Message], session_id: str) -> Mapping[str, Any]:
        text = messages[-1]["content"] or ""
        if self.resets >= 2:
            self.sent_after_reset += 1
        answer = " ".join(self.memory) if self.shared_recall and "Which canary" in text else "Noted."
        self.memory.append(text)
        return {"content": answer, "tool_calls": []}

    def reset_state(self) -> None:
        self.resets += 1
        if self.wipes:
            self.memory.clear()

    def teardown(self) -> None:
        return None


class MemoryRuntime:
    def __init__(self, wipes: bool, shared_recall: bool = True) -> None:
        self.handle = MemoryHandle(wipes, shared_recall)

    def provision(self, config: AgentConfig, mcps: list[MCPHandle] | None = None) -> MemoryHandle:
        return self.handle

    def probe(self) -> Any:
        handle = self.handle

        class Probe:
            def snapshot(self) -> Mapping[str, Any]:
                return {"memory": list(handle.memory)}

        return Probe()


def test_recall_mode_finds_a_leak_and_passes_a_wipe() -> None:
    leaky = run_reset_canary(MemoryRuntime(wipes=False), AgentConfig())
    assert leaky.leaked and "recalled the nonce" in leaky.detail and leaky.mode == "recall"
    clean = run_reset_canary(MemoryRuntime(wipes=True), AgentConfig())
    assert not clean.leaked and "no trace of the nonce" in clean.detail


def test_hermetic_mode_scans_the_probe_and_sends_nothing_after_reset() -> None:
    leaky_runtime = MemoryRuntime(wipes=False, shared_recall=False)
    leaky = run_reset_canary(
        leaky_runtime, AgentConfig(), probe_recall=False, state_probe=leaky_runtime.probe()
    )
    assert leaky.leaked and "'memory'" in leaky.detail and leaky.mode == "hermetic"
    assert leaky_runtime.handle.sent_after_reset == 0
    clean_runtime = MemoryRuntime(wipes=True, shared_recall=False)
    clean = run_reset_canary(
        clean_runtime, AgentConfig(), probe_recall=False, state_probe=clean_runtime.probe()
    )
    assert not clean.leaked


def test_hermetic_without_probe_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="needs a state_probe"):
        run_reset_canary(MemoryRuntime(wipes=True), AgentConfig(), probe_recall=False)


class LoopHandle:
    """A small agent loop: each model call takes the next scripted decision and is logged as a model
    request; tool calls go to the real (loopback) MCP mocks. `keeps` names what reset_state() forgets to
    wipe: "tool_log" or "answers" (an answer cache by user text, shared by sessions)."""

    def __init__(self, case: ReferenceCase, mcps: list[MCPHandle], keeps: str | None) -> None:
        self.decisions = list(case.decisions)
        self.urls = {handle.name: handle.url for handle in mcps}
        self.keeps = keeps
        self.sessions: dict[str, list[str]] = {}
        self.tool_log: list[dict[str, Any]] = []
        self.answers: dict[str, Mapping[str, Any]] = {}
        self.requests: list[dict[str, Any]] = []

    def send(self, messages: list[Message], session_id: str) -> Mapping[str, Any]:
        text = messages[-1]["content"] or ""
        if self.keeps == "answers" and text in self.answers:
            return self.answers[text]
        history = self.sessions.setdefault(session_id, [])
        history.append(text)
        calls: list[dict[str, Any]] = []
        while True:
            decision = self.decisions.pop(0)
            self.requests.append({"messages": [{"role": "user", "content": t} for t in history]})
            if not decision.tool_calls:
                break
            for tool in decision.tool_calls:
                call_tool(self.urls["notes"], tool.name, dict(tool.arguments))
                calls.append({"name": tool.name, "arguments": dict(tool.arguments)})
                self.tool_log.append(calls[-1])
        answer = {"content": decision.content, "tool_calls": calls}
        self.answers[text] = answer
        return answer

    def model_requests(self) -> list[dict[str, Any]]:
        taken, self.requests = self.requests, []
        return taken

    def reset_state(self) -> None:
        self.sessions.clear()
        if self.keeps != "tool_log":
            self.tool_log.clear()
        if self.keeps != "answers":
            self.answers.clear()

    def teardown(self) -> None:
        return None


class LoopRuntime:
    def __init__(self, keeps: str | None = None) -> None:
        self.keeps = keeps
        self.handle: LoopHandle | None = None
        self.cases: list[ReferenceCase] = []

    def provision(self, config: AgentConfig, mcps: list[MCPHandle] | None = None) -> LoopHandle:
        raise AssertionError("a reference-capable runtime is provisioned with its script")

    def provision_reference(
        self, config: AgentConfig, case: ReferenceCase, mcps: list[MCPHandle] | None = None
    ) -> LoopHandle:
        assert [spec.name for spec in config.mcp_servers] == ["notes"]
        self.cases.append(case)
        self.handle = LoopHandle(case, list(mcps or []), self.keeps)
        return self.handle

    def probe(self) -> Any:
        runtime = self

        class Probe:
            def snapshot(self) -> Mapping[str, Any]:
                assert runtime.handle is not None
                return {"tool_log": list(runtime.handle.tool_log)}

        return Probe()


def test_a_clean_loop_passes_and_its_seed_went_through_a_tool() -> None:
    runtime = LoopRuntime()
    result = run_reset_canary(runtime, AgentConfig())
    assert not result.leaked, result.detail
    assert "repeated seed prompt reached the model" in result.detail
    first = runtime.cases[0].decisions[0].tool_calls[0]
    assert (first.name, dict(first.arguments)) == ("echo", {"canary": result.nonce})


def test_tool_state_kept_across_reset_is_found_by_the_hermetic_probe() -> None:
    runtime = LoopRuntime(keeps="tool_log")
    result = run_reset_canary(runtime, AgentConfig(), probe_recall=False, state_probe=runtime.probe())
    assert result.leaked and "'tool_log'" in result.detail


def test_an_answer_cache_kept_across_reset_is_a_leak() -> None:
    runtime = LoopRuntime(keeps="answers")
    result = run_reset_canary(runtime, AgentConfig())
    assert result.leaked
    assert "answered without any model call: an answer cache survived the reset" in result.detail


def test_hermetic_mode_sends_nothing_after_the_reset_even_with_a_cache() -> None:
    runtime = LoopRuntime(keeps="answers")
    result = run_reset_canary(runtime, AgentConfig(), probe_recall=False, state_probe=runtime.probe())
    assert not result.leaked
    assert runtime.handle is not None and not runtime.handle.requests
    assert len(runtime.handle.decisions) == 3  # only the seed's two model calls were made


@pytest.mark.parametrize(
    "request_",
    [
        {
            "wire": "anthropic-messages",
            "messages": [{"role": "user", "content": "hi"}],
            "extra": {"system": "{n}"},
        },
        {"wire": "openai-responses", "messages": "hi", "extra": {"instructions": "Notes: {n}"}},
        {"wire": "openai-responses", "messages": "hi", "history": [{"role": "user", "content": "{n}"}]},
        {"messages": [{"role": "system", "content": "{n}"}, {"role": "user", "content": "hi"}]},
    ],
)
def test_a_nonce_sent_outside_the_messages_of_its_wire_is_found(request_: dict[str, Any]) -> None:
    """What the model was sent is read in the call's wire: Anthropic Messages' `system`, OpenAI Responses'
    `instructions` and the conversation it recalls by previous_response_id (the gateway's `history`) are
    outside `messages`, and a nonce kept there across a reset is a leak (it once went unseen)."""
    from windtunnel._canary.canary import _found, sent

    nonce = "WT-CANARY-0123456789AB"
    leaked = json.loads(json.dumps(request_).replace("{n}", nonce))
    assert _found(nonce, sent(leaked))
    assert not _found(nonce, sent(request_))
