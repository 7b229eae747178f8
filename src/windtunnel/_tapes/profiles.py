"""`--profile`: a filter on the packs a command selects, by the tape profiles each pack declares; never an override.

A flag whose help said "override" while its code filtered would mislead. Here the help text is
the behaviour, word for word, and a test pins the two together. The flag changes which packs are selected,
never where model traffic comes from: that is each command's own business (replay for the tape stage and
`wt tapes verify`, record for `wt tapes record`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from windtunnel._packs.pack import PROFILES, Pack
from windtunnel.errors import SelectionError

PROFILE_HELP = (
    "a filter on packs, not an override: select only the packs whose Pack.profiles declares PROFILE; the "
    "others are skipped and listed on stderr, and if no selected pack declares it, the command fails. It "
    "never changes where model traffic comes from. Without --profile no pack is filtered out. A pack "
    "declares live (it may run against the upstream, writing nothing), record (its runs may be recorded "
    "to tapes) or replay (its committed tapes are replayed, no network)."
)


def add_profile_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", choices=PROFILES, default=None, metavar="PROFILE", help=PROFILE_HELP)


def profile_filter(packs: Sequence[Pack], profile: str | None) -> list[Pack]:
    """The packs that declare `profile` (all of them when `profile` is None), in the given order.

    Raises SelectionError for an unknown profile, or when packs were given and none declares it.
    """
    if profile is None:
        return list(packs)
    if profile not in PROFILES:
        raise SelectionError(
            f"--profile {profile!r} is not a profile",
            hint=f"use one of {', '.join(PROFILES)}",
            field="--profile",
        )
    kept = [pack for pack in packs if profile in pack.profiles]
    if packs and not kept:
        declared = "; ".join(f"{pack.name}: {', '.join(pack.profiles) or 'none'}" for pack in packs)
        raise SelectionError(
            f"--profile {profile} selects no pack: --profile is a filter and no selected pack declares "
            f"{profile!r} (declared: {declared})",
            hint=f"add {profile!r} to Pack(profiles=...) of the pack you mean, or pick a declared profile",
            field="--profile",
        )
    return kept


def skipped_by_profile(packs: Sequence[Pack], profile: str | None) -> list[Pack]:
    """The packs profile_filter leaves out, so a command can list them."""
    if profile is None:
        return []
    return [pack for pack in packs if profile not in pack.profiles]
