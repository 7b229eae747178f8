"""The tapes stage: every committed tape of the selected packs for this runtime, replayed through it.

Tapes live in `<pack>/tapes/<runtime>/`; a runtime with none gets one unscored observation, so a
third-party runtime is never certified on tapes it does not have (and never silently passes either).
"""

from __future__ import annotations

from pathlib import Path

from windtunnel._bundle.models import CheckRecord, CheckStatus
from windtunnel._pipeline.context import StageContext, safe


def committed_tapes(ctx: StageContext) -> list[tuple[str, Path]]:
    """(pack name, tape path) for every committed tape of this runtime in the selected packs."""
    packs = {item.pack.name: item.pack for item in ctx.selected}
    found = []
    for name, pack in packs.items():
        if pack.root is None:
            continue
        directory = pack.root / "tapes" / safe(ctx.run.name)
        found += [(name, path) for path in sorted(directory.glob("*.jsonl"))]
    return found


def tapes_stage(ctx: StageContext) -> list[CheckRecord]:
    tapes = committed_tapes(ctx)
    if not tapes:
        return [
            ctx.check(
                "committed",
                CheckStatus.NOT_MEASURED,
                f"no committed tapes for {ctx.run.name} in the selected packs",
                scored=False,
            )
        ]
    from windtunnel._tapes.stage import replay_tape_check

    return [replay_tape_check(ctx, pack, path) for pack, path in tapes]
