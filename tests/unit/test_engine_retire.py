"""The retiring thread (windtunnel._engine.retire): jobs run in the order handed over, off the caller's
thread, and settle() returns only once every one handed over before it has run, a failed one included.
Real threads; the jobs record what ran (tests/integration/test_egress_fence.py runs it on real holders)."""

from __future__ import annotations

import threading
import time

import pytest

from windtunnel._engine.retire import Retirer


def test_jobs_run_off_the_callers_thread_in_order_and_settle_waits_for_them() -> None:
    ran: list[tuple[int, str]] = []
    retirer = Retirer()

    def job(number: int) -> None:
        time.sleep(0.05)
        ran.append((number, threading.current_thread().name))

    for number in range(3):
        retirer.later(lambda number=number: job(number))  # type: ignore[misc]
    assert len(ran) < 3  # handed over, not run on this thread
    retirer.settle()
    assert [number for number, _ in ran] == [0, 1, 2]
    assert all(name.startswith("wt-retire") for _, name in ran)
    retirer.close()


def test_a_failed_job_is_logged_and_the_next_still_runs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("WARNING", logger="windtunnel.runner")
    ran: list[str] = []
    retirer = Retirer()

    def fails() -> None:
        raise RuntimeError("the engine refused")

    retirer.later(fails)
    retirer.later(lambda: ran.append("after"))
    retirer.settle()
    assert ran == ["after"]
    assert "the engine refused" in caplog.text
    retirer.close()


def test_close_waits_for_what_was_handed_over_and_is_idempotent() -> None:
    ran: list[str] = []
    retirer = Retirer()

    def slow() -> None:
        time.sleep(0.2)
        ran.append("slow")

    retirer.later(slow)
    retirer.close()
    assert ran == ["slow"]
    retirer.close()
    retirer.later(lambda: ran.append("again"))  # a new worker after close
    retirer.settle()
    assert ran == ["slow", "again"]
    retirer.close()
