"""The gateway's tape routes under /wt/tape: what a replay consumed, and writing a recording on demand.

    GET  /wt/tape          replay mode: the tape, requests seen in order with the seq that answered each,
                           consumed/unused counts, unused seqs, refusals, age and staleness;
                           record mode: the tape path, interactions recorded so far, whether it was written
    POST /wt/tape/flush    record mode: write the tape now (atomically, re-checked) ->
                           {"tape", "path", "interactions", "sha256"}

A harness reads GET /wt/tape, or flushes, while the gateway still runs: what the mode finds at shutdown
(the unused report, the written tape) would otherwise end with the container. Other modes answer 409.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from windtunnel._wire.openai_chat import error_body
from windtunnel.errors import TapeError

if TYPE_CHECKING:
    from windtunnel._gateway.state import GatewayState
    from windtunnel._tapes.record import RecordMode
    from windtunnel._tapes.replay import ReplayMode


def tape_routes(state: GatewayState) -> list[Route]:
    async def tape(_request: Request) -> Response:
        replay, record = _tape_modes(state)
        if replay is not None:
            return JSONResponse(replay_status(replay))
        if record is not None:
            return JSONResponse(record_status(record))
        return _not_tape_mode(state)

    async def flush(_request: Request) -> Response:
        _, record = _tape_modes(state)
        if record is None:
            return _not_tape_mode(state, "only record mode writes a tape")
        try:
            written = record.finish()
        except TapeError as exc:
            from windtunnel._tapes.errors import error_code

            return JSONResponse(error_body(str(exc), error_code(exc)), status_code=409)
        assert written.path is not None  # finish() returns the tape reloaded from its file
        return JSONResponse(
            {
                "tape": written.name,
                "path": str(written.path),
                "interactions": len(written.interactions),
                "sha256": hashlib.sha256(written.path.read_bytes()).hexdigest(),
            }
        )

    return [
        Route("/wt/tape", tape, methods=["GET"]),
        Route("/wt/tape/flush", flush, methods=["POST"]),
    ]


def _tape_modes(state: GatewayState) -> tuple[ReplayMode | None, RecordMode | None]:
    """The mode as a replay or record mode; the tapes package is imported only in those modes."""
    if state.mode.name not in {"replay", "record"}:
        return None, None
    from windtunnel._tapes.record import RecordMode
    from windtunnel._tapes.replay import ReplayMode

    mode = state.mode
    return (
        mode if isinstance(mode, ReplayMode) else None,
        mode if isinstance(mode, RecordMode) else None,
    )


def _not_tape_mode(state: GatewayState, why: str = "tapes exist only in replay and record modes") -> Response:
    message = f"the gateway runs in {state.mode.name} mode; {why}"
    return JSONResponse(error_body(message, "not_tape_mode"), status_code=409)


def replay_status(mode: ReplayMode) -> dict[str, Any]:
    """What a replay has consumed so far, judged with the mode's own clock."""
    from windtunnel._tapes.policy import age, is_stale

    tape = mode.tape
    unused = mode.unused()
    answered = [seq for seq in mode.answered if seq is not None]
    return {
        "mode": "replay",
        "tape": {
            "name": tape.name,
            "path": tape.label,
            "interactions": len(tape.interactions),
            "recorded_at": tape.oldest.isoformat(),
            "upstream": mode.upstream,
        },
        "requested": len(mode.seen),
        "consumed": len(answered),
        "unused": [interaction.seq for interaction in unused.unused],
        "requests": [{"seq": seq, **parts} for seq, parts in zip(mode.answered, mode.seen, strict=True)],
        "refusals": [_refusal(exc) for exc in mode.refusals],
        "age_days": round(age(tape, mode.clock).total_seconds() / 86400, 3),
        "max_age_days": mode.max_age.days,
        "stale": is_stale(tape, mode.clock, mode.max_age),
        "strict": mode.strict,
        "warnings": list(mode.warnings),
        "report": unused.render(),
    }


def _refusal(exc: TapeError) -> dict[str, Any]:
    from windtunnel._tapes.errors import error_code

    return {
        "code": error_code(exc),
        "error": type(exc).__name__,
        "message": exc.message,
        "hint": exc.hint,
        "fingerprint": getattr(exc, "fingerprint", None),
        "rerecord_command": getattr(exc, "rerecord_command", None),
    }


def record_status(mode: RecordMode) -> dict[str, Any]:
    return {
        "mode": "record",
        "tape": mode.tape_name,
        "path": str(mode.tape_path),
        "upstream": mode.upstream,
        "interactions": len(mode.interactions),
        "written": mode.written is not None,
    }
