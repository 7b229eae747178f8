"""Checked-in JSON schemas stay current with the models."""

from __future__ import annotations

from windtunnel import _schemas


def test_checked_in_schemas_are_current() -> None:
    assert _schemas.stale() == [], (
        "schemas are stale: run `python -m windtunnel._schemas` and commit the result"
    )


def test_every_artefact_has_a_schema_version() -> None:
    for name in _schemas.MODELS:
        versioned = _schemas.MODELS[_schemas.VERSIONED_BY.get(name, name)]
        assert "schema_version" in versioned.model_fields, name
