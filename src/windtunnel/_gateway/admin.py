"""The gateway's admin API under /wt/, present in every mode; the script routes answer 409 outside script mode.

    PUT    /wt/script          {"case", "session": str|null, "decisions": [...]} -> {"installed": {...}}
    DELETE /wt/script          every script; ?session=S only that session's -> {"cleared": n}
    GET    /wt/script          {"global": {...}|null, "sessions": {S: {...}}} with total/served/remaining
    GET    /wt/log?since=N     {"entries": [entries with index >= N], "next": next index}
    DELETE /wt/log             {"cleared": n}
    GET    /wt/health          {"status": "ok", "mode", "models", "side_models", "requests"}
    PUT    /wt/side            {"models": [str, ...]} -> {"side_models": [...]}: the model names whose calls
                               are side traffic (titles, summaries, quota checks), answered beside the script
    GET    /wt/side            {"side_models": [...]}

Errors are OpenAI-style bodies {"error": {"message", "type", "param", "code"}}; `param` names the bad field.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from windtunnel._gateway.script import ScriptMode, parse_install
from windtunnel._wire.openai_chat import error_body
from windtunnel.errors import UsageError

if TYPE_CHECKING:
    from windtunnel._gateway.state import GatewayState


def admin_routes(state: GatewayState) -> list[Route]:
    async def script(request: Request) -> Response:
        mode = state.mode
        if not isinstance(mode, ScriptMode):
            message = f"the gateway runs in {mode.name} mode; scripts exist only in script mode"
            return JSONResponse(error_body(message, "not_script_mode"), status_code=409)
        if request.method == "PUT":
            return await _install(mode, request)
        if request.method == "DELETE":
            return JSONResponse({"cleared": mode.store.clear(request.query_params.get("session") or None)})
        return JSONResponse({"mode": mode.name, **mode.store.snapshot()})

    async def log(request: Request) -> Response:
        if request.method == "DELETE":
            return JSONResponse({"cleared": state.log.clear()})
        raw = request.query_params.get("since", "0")
        try:
            since = int(raw)
        except ValueError:
            message = f"since must be an integer log index, got {raw!r}"
            return JSONResponse(error_body(message, "invalid_request", param="since"), status_code=400)
        return JSONResponse({"entries": state.log.since(since), "next": state.log.next_index})

    async def health(_request: Request) -> Response:
        return JSONResponse(
            {
                "status": "ok",
                "mode": state.mode.name,
                "models": list(state.models),
                "side_models": sorted(state.side_models),
                "requests": state.log.next_index,
                "uptime_s": round(time.time() - state.started_at, 3),
            }
        )

    async def side(request: Request) -> Response:
        if request.method == "PUT":
            try:
                models = _side_models(json.loads(await request.body()))
            except (ValueError, UsageError) as exc:
                message = getattr(exc, "message", None) or f"the body is not JSON: {exc}"
                return JSONResponse(error_body(message, "invalid_request", param="models"), status_code=400)
            state.side_models = frozenset(models)
        return JSONResponse({"side_models": sorted(state.side_models)})

    return [
        Route("/wt/side", side, methods=["GET", "PUT"]),
        Route("/wt/script", script, methods=["GET", "PUT", "DELETE"]),
        Route("/wt/log", log, methods=["GET", "DELETE"]),
        Route("/wt/health", health, methods=["GET"]),
    ]


async def _install(mode: ScriptMode, request: Request) -> Response:
    try:
        body: Any = json.loads(await request.body())
    except ValueError as exc:
        message = f"invalid script: the body is not JSON: {exc}"
        return JSONResponse(error_body(message, "invalid_script", param="body"), status_code=400)
    try:
        install = parse_install(body)
    except UsageError as exc:
        field = getattr(exc, "field", None)
        return JSONResponse(error_body(exc.message, "invalid_script", param=field), status_code=400)
    script = mode.store.install(install.case, install.decisions, install.session)
    return JSONResponse({"installed": script.summary()})


def _side_models(body: Any) -> list[str]:
    models = body.get("models") if isinstance(body, dict) else None
    if not isinstance(models, list) or not all(isinstance(name, str) and name for name in models):
        raise UsageError(
            'side models: send {"models": ["name", ...]}, a list of non-empty model names', field="models"
        )
    return list(models)
