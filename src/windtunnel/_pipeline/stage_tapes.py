"""The tapes stage: every committed tape of the selected packs for this runtime, replayed through it.

Tapes live in `<pack>/tapes/<runtime>/` (windtunnel._tapes.lifecycle.committed_tapes, the same layout
`wt tapes verify` checks). Only packs that declare the `replay` profile are replayed; a pack that does not
gets a NOT_MEASURED observation saying so, and a runtime with no tapes gets one too, so a runtime is never
certified on tapes it does not have (and never silently passes either).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from windtunnel._bundle.models import CheckRecord, CheckStatus
from windtunnel._packs.pack import Pack
from windtunnel._pipeline.context import StageContext, safe

REPLAY = "replay"
# Each tape replays on a stack of its own (network, mocks, gateway, runtime), so replays are independent;
# most of a replay is waiting for containers to start, so a few at once fit even on 2 cores.
REPLAYS_AT_ONCE = 3


def replayable_packs(ctx: StageContext) -> tuple[list[Pack], list[Pack]]:
    """The selected packs, split into those that declare the replay profile and those that do not."""
    packs = list({item.pack.name: item.pack for item in ctx.selected}.values())
    return [p for p in packs if REPLAY in p.profiles], [p for p in packs if REPLAY not in p.profiles]


def tapes_stage(ctx: StageContext) -> list[CheckRecord]:
    from windtunnel._tapes.lifecycle import committed_tapes

    replayed, undeclared = replayable_packs(ctx)
    checks = [_undeclared(ctx, pack) for pack in undeclared]
    tapes = [(file.pack or "", file.path) for file in committed_tapes(replayed, safe(ctx.run.name))]
    if not tapes:
        where = "the selected packs that declare the replay profile"
        detail = f"no committed tapes for {ctx.run.name} in {where}"
        return [*checks, ctx.check("committed", CheckStatus.NOT_MEASURED, detail, scored=False)]
    from windtunnel._tapes.stage import replay_tape_check

    with ThreadPoolExecutor(max_workers=REPLAYS_AT_ONCE, thread_name_prefix="wt-tape") as pool:
        replayed_checks = list(pool.map(lambda tape: replay_tape_check(ctx, *tape), tapes))  # in tape order
    return checks + replayed_checks


def _undeclared(ctx: StageContext, pack: Pack) -> CheckRecord:
    declared = ", ".join(pack.profiles) or "none"
    detail = (
        f"pack {pack.name} does not declare the replay profile (Pack.profiles: {declared}), so its tapes are "
        f"not replayed for {ctx.run.name}; add 'replay' to Pack(profiles=...) to certify them"
    )
    return ctx.check(f"{safe(pack.name)}/profile", CheckStatus.NOT_MEASURED, detail, scored=False)
