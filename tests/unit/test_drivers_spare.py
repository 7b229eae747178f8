"""The prestarted runtime container (windtunnel._drivers.spare): handed over only for the key it was started
for, removed otherwise, and nothing it started outlives close(), even a start still running. Real worker
threads; the starts are small callables recording what they started and what was removed (no Docker here:
tests/integration/test_certify.py runs it against containers, and its leftover check is the proof there)."""

from __future__ import annotations

import threading
import time
from typing import Any

from windtunnel._core.abilities import PrestartingRuntime
from windtunnel._drivers.container import ContainerRuntime
from windtunnel._drivers.spare import Spare


def room() -> bool:
    """The machine's CPU has room (the default asks windtunnel._drivers.idle_cpu)."""
    return True


class Engine:
    """Starts numbered "containers" and records which were removed; `delay` makes a start slow."""

    def __init__(self, delay: float = 0.0, fail: bool = False, gate: threading.Event | None = None) -> None:
        self.started: list[int] = []
        self.removed: list[int] = []
        self.delay, self.fail, self.gate = delay, fail, gate
        self._lock = threading.Lock()

    def start(self) -> Any:
        time.sleep(self.delay)
        if self.gate is not None:
            assert self.gate.wait(timeout=30), "the test never opened the gate"
        if self.fail:
            raise RuntimeError("the engine refused")
        with self._lock:
            self.started.append(len(self.started) + 1)
            return self.started[-1]

    def remove(self, running: Any) -> None:
        with self._lock:
            self.removed.append(running)

    def left(self) -> set[int]:
        return set(self.started) - set(self.removed)


def test_without_enable_nothing_starts_ahead() -> None:
    engine = Engine()
    spare = Spare(engine.remove, room)
    spare.start_next("k", engine.start)
    assert spare.take("k") is None
    spare.close()
    assert engine.started == []


def test_the_next_take_with_the_same_key_gets_the_container_started_ahead() -> None:
    engine = Engine(delay=0.05)
    spare = Spare(engine.remove, room)
    spare.enable()
    spare.start_next("k", engine.start)
    spare.start_next("k", engine.start)  # depth 1: a second ask while one is ahead starts nothing
    assert spare.take("k") == 1  # type: ignore[comparison-overlap]  # the engine here starts numbers
    assert spare.take("k") is None  # taken once only
    spare.close()
    assert engine.started == [1]
    assert engine.removed == []


def test_ahead_names_the_container_started_ahead_until_it_is_taken() -> None:
    engine = Engine(delay=0.2)
    spare = Spare(engine.remove, room)
    assert spare.ahead() is None
    spare.enable()
    spare.start_next("k", engine.start)
    assert spare.ahead() == 1  # type: ignore[comparison-overlap]  # waits for the start in flight
    assert spare.take("k") == 1  # type: ignore[comparison-overlap]
    assert spare.ahead() is None
    spare.close()


def test_a_take_for_something_else_removes_it_and_starts_nothing_in_its_place() -> None:
    engine = Engine()
    spare = Spare(engine.remove, room)
    spare.enable()
    spare.start_next("config a", engine.start)
    assert spare.take("config b") is None
    spare.close()
    assert engine.removed == [1]
    assert engine.left() == set()


def test_a_take_for_something_else_does_not_wait_for_its_start_and_ahead_waits_for_its_removal() -> None:
    gate = threading.Event()
    engine = Engine(gate=gate)
    spare = Spare(engine.remove, room)
    spare.enable()
    spare.start_next("config a", engine.start)
    taken: list[Any] = []
    taker = threading.Thread(target=lambda: taken.append(spare.take("config b")))
    taker.start()
    taker.join(timeout=10)
    assert taken == [None], "take waited for a start it was not going to use"
    gate.set()
    assert spare.ahead() is None  # waits for the worker: the unwanted container is gone by then
    assert engine.removed == [1]
    spare.close()
    assert engine.left() == set()


def test_nothing_starts_ahead_while_the_machine_has_no_idle_cpu() -> None:
    engine = Engine()
    busy = [True]
    spare = Spare(engine.remove, lambda: not busy[0])
    spare.enable()
    spare.start_next("k", engine.start)
    assert spare.take("k") is None
    busy[0] = False
    spare.start_next("k", engine.start)
    assert spare.take("k") == 1  # type: ignore[comparison-overlap]
    spare.close()
    assert spare.counts == {"held_back": 1, "started": 1, "taken": 1}


def test_close_waits_for_a_start_in_flight_and_removes_it() -> None:
    engine = Engine(delay=0.3)
    spare = Spare(engine.remove, room)
    spare.enable()
    spare.start_next("k", engine.start)
    spare.close()  # the start is still running: close waits for it, then removes it
    assert engine.started == [1]
    assert engine.left() == set()
    spare.close()  # idempotent
    spare.enable()  # closed for good
    assert not spare.enabled


def test_it_starts_ahead_for_what_was_asked_for_last() -> None:
    engine = Engine()
    spare = Spare(engine.remove, room)
    spare.enable()
    spare.start_next("default", engine.start)
    assert spare.take("default") == 1  # type: ignore[comparison-overlap]
    spare.start_next("default", engine.start)
    assert spare.take("sampling") is None  # started for the default: removed
    spare.start_next("sampling", engine.start)  # the default was asked for more, the sampling config last
    assert spare.take("sampling") == 3  # type: ignore[comparison-overlap]
    spare.start_next("sampling", engine.start)
    spare.close()
    assert engine.removed == [2, 4]


def test_a_failed_start_ahead_means_a_start_on_demand() -> None:
    engine = Engine(fail=True)
    spare = Spare(engine.remove, room)
    spare.enable()
    spare.start_next("k", engine.start)
    assert spare.take("k") is None
    spare.close()


def test_the_container_driver_has_the_ability() -> None:
    assert issubclass(ContainerRuntime, PrestartingRuntime)
