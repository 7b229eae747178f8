"""What a runtime reported for one turn, read the way the runner reads every runtime's response."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from windtunnel._core.agent_runtime import Response
from windtunnel._trace.shapes import call_arguments, call_name, read_response


@dataclass(frozen=True, slots=True)
class Reply:
    """The final answer and the tool calls the runtime reported, each {"name", "arguments"} (the shape of
    an MCP mock's calls(), so the two compare directly); `raw` is the response as Contract C returned it."""

    content: str | None
    tool_calls: list[dict[str, Any]]
    raw: Response

    @classmethod
    def of(cls, response: Response) -> Reply:
        read = read_response(response)
        calls = [{"name": call_name(call), "arguments": call_arguments(call)} for call in read.tool_calls]
        return cls(content=read.content, tool_calls=calls, raw=response)

    @property
    def tool_names(self) -> list[str]:
        return [str(call["name"]) for call in self.tool_calls]
