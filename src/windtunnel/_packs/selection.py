"""--scenario/--tag/--pack/--owner: the same meaning in every verb.

Within one flag, values are alternatives (any may match); across flags, all must hold. Values are
exact names or shell-style globs (`refund_*`). A value that matches nothing is an error, so a typo never
silently selects less.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase

from windtunnel._packs.pack import Pack
from windtunnel._scenario.model import Scenario
from windtunnel.errors import SelectionError


@dataclass(frozen=True, slots=True, kw_only=True)
class Selection:
    scenarios: Sequence[str] = ()
    tags: Sequence[str] = ()
    packs: Sequence[str] = ()
    owners: Sequence[str] = ()

    def is_empty(self) -> bool:
        return not (self.scenarios or self.tags or self.packs or self.owners)


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
    )
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
            hint="loosen one of --scenario/--tag/--pack/--owner",
        )
    return chosen
