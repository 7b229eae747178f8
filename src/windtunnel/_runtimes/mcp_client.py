"""What a runtime's MCP client declares it hands the model, `[mcp]` in runtime.toml (the mcp_client checks).

    [mcp]
    content = ["image", "resource"]   # content types of a tool result that reach the model
    image = "note"                    # how an image reaches it: "native" (default) or "note"
    result_limit = { chars = 50000, reason = "..." }   # the most characters of one tool result that
                                      # reach the model, and why (default: no limit)
    elicitation = "refuse"            # its answer to a server's elicitation request during a call
    sampling = "refuse"               # its answer to a server's sampling request during a call
    resources = "none"                # how a server's resources reach the model: "none" or "context"

`content` names MCP content types a tool result may hold besides text: `image` (an image block),
`resource` (an embedded resource's contents), `audio` (an audio block: the wire's audio part, else a note
naming its MIME type, never its base64), `resource_link` (a link's URI and name). `image = "native"`
means an image block of the declared wire (Messages `image`, Responses `input_image`, Chat `image_url`);
`note` is the visible fallback of a
wire whose tool results hold no image: the result's text names the image and its MIME type, never its
base64. A content type left out is INFO in its check, never PASSED or FAILED (docs/conformance.md).

`result_limit` declares that the runtime's MCP client hands the model at most `chars` characters of one
tool result whole (Claude Code saves a longer one to a file and sends a preview): every result up to the
limit must still reach the model byte for byte; one over it that arrives altered makes `long_tool_results`
INFO with the reason, never PASSED.

`elicitation` is how the client answers a server's elicitation/create during a tool call: "refuse" (a
JSON-RPC error, e.g. a client that offers no elicitation), "decline" or "cancel" (that action), "accept"
(content valid against the requested schema). `sampling`: "refuse", or "model" (a sampling/createMessage
answered by a model call through the runtime's model endpoint). Left out: whatever the client does is
INFO, except leaving the request unanswered, which fails either way. `resources`: "context" (each resource
a server lists is read and its text put in the model's context for a turn) or "none" (declared unsupported).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from windtunnel._configfile import Strict, names_in, spec

CONTENT_TYPES = ("image", "resource", "audio", "resource_link")
"""The content types a runtime may declare (`[mcp] content`), each with its mcp_client check."""
IMAGE_FORMS = ("native", "note")
ELICITATION = ("refuse", "decline", "cancel", "accept")
SAMPLING = ("refuse", "model")
RESOURCES = ("none", "context")


class ResultLimitTable(Strict):
    chars: int = spec(
        ...,
        expect="a whole number of characters, at least 1",
        example='result_limit = { chars = 50000, reason = "..." } under [mcp]',
        ge=1,
    )
    reason: str = spec(
        ...,
        expect="why longer results do not reach the model whole (not empty)",
        example='result_limit = { chars = 50000, reason = "the CLI saves longer results to a file" } under [mcp]',
        pattern=r"\S",
    )


@dataclass(frozen=True, slots=True)
class ResultLimit:
    """The declared limit: at most `chars` characters of one tool result reach the model whole, and why."""

    chars: int
    reason: str


class McpTable(Strict):
    content: Annotated[list[str] | None, names_in(CONTENT_TYPES, "content type")] = spec(
        expect=f"a list of MCP content types ({', '.join(CONTENT_TYPES)})",
        example='content = ["image", "resource"] under [mcp]',
    )
    image: Literal["native", "note"] | None = spec(
        expect=f"one of {', '.join(repr(f) for f in IMAGE_FORMS)} (how an image result reaches the model)",
        example='image = "note" under [mcp] (or leave it out: native)',
    )
    result_limit: ResultLimitTable | None = spec(
        expect="a table of chars (the most characters of one tool result that reach the model) and reason",
        example='result_limit = { chars = 50000, reason = "why" } under [mcp] (or leave it out: no limit)',
    )

    elicitation: Literal["refuse", "decline", "cancel", "accept"] | None = spec(
        expect=f"one of {', '.join(repr(f) for f in ELICITATION)} (its answer to an elicitation request)",
        example='elicitation = "refuse" under [mcp] (or leave it out: not declared)',
    )
    sampling: Literal["refuse", "model"] | None = spec(
        expect=f"one of {', '.join(repr(f) for f in SAMPLING)} (its answer to a sampling request)",
        example='sampling = "refuse" under [mcp] (or leave it out: not declared)',
    )
    resources: Literal["none", "context"] | None = spec(
        expect=f"one of {', '.join(repr(f) for f in RESOURCES)} (how a server's resources reach the model)",
        example='resources = "none" under [mcp] (or leave it out: not declared)',
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class McpClientPolicy:
    """The merged `[mcp]` of a runtime; the default declares no content beyond text."""

    content: frozenset[str] = frozenset()
    image: str = "native"
    result_limit: ResultLimit | None = None
    elicitation: str | None = None
    sampling: str | None = None
    resources: str | None = None

    def over(self, table: McpTable | None) -> McpClientPolicy:
        """This policy with `table`'s keys over it (a variant inherits what it leaves out)."""
        if table is None:
            return self
        return McpClientPolicy(
            content=frozenset(table.content) if table.content is not None else self.content,
            image=table.image if table.image is not None else self.image,
            result_limit=ResultLimit(table.result_limit.chars, table.result_limit.reason)
            if table.result_limit is not None
            else self.result_limit,
            elicitation=table.elicitation if table.elicitation is not None else self.elicitation,
            sampling=table.sampling if table.sampling is not None else self.sampling,
            resources=table.resources if table.resources is not None else self.resources,
        )
