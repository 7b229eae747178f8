"""Run labels and owner liveness: only a provably dead owner makes a run's resources leftovers."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from windtunnel._engine.network import (
    OWNER_HOST_LABEL,
    OWNER_PID_LABEL,
    OWNER_START_LABEL,
    RUN_LABEL,
    SESSION_LABEL,
    network_name,
    owner_alive,
    process_start_ticks,
    run_labels,
)


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_run_labels_name_run_session_and_this_process() -> None:
    labels = run_labels("r-1", session="pytest-abc")
    assert labels[RUN_LABEL] == "r-1"
    assert labels[SESSION_LABEL] == "pytest-abc"
    assert labels[OWNER_HOST_LABEL] == socket.gethostname()
    assert labels[OWNER_PID_LABEL] == str(os.getpid())
    assert labels[OWNER_START_LABEL] == process_start_ticks(os.getpid())


def test_run_labels_without_session_carry_no_session_label() -> None:
    assert SESSION_LABEL not in run_labels("r-1")


def test_owner_alive_for_this_process() -> None:
    assert owner_alive(run_labels("r")) is True


def test_owner_dead_when_the_pid_is_gone() -> None:
    pid = _dead_pid()
    labels = run_labels("r") | {OWNER_PID_LABEL: str(pid)}
    labels.pop(OWNER_START_LABEL)
    assert process_start_ticks(pid) is None
    assert owner_alive(labels) is False


def test_a_reused_pid_is_not_the_owner() -> None:
    # This process's pid, but a start time it never had: the pid was recycled after the owner died.
    labels = run_labels("r") | {OWNER_START_LABEL: "1"}
    assert owner_alive(labels) is False


def test_another_hosts_or_unlabelled_resource_cannot_be_judged() -> None:
    assert owner_alive(run_labels("r") | {OWNER_HOST_LABEL: "some-other-host"}) is None
    assert owner_alive({RUN_LABEL: "r"}) is None
    assert owner_alive(run_labels("r") | {OWNER_PID_LABEL: "not-a-pid"}) is None


def test_start_ticks_survive_parentheses_and_spaces_in_the_command_name(tmp_path: Path) -> None:
    odd = tmp_path / "we) (ird"
    odd.symlink_to("/bin/sleep")
    child = subprocess.Popen([str(odd), "5"])
    try:
        ticks = process_start_ticks(child.pid)
        own = process_start_ticks(os.getpid())
        assert ticks is not None
        assert own is not None
        assert ticks.isdigit()
        assert int(ticks) >= int(own)
    finally:
        child.kill()
        child.wait()


@pytest.mark.parametrize(
    ("run_id", "expected"),
    [("r-1", "wt-r-1"), ("sweep 2026/01:x", "wt-sweep-2026-01-x"), ("a.b_c", "wt-a.b_c")],
)
def test_network_names_are_docker_safe(run_id: str, expected: str) -> None:
    assert network_name(run_id) == expected
