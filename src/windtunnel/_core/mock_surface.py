"""What a pack's MCP mock may declare beyond JSON tools: content blocks, resources, prompts (steps: mock_steps).

Every declaration is plain data. Text fields may hold `{name}` placeholders, filled from the request's
arguments (a tool's arguments, a prompt's arguments, a resource template's URI variables) when the mock
serves it: what a mock sends is a function of what it received, so it stays deterministic. Each value
renders itself in MCP wire shape (`wire()`), the one form the server relays and the evidence records.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from windtunnel._core.frozen import freeze
from windtunnel.errors import PackError

PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def fill(text: str, values: Mapping[str, Any]) -> str:
    """`text` with each `{name}` that names a value replaced by it (a non-string as JSON); others kept."""

    def one(match: re.Match[str]) -> str:
        name = match[1]
        if name not in values:
            return match[0]
        value = values[name]
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

    return PLACEHOLDER.sub(one, text)


def refuse(where: str, problem: str, hint: str) -> PackError:
    return PackError(f"{where}: {problem}", hint=hint, field=where)


def _b64(data: bytes | str, where: str) -> str:
    """Binary data as base64 text: bytes are encoded; a string must already be base64."""
    if isinstance(data, bytes):
        return base64.b64encode(data).decode("ascii")
    try:
        base64.b64decode(data, validate=True)
    except (ValueError, TypeError) as exc:
        raise refuse(
            where, "data is a string that is not base64", "pass the raw bytes, or base64 text"
        ) from exc
    return data


# -- content blocks ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Text:
    """A text block."""

    text: str

    def wire(self, values: Mapping[str, Any]) -> dict[str, Any]:
        return {"type": "text", "text": fill(self.text, values)}


@dataclass(frozen=True, slots=True, kw_only=True)
class _Media:
    """A binary block: raw bytes (or base64 text) and the MIME type; `kind` is its wire type."""

    data: bytes | str
    mime_type: str
    kind: ClassVar[str] = ""

    def __post_init__(self) -> None:
        _b64(self.data, type(self).__name__)

    def wire(self, values: Mapping[str, Any]) -> dict[str, Any]:
        return {"type": self.kind, "data": _b64(self.data, type(self).__name__), "mimeType": self.mime_type}


@dataclass(frozen=True, slots=True, kw_only=True)
class Image(_Media):
    """An image block, e.g. image/png."""

    kind: ClassVar[str] = "image"


@dataclass(frozen=True, slots=True, kw_only=True)
class Audio(_Media):
    """An audio block, e.g. audio/wav."""

    kind: ClassVar[str] = "audio"


@dataclass(frozen=True, slots=True, kw_only=True)
class _Held:
    """What a resource holds, of one MIME type: text (its placeholders filled when served) or a blob
    (bytes), never both. `address` names the field that says which resource, for errors."""

    mime_type: str
    text: str | None = None
    blob: bytes | None = None
    address: ClassVar[str] = "uri"

    def __post_init__(self) -> None:
        if (self.text is None) == (self.blob is None):
            where = f"{type(self).__name__} {getattr(self, self.address)!r}"
            raise refuse(where, "needs text= or blob=", "give exactly one of them")

    def _contents(self, uri: str, values: Mapping[str, Any]) -> dict[str, Any]:
        """The contents in wire shape at `uri`: text (placeholders filled) or base64 blob."""
        if self.text is not None:
            return {"uri": uri, "mimeType": self.mime_type, "text": fill(self.text, values)}
        return {"uri": uri, "mimeType": self.mime_type, "blob": _b64(self.blob or b"", uri)}


@dataclass(frozen=True, slots=True, kw_only=True)
class EmbeddedResource(_Held):
    """A resource's contents inside a result or prompt: text or blob (bytes), never both."""

    uri: str

    def wire(self, values: Mapping[str, Any]) -> dict[str, Any]:
        return {"type": "resource", "resource": self._contents(fill(self.uri, values), values)}


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceLink:
    """A link to a resource the client may read (resources/read), shown by URI and name."""

    uri: str
    name: str
    mime_type: str | None = None
    description: str | None = None

    def wire(self, values: Mapping[str, Any]) -> dict[str, Any]:
        link = {"type": "resource_link", "uri": fill(self.uri, values), "name": self.name}
        return link | _optional(mimeType=self.mime_type, description=self.description)


ContentBlock = Text | Image | Audio | EmbeddedResource | ResourceLink
CONTENT_KINDS = (Text, Image, Audio, EmbeddedResource, ResourceLink)


def _optional(**fields: Any) -> dict[str, Any]:
    return {key: value for key, value in fields.items() if value is not None}


def content_blocks(where: str, blocks: Any) -> tuple[ContentBlock, ...]:
    """`blocks` as a tuple of content blocks; a PackError naming `where` for anything else."""
    frozen = freeze(blocks)
    if not isinstance(frozen, tuple) or not frozen:
        raise refuse(
            where, f"is {frozen!r}; expected a non-empty list of content blocks", "write [Text(...), ...]"
        )
    for index, block in enumerate(frozen):
        if not isinstance(block, CONTENT_KINDS):
            names = ", ".join(kind.__name__ for kind in CONTENT_KINDS)
            raise refuse(f"{where}[{index}]", f"is a {type(block).__name__}", f"use one of {names}")
    return frozen


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a handler returns for content other than JSON: the blocks as given, and optional
    structured content (an object, checked against the tool's output_schema when it has one)."""

    content: Sequence[ContentBlock]
    structured: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "content", content_blocks("ToolResult.content", self.content))
        if self.structured is not None and not isinstance(self.structured, Mapping):
            raise refuse("ToolResult.structured", f"is a {type(self.structured).__name__}", "give an object")

    def wire(self) -> dict[str, Any]:
        result: dict[str, Any] = {"content": [block.wire({}) for block in self.content]}
        if self.structured is not None:
            result["structuredContent"] = dict(self.structured)
        return result


# -- resources and prompts --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Resource(_Held):
    """A resource served by resources/list and resources/read: text or blob (bytes), never both."""

    uri: str
    name: str
    description: str | None = None

    def listing(self) -> dict[str, Any]:
        entry = {"uri": self.uri, "name": self.name, "mimeType": self.mime_type}
        return entry | _optional(description=self.description)

    def contents(self, values: Mapping[str, Any]) -> dict[str, Any]:
        return self._contents(self.uri, values)


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceTemplate(_Held):
    """Resources named by an RFC 6570 URI template, e.g. `test://items/{id}`; `text` may hold `{id}`.

    `completions` maps a URI variable to the values completion/complete offers for it.
    """

    uri_template: str
    name: str
    description: str | None = None
    completions: Mapping[str, Sequence[str]] = field(default_factory=dict)
    address: ClassVar[str] = "uri_template"

    def __post_init__(self) -> None:
        _Held.__post_init__(
            self
        )  # not super(): a slots dataclass is a new class, zero-argument super() fails
        where = f"ResourceTemplate {self.uri_template!r}"
        if not self.variables():
            raise refuse(where, "has no {variable}", "use Resource for a fixed URI")
        for name in self.completions:
            if name not in self.variables():
                raise refuse(
                    where, f"completes {name!r}, not a variable of it", "name a {variable} of the URI"
                )

    def variables(self) -> tuple[str, ...]:
        return tuple(PLACEHOLDER.findall(self.uri_template))

    def match(self, uri: str) -> dict[str, str] | None:
        """The URI variables when `uri` is one of this template's resources, else None."""
        pattern = "".join(
            f"(?P<{part[1:-1]}>[^/]+)" if PLACEHOLDER.fullmatch(part) else re.escape(part)
            for part in re.split(r"(\{[A-Za-z_][A-Za-z0-9_]*\})", self.uri_template)
        )
        found = re.fullmatch(pattern, uri)
        return found.groupdict() if found else None

    def contents(self, uri: str, values: Mapping[str, Any]) -> dict[str, Any]:
        return self._contents(uri, values)

    def listing(self) -> dict[str, Any]:
        entry = {"uriTemplate": self.uri_template, "name": self.name, "mimeType": self.mime_type}
        return entry | _optional(description=self.description)


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptArgument:
    """An argument of a prompt; `completions` are the values completion/complete offers for it."""

    name: str
    description: str | None = None
    required: bool = False
    completions: Sequence[str] = ()

    def listing(self) -> dict[str, Any]:
        return {"name": self.name, "required": self.required} | _optional(description=self.description)


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptMessage:
    """One message of a prompt: a role and one content block (text may hold `{argument}`)."""

    role: Literal["user", "assistant"]
    content: ContentBlock

    def wire(self, values: Mapping[str, Any]) -> dict[str, Any]:
        return {"role": self.role, "content": self.content.wire(values)}


@dataclass(frozen=True, slots=True, kw_only=True)
class Prompt:
    """A prompt served by prompts/list and prompts/get."""

    name: str
    description: str
    messages: Sequence[PromptMessage]
    arguments: Sequence[PromptArgument] = ()

    def __post_init__(self) -> None:
        where = f"Prompt {self.name!r}"
        for name in ("messages", "arguments"):
            object.__setattr__(self, name, freeze(getattr(self, name)))
        if not isinstance(self.messages, tuple) or not self.messages:
            raise refuse(
                where, "has no messages", "give messages=[PromptMessage(role='user', content=Text(...))]"
            )
        for index, message in enumerate(self.messages):
            if not isinstance(message, PromptMessage) or not isinstance(message.content, CONTENT_KINDS):
                raise refuse(
                    f"{where}.messages[{index}]", "is not a PromptMessage", "build it with PromptMessage"
                )
        for index, argument in enumerate(self.arguments):
            if not isinstance(argument, PromptArgument):
                raise refuse(
                    f"{where}.arguments[{index}]", "is not a PromptArgument", "build it with PromptArgument"
                )

    def listing(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": self.name, "description": self.description}
        if self.arguments:
            entry["arguments"] = [argument.listing() for argument in self.arguments]
        return entry
