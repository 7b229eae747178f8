"""Run tiers: *when* a scenario runs (smoke, stable, live-flaky, quarantined), never what it asserts.

What a case asserts is its assertion kinds (Outcome, Security, Benchmark: windtunnel._scenario.expectations);
the run tier is the other axis, and the two words are never used for each other (docs/estate.md).

- `smoke`: the fast cases run on every change; they gate.
- `stable`: the merge gate; they gate. A scenario with no tier of its own takes its pack's (default stable).
- `live-flaky`: cases whose answer depends on a live model; they run only with a live upstream (the model
  gateway in live or record mode), are retried when they fail, and every attempt is recorded as such.
- `quarantined`: run only when asked (`--tier quarantined`) and never gate: their result is recorded and
  never changes a verdict or an exit code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

Tier = Literal["smoke", "stable", "live-flaky", "quarantined"]
TIERS: tuple[Tier, ...] = ("smoke", "stable", "live-flaky", "quarantined")
DEFAULT_TIER: Tier = "stable"
GATE_TIERS: tuple[Tier, ...] = ("smoke", "stable")
"""What `wt certify` gates on, and what every verb runs when no --tier is given (plus live-flaky when the
upstream is live)."""
LIVE_FLAKY: Tier = "live-flaky"
QUARANTINED: Tier = "quarantined"
LIVE_MODES = frozenset({"live", "record"})
DEFAULT_FLAKY_RETRIES = 2
"""How often a failed live-flaky run is tried again (each attempt recorded), unless --flaky-retries says."""


def tier_of(scenario: Any) -> Tier:
    """The scenario's run tier; one built outside a pack, with none of its own, is stable."""
    tier: Tier | None = getattr(scenario, "tier", None)
    return tier or DEFAULT_TIER


def gating(tier: str | None) -> bool:
    """Whether a result of this tier may change a verdict or an exit code: all but quarantined do."""
    return tier != QUARANTINED


def default_tiers(*, live_upstream: bool) -> tuple[Tier, ...]:
    """The tiers a verb runs when no --tier is given."""
    return (*GATE_TIERS, LIVE_FLAKY) if live_upstream else GATE_TIERS


def live_upstream(env: Mapping[str, str]) -> bool:
    """A live model upstream: the gateway proxies to a real model (WT_GATEWAY_MODE live or record)."""
    return env.get("WT_GATEWAY_MODE", "script") in LIVE_MODES


def is_tier(value: object) -> bool:
    return value in TIERS


def unknown_tiers(values: Sequence[str]) -> list[str]:
    return [value for value in values if value not in TIERS]


def certify_tiers(requested: Sequence[str]) -> tuple[str, ...]:
    """The --tier values `wt certify` selects with: none (its gate: smoke and stable), or both of those and
    quarantined (run, recorded, never gating). Anything else is refused before any stage runs."""
    from windtunnel.errors import SelectionError

    if not requested:
        return ()
    missing = [tier for tier in GATE_TIERS if tier not in requested]
    if missing:
        raise SelectionError(
            f"wt certify gates on smoke and stable cases; --tier leaves out {', '.join(missing)}",
            hint="name them: --tier smoke --tier stable (add --tier quarantined to also run quarantined "
            "cases, which never gate); to run fewer tiers, use wt selftest --tier",
            field="--tier",
        )
    return tuple(dict.fromkeys(requested))
