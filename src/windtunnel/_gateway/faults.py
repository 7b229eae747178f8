"""Serving a scripted model fault in the call's dialect (windtunnel._core.faults), logged with its kind.

Unlike a refusal, a fault answer carries no `x-should-retry: false`: the runtime's own retry policy is what
a fault check watches, so the client decides. A 429 or 503 sends `retry-after` when the script set one.
Streamed requests break off after the scripted number of events; unstreamed ones after half their bytes.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

import anyio
from starlette.responses import JSONResponse, Response, StreamingResponse

from windtunnel._chat.mode import ModeReply
from windtunnel._core.faults import ModelFault
from windtunnel._gateway.calls import Call

FAULT_CODES = {
    "rate_limited": "rate_limit_exceeded",
    "server_error": "server_error",
    "unavailable": "overloaded",
}
"""The error code each status fault's body carries (Anthropic's envelope maps it to its error type)."""
MALFORMED = b'{"scripted fault": "malformed JSON", '
"""What a malformed answer (or stream event) sends: the start of a JSON object that never closes."""


async def faulted(call: Call, reply: ModeReply, body: Mapping[str, Any]) -> Response | None:
    """The response for the reply's fault; None when the fault only delays the normal answer (slow),
    after that delay."""
    fault = reply.fault
    assert fault is not None
    call.entry["fault"] = fault.to_json()
    if fault.status is not None:
        return _status(call, fault)
    if fault.kind == "slow":
        await anyio.sleep(fault.seconds)
        return None
    assert reply.completion is not None  # script mode renders every answer-breaking fault
    stream = bool(body.get("stream"))
    chunks = _events(call, fault, reply.completion, body) if stream else _bytes(call, fault, reply.completion)
    media = "text/event-stream" if stream else "application/json"
    return StreamingResponse(chunks, status_code=200, media_type=media, headers={"cache-control": "no-cache"})


def _status(call: Call, fault: ModelFault) -> Response:
    assert fault.status is not None
    code = FAULT_CODES[fault.kind]
    message = f"scripted fault: {fault.kind} (HTTP {fault.status})"
    headers = {} if fault.retry_after is None else {"retry-after": _seconds(fault.retry_after)}
    call.failed(fault.status, message, code)
    return JSONResponse(call.dialect.error_body(message, code), status_code=fault.status, headers=headers)


async def _events(
    call: Call, fault: ModelFault, completion: Mapping[str, Any], body: Mapping[str, Any]
) -> AsyncIterator[bytes]:
    """The stream broken as scripted: never its terminal event, nor the dialect's done frame."""
    dialect = call.dialect
    events = dialect.events(completion, body)
    sent = events[: min(fault.after_events, len(events) - 1)]
    partial = dialect.logged_response(dialect.assemble(sent)) if sent else None
    cause = f"scripted fault: {fault.kind} after {len(sent)} of {len(events)} stream events"
    call.broke_off(cause, f"fault_{fault.kind}", message=partial, usage=None)
    yield b"".join(dialect.frame(event) for event in sent)
    if fault.kind == "malformed":
        yield b"data: " + MALFORMED + b"\n\n"
    elif fault.kind == "stall":
        await anyio.sleep(fault.seconds)


async def _bytes(call: Call, fault: ModelFault, completion: Mapping[str, Any]) -> AsyncIterator[bytes]:
    """An unstreamed answer broken as scripted: half its JSON (stalling first), or malformed JSON."""
    whole = json.dumps(completion).encode()
    call.broke_off(
        f"scripted fault: {fault.kind} (unstreamed answer)", f"fault_{fault.kind}", message=None, usage=None
    )
    if fault.kind == "malformed":
        yield MALFORMED
        return
    yield whole[: len(whole) // 2]
    if fault.kind == "stall":
        await anyio.sleep(fault.seconds)


def _seconds(value: float) -> str:
    """retry-after as HTTP sends it: whole seconds when whole (SDKs also read fractions)."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"
