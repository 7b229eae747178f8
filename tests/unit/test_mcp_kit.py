"""The kit's argument validation: compiled once per schema, with exactly jsonschema.validate()'s verdicts."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from windtunnel._core.mock_kit import MockServer, Tool

SCHEMA = {
    "type": "object",
    "properties": {
        "order_id": {"type": "string", "pattern": "^[A-Z]-[0-9]+$"},
        "amount": {"type": "number", "exclusiveMinimum": 0},
        "lines": {"type": "array", "items": {"type": "integer"}, "minItems": 1},
    },
    "required": ["order_id", "amount"],
    "additionalProperties": False,
}


def server(schema: dict[str, Any]) -> MockServer:
    return MockServer("s", [Tool(name="t", description="", input_schema=schema, handler=lambda s, a: "ok")])


@pytest.mark.parametrize(
    "arguments",
    [
        {"order_id": "A-1", "amount": 1},
        {"order_id": "a1", "amount": 1},
        {"order_id": "A-1", "amount": 0},
        {"order_id": "A-1"},
        {"order_id": "A-1", "amount": 1, "extra": 1},
        {"order_id": "A-1", "amount": 1, "lines": []},
        {"order_id": "A-1", "amount": 1, "lines": ["x"]},
        {"order_id": 7, "amount": "1"},
    ],
)
def test_verdicts_and_messages_match_jsonschema_validate(arguments: dict[str, Any]) -> None:
    outcome = server(SCHEMA).call("t", arguments)
    expected = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(SCHEMA).iter_errors(arguments)
    )
    if expected is None:
        assert outcome.is_error is False and outcome.result == "ok"
    else:
        assert outcome.error == f"bad arguments for 't': {expected.message}"


def test_a_broken_schema_raises_on_every_call_as_before() -> None:
    broken = server({"type": "object", "properties": {"a": {"type": "no-such-type"}}})
    for _ in range(2):
        with pytest.raises(jsonschema.SchemaError):
            broken.call("t", {"a": 1})


@pytest.mark.parametrize(
    ("name", "arguments", "invalid_params"),
    [
        ("nope", {"order_id": "A-1", "amount": 1}, True),  # no such tool: a protocol error in MCP
        ("t", '{"order_id": "A-1"}', True),  # arguments that are not an object: a malformed request
        ("t", {"order_id": "a1", "amount": 1}, False),  # a schema violation: a tool error the model can read
    ],
)
def test_which_refusals_are_invalid_params_and_all_are_recorded(
    name: str, arguments: Any, invalid_params: bool
) -> None:
    mock = server(SCHEMA)
    outcome = mock.call(name, arguments)
    assert outcome.is_error and outcome.invalid_params is invalid_params and outcome.error
    assert [(call["name"], call["arguments"], call["is_error"]) for call in mock.calls()] == [
        (name, arguments, True)
    ]
