"""The harness's own view of a runtime container: the rule that cuts it off from one MCP server, its
identity (an OOM kill included) and the rule of the `faults/oom` check."""

from __future__ import annotations

from typing import Any

import pytest

from windtunnel._conformance.checks_sandbox import DISK_DONE, judge_disk_full, judge_oom
from windtunnel._conformance.model import CheckFailed, OptionalAbsent
from windtunnel._drivers.sandbox import SandboxIdentity, cut_off_rule, has_small_tmp, small_tmp


def test_the_cut_off_rule_resets_every_packet_to_the_server_before_any_accept() -> None:
    rule = cut_off_rule("http://mock-wt-conformance-notes:8000/mcp", "192.168.80.3")
    # First in the chain: ahead of the rule that lets open connections' packets pass.
    assert rule[:3] == ["-I", "OUTPUT", "1"]
    assert rule[3:] == [
        "-d", "192.168.80.3/32", "-p", "tcp", "--dport", "8000", "-j", "REJECT", "--reject-with", "tcp-reset",
    ]  # fmt: skip


def test_a_url_without_a_port_is_cut_off_on_80() -> None:
    assert "80" in cut_off_rule("http://mock-notes/mcp", "10.0.0.2")


def test_an_oom_kill_changes_the_sandbox_identity_and_is_named() -> None:
    before = SandboxIdentity(started_at="t0", pid=7, restarts=0)
    after = SandboxIdentity(started_at="t0", pid=7, restarts=0, oom_kills=1)
    # The restart guard fails a turn whose sandbox identity changed: a child OOM-killed counts.
    assert before != after
    assert "OOM kill" not in before.line() and "1 OOM kill(s)" in after.line()


KILLED = "runtime 'r': its container exited mid-turn (exit code 137, OOM-killed: out of memory): gone"


def _oom_evidence(**turn: object) -> dict[str, object]:
    return {"turn": turn, "sandbox_after": None}


def test_an_oom_killed_turn_reported_failed_holds() -> None:
    evidence = judge_oom(_oom_evidence(failed=KILLED))
    assert evidence["oom_killed"] is True


def test_a_sandbox_that_lost_a_process_to_oom_but_answered_fails() -> None:
    evidence = {"turn": {"answered": "wt-oom-survived"}, "sandbox_after": "started t0, ..., 1 OOM kill(s)"}
    with pytest.raises(CheckFailed, match="recorded as passed"):
        judge_oom(evidence)


def test_an_answer_without_any_oom_kill_is_not_measured_never_passed() -> None:
    with pytest.raises(OptionalAbsent, match="the fault did not happen"):
        judge_oom(_oom_evidence(answered="wt-oom-survived"))


def test_a_turn_failed_for_another_reason_than_memory_fails() -> None:
    with pytest.raises(CheckFailed, match="not for want of memory"):
        judge_oom(_oom_evidence(failed="runtime 'r': /wt/inject answered 500"))


def test_a_full_disk_turn_reported_failed_holds_and_a_scripted_answer_holds() -> None:
    failed = {"turn": {"failed": "reference: /wt/inject answered 500: [Errno 28] No space left on device"}}
    assert judge_disk_full(failed, []) is failed
    answered = {"turn": {"answered": DISK_DONE}}
    assert judge_disk_full(answered, []) is answered


def test_a_full_disk_answer_that_is_not_the_models_fails() -> None:
    with pytest.raises(CheckFailed, match="never answered with something else"):
        judge_disk_full({"turn": {"answered": "I could not read the document, but it says hello"}}, [])


def test_a_full_disk_answer_whose_result_was_not_served_whole_fails() -> None:
    cut = "model call 1: the volume result is cut at byte 4096"
    with pytest.raises(CheckFailed, match="cut at byte 4096"):
        judge_disk_full({"turn": {"answered": DISK_DONE}}, [cut])


class _Recorded:
    """A container as the engine records it (docker inspect): only what has_small_tmp reads."""

    def __init__(self, mounts: list[Any]) -> None:
        self.attrs = {"HostConfig": {"Mounts": mounts}}


def test_only_a_container_started_with_the_small_tmp_is_filled() -> None:
    # The writable layer is the engine's own disk: never filled. Only small_tmp()'s tmpfs volume is.
    assert has_small_tmp(_Recorded([small_tmp(2 * 1024 * 1024)]))
    assert not has_small_tmp(_Recorded([]))
    bound = {"Target": "/tmp", "Type": "bind", "Source": "/srv/tmp"}
    assert not has_small_tmp(_Recorded([bound]))
