"""Listing a run's resources on a shared engine: a container removed between docker-py's list and its
per-container inspect (another run's cleanup) makes the listing be taken again, not a traceback."""

from __future__ import annotations

from typing import Any

import pytest
from docker.errors import NotFound

from windtunnel._drivers.cleanup import LIST_ATTEMPTS, labelled


class _Listing:
    def __init__(self, races: int, found: list[str]) -> None:
        self.races, self.found, self.calls = races, found, 0

    def list(self, **kwargs: Any) -> list[str]:
        self.calls += 1
        if self.calls <= self.races:
            raise NotFound("No such container: gone-meanwhile")
        return self.found


class _Engine:
    def __init__(self, races: int) -> None:
        self.containers = _Listing(races, ["c1"])
        self.networks = _Listing(0, ["n1"])


def test_a_container_removed_meanwhile_makes_the_listing_be_taken_again() -> None:
    engine = _Engine(races=2)
    assert labelled(engine, "windtunnel.run") == (["c1"], ["n1"])
    assert engine.containers.calls == 3


def test_an_engine_that_keeps_racing_still_reports_it() -> None:
    with pytest.raises(NotFound):
        labelled(_Engine(races=LIST_ATTEMPTS), "windtunnel.run")
