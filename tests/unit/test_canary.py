"""The reset canary against small in-process runtimes that do or do not wipe their memory."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

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


def test_reference_capable_runtimes_get_scripted_replies() -> None:
    seen: list[ReferenceCase] = []

    class Scripted(MemoryRuntime):
        def provision_reference(
            self, config: AgentConfig, case: ReferenceCase, mcps: Any = None
        ) -> MemoryHandle:
            seen.append(case)
            return self.handle

    assert not run_reset_canary(Scripted(wipes=True), AgentConfig()).leaked
    assert seen[0].decisions[0].content == "Noted."
