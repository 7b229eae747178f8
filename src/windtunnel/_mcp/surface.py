"""The mcp SDK handlers of what a mock declares beyond tools: resources, prompts, completions, logging level.

Each handler is registered only when the pack declared what it serves, so the SDK announces exactly
those capabilities (it derives them from the registered handlers) and a tools-only pack's mock answers
every other method with JSON-RPC -32601, as it always did. Every request is recorded (`/wt/requests`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from windtunnel._core.mock_kit import MockHost, MockServer
from windtunnel._mcp.steps import LogLevels, session_id

Ctx = ServerRequestContext[Any, Any]
MAX_COMPLETIONS = 100  # the spec's cap on completion values per answer
RESOURCE_NOT_FOUND = -32002  # the spec's error code for resources/read of an unknown URI


def register(server: Server[Any], host: MockHost, levels: LogLevels) -> None:
    """Add the handlers the host's MockServer calls for, by what it declares."""
    mock = host.server
    if mock.resources or mock.resource_templates:
        _resources(server, host, subscribe=mock.sessions)
    if mock.prompts:
        _prompts(server, host)
    if mock.completes:
        server.add_request_handler(
            "completion/complete", types.CompleteRequestParams, _recorded(host, _complete)
        )
    if mock.logs:

        async def set_level(ctx: Ctx, params: types.SetLevelRequestParams) -> types.EmptyResult:
            levels.set(session_id(ctx), params.level)
            host.server.record_request("logging/setLevel", {"level": params.level}, {})
            return types.EmptyResult()

        # Registered directly: the SDK's on_set_logging_level warns that logging leaves in 2026-07-28,
        # but the handshake versions this mock serves have it.
        server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, set_level)


Answer = Callable[[MockServer, Any], types.Result]


def _recorded(host: MockHost, answer: Answer) -> Callable[[Ctx, Any], Awaitable[types.Result]]:
    """A handler that answers from the live MockServer and records the request, refusals included."""

    async def handle(ctx: Ctx, params: Any) -> types.Result:
        mock = host.server
        wire = params.model_dump(by_alias=True, mode="json", exclude_none=True, exclude={"meta"})
        try:
            result = answer(mock, params)
        except MCPError as exc:
            mock.record_request(ctx.method, wire, None, exc.error.message)
            raise
        mock.record_request(
            ctx.method, wire, result.model_dump(by_alias=True, mode="json", exclude_none=True)
        )
        return result

    return handle


def _resources(server: Server[Any], host: MockHost, *, subscribe: bool) -> None:
    def listing(mock: MockServer, _params: Any) -> types.Result:
        return types.ListResourcesResult.model_validate({"resources": [r.listing() for r in mock.resources]})

    def templates(mock: MockServer, _params: Any) -> types.Result:
        found = [template.listing() for template in mock.resource_templates]
        return types.ListResourceTemplatesResult.model_validate({"resourceTemplates": found})

    def read(mock: MockServer, params: types.ReadResourceRequestParams) -> types.Result:
        return types.ReadResourceResult.model_validate({"contents": [_contents(mock, str(params.uri))]})

    def watch(mock: MockServer, params: Any) -> types.Result:
        _contents(mock, str(params.uri))  # only a resource this mock serves can be watched
        return types.EmptyResult()

    paged = types.PaginatedRequestParams
    server.add_request_handler("resources/list", paged, _recorded(host, listing))
    server.add_request_handler("resources/templates/list", paged, _recorded(host, templates))
    server.add_request_handler("resources/read", types.ReadResourceRequestParams, _recorded(host, read))
    if subscribe:  # updates could reach a subscriber only on a session's stream
        server.add_request_handler(
            "resources/subscribe", types.SubscribeRequestParams, _recorded(host, watch)
        )
        server.add_request_handler(
            "resources/unsubscribe", types.UnsubscribeRequestParams, _recorded(host, watch)
        )


def _contents(mock: MockServer, uri: str) -> dict[str, Any]:
    for resource in mock.resources:
        if resource.uri == uri:
            return resource.contents({})
    for template in mock.resource_templates:
        values = template.match(uri)
        if values is not None:
            return template.contents(uri, values)
    known = ", ".join(r.uri for r in mock.resources) or "none"
    raise MCPError(
        code=RESOURCE_NOT_FOUND, message=f"no resource {uri!r} on {mock.name!r}; resources: {known}"
    )


def _prompts(server: Server[Any], host: MockHost) -> None:
    def listing(mock: MockServer, _params: Any) -> types.Result:
        return types.ListPromptsResult.model_validate({"prompts": [p.listing() for p in mock.prompts]})

    def get(mock: MockServer, params: types.GetPromptRequestParams) -> types.Result:
        prompt = next((p for p in mock.prompts if p.name == params.name), None)
        if prompt is None:
            known = ", ".join(p.name for p in mock.prompts)
            raise MCPError(code=types.INVALID_PARAMS, message=f"no prompt {params.name!r}; prompts: {known}")
        given = dict(params.arguments or {})
        missing = [a.name for a in prompt.arguments if a.required and a.name not in given]
        if missing:
            raise MCPError(
                code=types.INVALID_PARAMS, message=f"prompt {prompt.name!r} needs {', '.join(missing)}"
            )
        messages = [message.wire(given) for message in prompt.messages]
        return types.GetPromptResult.model_validate({"description": prompt.description, "messages": messages})

    server.add_request_handler("prompts/list", types.PaginatedRequestParams, _recorded(host, listing))
    server.add_request_handler("prompts/get", types.GetPromptRequestParams, _recorded(host, get))


def _complete(mock: MockServer, params: types.CompleteRequestParams) -> types.Result:
    """The declared values of the argument that start with what the client typed, in declared order."""
    ref, argument = params.ref, params.argument
    offered: tuple[str, ...] = ()
    if isinstance(ref, types.PromptReference):
        prompt = next((p for p in mock.prompts if p.name == ref.name), None)
        arg = next((a for a in prompt.arguments if a.name == argument.name), None) if prompt else None
        offered = tuple(arg.completions) if arg else ()
    else:
        template = next((t for t in mock.resource_templates if t.uri_template == ref.uri), None)
        offered = tuple(template.completions.get(argument.name, ())) if template else ()
    values = [value for value in offered if value.startswith(argument.value)]
    completion = {
        "values": values[:MAX_COMPLETIONS],
        "total": len(values),
        "hasMore": len(values) > MAX_COMPLETIONS,
    }
    return types.CompleteResult.model_validate({"completion": completion})
