"""`--profile`: where model traffic comes from, and which packs run under it (a filter, never an override).

Seed 003 §11.2 describes a flag whose help said "override" while its code filtered. Here the help text is
the behaviour, word for word, and a test pins the two together.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from windtunnel._packs.pack import PROFILES, Pack
from windtunnel.errors import SelectionError

PROFILE_HELP = (
    "where model traffic comes from: live (proxy to the upstream, write nothing), record (proxy and write "
    "a tape), replay (serve from committed tapes, no network). This is a filter, not an override: only "
    "packs whose Pack.profiles declares PROFILE are selected, and the others are skipped and listed; if "
    "no selected pack declares it, the command fails. Without --profile no pack is filtered out."
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
