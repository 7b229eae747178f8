"""Re-record a tape by sending its recorded requests, in order, to an upstream through record mode.

This refreshes the answers to the same requests. When an agent's later requests depend on earlier answers
and the model now answers differently, the refreshed tape will not replay that agent's run: then run the
scenario again in the record profile instead. Either way the result is a run tape, never a golden one;
it becomes golden only through `promote` after a passing run.
"""

from __future__ import annotations

from pathlib import Path

from windtunnel._chat.mode import ChatRequest
from windtunnel._tapes.errors import TapeNotRecorded
from windtunnel._tapes.model import Tape
from windtunnel._tapes.policy import Clock, utcnow
from windtunnel._tapes.record import RecordMode
from windtunnel._tapes.store import load_tape


async def rerecord(
    tape_path: Path, *, upstream: str, api_key: str | None, out_dir: Path, clock: Clock = utcnow
) -> Tape:
    """Write `out_dir/<tape>.jsonl` with fresh answers; nothing is written unless every request succeeds.

    The run tape names no source run (no run recorded it: the requests were re-sent), and keeps the old
    tape's runtime, pack and scenario.
    """
    old = load_tape(tape_path)
    lineage = old.header.lineage
    mode = RecordMode(
        upstream=upstream,
        api_key=api_key,
        tape_path=out_dir / f"{old.name}.jsonl",
        tape_name=old.name,
        clock=clock,
        # The same runtime, pack and scenario: promotion then takes a score of that scenario's replay run.
        lineage={"runtime": lineage.runtime, "pack": lineage.pack, "scenario": lineage.scenario},
    )
    for interaction in old.interactions:
        request = interaction.request
        reply = await mode.complete(ChatRequest(method=request.method, path=request.path, body=request.body))
        if reply.error_code == "upstream_unreachable":
            await mode.abort()
            raise TapeNotRecorded(
                f"re-recording {tape_path} stopped at seq {interaction.seq}: {reply.error}",
                hint="check --upstream and the API key variable; nothing was written",
                tape=str(tape_path),
            )
    await mode.aclose()
    return mode.finish()
