"""Shared fixtures: paths to the repo's packs and a clean runs directory per test."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files of whole certify runs first, then the other slow files, then the rest (each file's tests stay
    together and in order): xdist hands files to its workers in this order, so the certify files, minutes
    each, start while the thousands of quick tests fill the other workers, instead of being the long tail
    of the session."""
    weight: dict[Path, int] = {}
    for item in items:
        marked = 0 if item.get_closest_marker("certify") else 1 if item.get_closest_marker("slow") else 2
        weight[item.path] = min(weight.get(item.path, 2), marked)
    items.sort(key=lambda item: weight[item.path])  # a stable sort: the order within each file is kept


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture
def runs_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "runs"
    monkeypatch.setenv("WT_RUNS_DIR", str(path))
    monkeypatch.setenv("WT_LOCK_DIR", str(tmp_path / "locks"))
    return path
