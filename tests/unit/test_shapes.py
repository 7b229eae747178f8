"""Every accepted response shape is read, and tool calls stay exactly as emitted."""

from __future__ import annotations

import pytest

from windtunnel._trace.shapes import call_argument_text, call_arguments, call_name, read_response
from windtunnel.errors import EnvelopeError

WIRE = {"id": "c1", "type": "function", "function": {"name": "refund", "arguments": '{"b": 1, "a": 2}'}}
FLAT = {"name": "refund", "arguments": {"b": 1, "a": 2}}


def test_flat_wrapper_and_openai_shapes() -> None:
    flat = read_response({"content": "hi", "tool_calls": [FLAT]})
    wrapper = read_response(
        {"message": {"content": "hi", "tool_calls": [FLAT]}, "usage": {"prompt_tokens": 1}}
    )
    openai = read_response(
        {"choices": [{"message": {"role": "assistant", "content": "hi", "tool_calls": [WIRE]}}]}
    )
    assert (flat.shape, wrapper.shape, openai.shape) == ("flat", "wrapper", "openai")
    assert flat.tool_calls == [FLAT] and openai.tool_calls == [WIRE]
    assert openai.tool_calls[0] is WIRE  # recorded as emitted, not a normalised copy
    assert wrapper.usage == {"prompt_tokens": 1}


def test_evaluators_read_both_call_shapes() -> None:
    assert call_name(WIRE) == call_name(FLAT) == "refund"
    assert call_arguments(WIRE) == call_arguments(FLAT) == {"b": 1, "a": 2}
    assert call_argument_text(WIRE) == '{"b": 1, "a": 2}'
    assert call_arguments({"function": {"name": "x", "arguments": "not json"}}) == "not json"


@pytest.mark.parametrize(
    ("response", "field"),
    [
        ("text", "<response>"),
        ({"content": 3}, "content"),
        ({"content": "x", "tool_calls": {}}, "tool_calls"),
        ({"choices": []}, "choices[0].message"),
    ],
)
def test_bad_shapes_name_the_field(response: object, field: str) -> None:
    with pytest.raises(EnvelopeError) as caught:
        read_response(response)
    assert caught.value.field == field  # type: ignore[attr-defined]
