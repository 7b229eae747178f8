"""--scenario/--tag/--pack/--owner/--tier: the same meaning in every verb.

Within one flag, values are alternatives (any may match); across flags, all must hold. Values are
exact names or shell-style globs (`refund_*`). A value that matches nothing is an error, so a typo never
silently selects less. --tier takes run tier names; without it, the gate tiers run (smoke and stable,
plus live-flaky with a live upstream): quarantined cases run only when asked (windtunnel._core.tiers).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase

from windtunnel._core.tiers import LIVE_FLAKY, TIERS, default_tiers, tier_of, unknown_tiers
from windtunnel._packs.pack import Pack
from windtunnel._scenario.model import Scenario
from windtunnel.errors import SelectionError


@dataclass(frozen=True, slots=True, kw_only=True)
class Selection:
    scenarios: Sequence[str] = ()
    tags: Sequence[str] = ()
    packs: Sequence[str] = ()
    owners: Sequence[str] = ()
    tiers: Sequence[str] = ()
    live_upstream: bool = False
    """Whether the model upstream is live: only then do live-flaky cases run (windtunnel._core.tiers)."""

    def run_tiers(self) -> tuple[str, ...]:
        """The tiers this selection runs: --tier's values, else the default ones; bad values are errors."""
        wrong = unknown_tiers(self.tiers)
        if wrong:
            raise SelectionError(
                f"--tier {wrong[0]!r} is not a run tier",
                hint=f"use one of {', '.join(TIERS)}",
                field="--tier",
            )
        if LIVE_FLAKY in self.tiers and not self.live_upstream:
            raise SelectionError(
                "--tier live-flaky: live-flaky cases run only against a live model upstream, and there is none",
                hint="use `wt run` with WT_GATEWAY_MODE=live (or record) and WT_UPSTREAM_URL; selftest, prove "
                "and certify script inference, so they never run live-flaky cases",
                field="--tier",
            )
        return tuple(dict.fromkeys(self.tiers)) or default_tiers(live_upstream=self.live_upstream)


@dataclass(frozen=True, slots=True)
class Selected:
    """A selected scenario and the pack that owns it."""

    pack: Pack
    scenario: Scenario


def select(packs: Sequence[Pack], selection: Selection) -> list[Selected]:
    """Every scenario matching the selection, in pack order; raise when a value or the whole matches nothing."""
    everything = [Selected(pack, scenario) for pack in packs for scenario in pack.scenarios]
    if not everything:
        asked = f" (--pack {', '.join(map(repr, selection.packs))} names none)" if selection.packs else ""
        raise SelectionError(
            f"no scenarios found: no packs were loaded{asked}",
            hint="pass --pack PATH to a pack directory, install a package that registers packs, "
            "or list packs under [tool.windtunnel] packs",
            field="--pack",
        )
    criteria = (
        ("--scenario", selection.scenarios, lambda s: [s.scenario.name]),
        ("--tag", selection.tags, lambda s: list(s.scenario.tags)),
        ("--pack", selection.packs, lambda s: [s.pack.name]),
        ("--owner", selection.owners, lambda s: [s.scenario.owner or ""]),
        ("--tier", selection.tiers, lambda s: [tier_of(s.scenario)]),
    )
    tiers = selection.run_tiers()
    chosen = everything
    for flag, values, keys in criteria:
        for value in values:
            if not any(fnmatchcase(key, value) for item in everything for key in keys(item)):
                known = sorted({key for item in everything for key in keys(item) if key})
                raise SelectionError(
                    f"{flag} {value!r} matches nothing",
                    hint=f"known values: {', '.join(known) or 'none'}",
                    field=flag,
                )
        if values:
            chosen = [item for item in chosen if any(fnmatchcase(k, v) for k in keys(item) for v in values)]
    if not chosen:
        raise SelectionError(
            "the selection matches no scenario (each flag matched something, but not together)",
            hint="loosen one of --scenario/--tag/--pack/--owner/--tier",
        )
    return _in_tiers(chosen, tiers)


def _in_tiers(chosen: list[Selected], tiers: tuple[str, ...]) -> list[Selected]:
    """The chosen scenarios of the tiers that run; when none is left, the error names the tiers skipped."""
    kept = [item for item in chosen if tier_of(item.scenario) in tiers]
    if kept:
        return kept
    skipped = sorted({tier_of(item.scenario) for item in chosen})
    raise SelectionError(
        f"the selection holds only scenarios of tiers that do not run here ({', '.join(skipped)}); "
        f"running: {', '.join(tiers)}",
        hint="pass --tier quarantined to run quarantined cases (they never gate); live-flaky cases need a "
        "live upstream (wt run with WT_GATEWAY_MODE=live or record)",
        field="--tier",
    )
