"""The mock `nox -s mcp_conformance` serves: what the official suite asks for by name, as a pack declares it.

The suite's scenarios call fixed tool, resource and prompt names (the "everything server" of its README).
These are ordinary pack declarations served by the ordinary mock (`wt mcp serve`), so the suite exercises
exactly the code every pack's mock runs. The server announces everything a pack can opt in to: content
blocks, steps (progress, logging, elicitation, sampling, a closed stream), resources and templates, prompts
with completions, and sessions with resumable SSE.
"""

from __future__ import annotations

import io
import wave
from collections.abc import Sequence
from typing import Any

from windtunnel.api import (
    Audio,
    CloseStream,
    Elicit,
    EmbeddedResource,
    Image,
    Log,
    MockServer,
    Pack,
    Progress,
    Prompt,
    PromptArgument,
    PromptMessage,
    Reply,
    Resource,
    ResourceTemplate,
    Sample,
    Text,
    Tool,
    ToolError,
    ToolResult,
)

NO_ARGUMENTS: dict[str, Any] = {"type": "object", "properties": {}}
# The scenario json-schema-2020-12 checks that $schema, $defs and additionalProperties reach the client.
SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
    "additionalProperties": False,
}


def _simple_text(_state: dict[str, Any], _arguments: dict[str, Any]) -> str:
    return "This is a simple text response for testing."


def _error(_state: dict[str, Any], _arguments: dict[str, Any]) -> None:
    raise ToolError("This tool intentionally returns an error for testing")


def _echo(_state: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    return {"received": arguments}


# A 1x1 PNG, and a tenth of a second of silence as WAV: fixed bytes, so every run serves the same.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000b4944415478da636000020000050001e9fadcd80000000049454e44ae426082"
)


def _silence() -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(8000)
        wav.writeframes(b"\0\0" * 800)
    return out.getvalue()


WAV = _silence()
ELICIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    },
    "required": ["username", "email"],
}
DEFAULTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "User status",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    },
    "required": [],
}
ENUMS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {
            "type": "string",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
    "required": [],
}


def _blocks(*blocks: Any) -> Any:
    return lambda _state, _arguments: ToolResult(list(blocks))


def _said(prefix: str) -> Any:
    def handler(_state: dict[str, Any], _arguments: dict[str, Any], replies: Sequence[Reply]) -> ToolResult:
        answer = replies[0].answer or {}
        if replies[0].kind == "sampling":
            return ToolResult([Text(text=f"{prefix}{answer.get('content', {}).get('text', '')}")])
        return ToolResult(
            [Text(text=f"{prefix}action={answer.get('action')}, content={answer.get('content')}")]
        )

    return handler


def _tool(
    name: str, handler: Any, *, schema: dict[str, Any] = NO_ARGUMENTS, steps: Sequence[Any] = ()
) -> Tool:
    return Tool(
        name=name, description=f"The suite's {name}.", input_schema=schema, handler=handler, steps=steps
    )


def _content_tools() -> list[Tool]:
    mixed = EmbeddedResource(
        uri="test://mixed-content-resource", mime_type="application/json", text='{"test":"data","value":123}'
    )
    embedded = EmbeddedResource(
        uri="test://embedded-resource", mime_type="text/plain", text="This is an embedded resource content."
    )
    return [
        _tool("test_image_content", _blocks(Image(data=PNG, mime_type="image/png"))),
        _tool("test_audio_content", _blocks(Audio(data=WAV, mime_type="audio/wav"))),
        _tool("test_embedded_resource", _blocks(embedded)),
        _tool(
            "test_multiple_content_types",
            _blocks(Text(text="Multiple content types test:"), Image(data=PNG, mime_type="image/png"), mixed),
        ),
    ]


def _step_tools() -> list[Tool]:
    done = _blocks(Text(text="Tool execution completed"))
    text_argument = {"type": "string"}
    return [
        _tool(
            "test_tool_with_logging",
            done,
            steps=[
                Log(data="Tool execution started"),
                Log(data="Tool processing data", delay_s=0.05),
                Log(data="Tool execution completed", delay_s=0.05),
            ],
        ),
        _tool(
            "test_tool_with_progress",
            done,
            steps=[
                Progress(progress=0, total=100),
                Progress(progress=50, total=100, delay_s=0.05),
                Progress(progress=100, total=100, delay_s=0.05),
            ],
        ),
        _tool(
            "test_sampling",
            _said("LLM response: "),
            schema={"type": "object", "properties": {"prompt": text_argument}, "required": ["prompt"]},
            steps=[Sample(prompt="{prompt}", max_tokens=100)],
        ),
        _tool(
            "test_elicitation",
            _said("User response: "),
            schema={"type": "object", "properties": {"message": text_argument}, "required": ["message"]},
            steps=[Elicit(message="{message}", schema=ELICIT_SCHEMA)],
        ),
        _tool(
            "test_elicitation_sep1034_defaults",
            _said("Elicitation completed: "),
            steps=[Elicit(message="Please review the defaults", schema=DEFAULTS_SCHEMA)],
        ),
        _tool(
            "test_elicitation_sep1330_enums",
            _said("Elicitation completed: "),
            steps=[Elicit(message="Please choose", schema=ENUMS_SCHEMA)],
        ),
        _tool(
            "test_reconnection",
            _blocks(Text(text="Reconnection test completed successfully")),
            steps=[CloseStream(), Progress(progress=1, total=1, delay_s=0.1)],
        ),
    ]


RESOURCES = [
    Resource(
        uri="test://static-text", name="static-text", mime_type="text/plain", text="A static text resource."
    ),
    Resource(uri="test://static-binary", name="static-binary", mime_type="image/png", blob=PNG),
    Resource(uri="test://watched-resource", name="watched-resource", mime_type="text/plain", text="Watched."),
]
TEMPLATES = [
    ResourceTemplate(
        uri_template="test://template/{id}/data",
        name="template-data",
        mime_type="application/json",
        text='{"id":"{id}","data":"Data for ID: {id}"}',
        completions={"id": ["123", "456"]},
    )
]
PROMPTS = [
    Prompt(
        name="test_simple_prompt",
        description="A prompt without arguments.",
        messages=[PromptMessage(role="user", content=Text(text="This is a simple prompt for testing."))],
    ),
    Prompt(
        name="test_prompt_with_arguments",
        description="A prompt with two arguments.",
        arguments=[
            PromptArgument(
                name="arg1", description="First argument", required=True, completions=["paris", "park"]
            ),
            PromptArgument(name="arg2", description="Second argument", required=True),
        ],
        messages=[
            PromptMessage(
                role="user", content=Text(text="Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")
            )
        ],
    ),
    Prompt(
        name="test_prompt_with_embedded_resource",
        description="A prompt that embeds a resource.",
        arguments=[
            PromptArgument(name="resourceUri", description="URI of the resource to embed", required=True)
        ],
        messages=[
            PromptMessage(
                role="user",
                content=EmbeddedResource(
                    uri="{resourceUri}", mime_type="text/plain", text="Embedded resource content."
                ),
            ),
            PromptMessage(role="user", content=Text(text="Please process the embedded resource above.")),
        ],
    ),
    Prompt(
        name="test_prompt_with_image",
        description="A prompt with an image.",
        messages=[
            PromptMessage(role="user", content=Image(data=PNG, mime_type="image/png")),
            PromptMessage(role="user", content=Text(text="Please analyze the image above.")),
        ],
    ),
]


def everything_server() -> MockServer:
    return MockServer(
        "everything",
        [
            Tool(
                name="test_simple_text",
                description="Returns a simple text.",
                input_schema=NO_ARGUMENTS,
                handler=_simple_text,
            ),
            Tool(
                name="test_error_handling",
                description="Always fails with a tool error.",
                input_schema=NO_ARGUMENTS,
                handler=_error,
            ),
            Tool(
                name="json_schema_2020_12_tool",
                description="Tool with JSON Schema 2020-12 features",
                input_schema=SCHEMA_2020_12,
                handler=_echo,
            ),
            *_content_tools(),
            *_step_tools(),
        ],
        resources=RESOURCES,
        resource_templates=TEMPLATES,
        prompts=PROMPTS,
        sessions=True,
    )


PACK = Pack(name="mcp-conformance", scenarios=[], mcp_servers={"everything": everything_server})
