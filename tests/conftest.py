"""Shared fixtures: paths to the repo's packs and a clean runs directory per test."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture
def runs_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "runs"
    monkeypatch.setenv("WT_RUNS_DIR", str(path))
    monkeypatch.setenv("WT_LOCK_DIR", str(tmp_path / "locks"))
    return path
