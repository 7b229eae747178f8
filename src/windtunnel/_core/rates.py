"""Model prices: the `[tool.windtunnel.pricing.<model label>]` table of the settings (windtunnel._config).

Rates are per million tokens (the unit providers publish): `input` for prompt tokens not read from the
prompt cache, `cache_read` for prompt tokens read from it (default: the input rate), `output` for
completion tokens. What a call or a run costs at these rates is windtunnel._score.pricing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from windtunnel.errors import ConfigFileError

RATE_KEYS = ("input", "cache_read", "output")
PRICING_HINT = (
    'write [tool.windtunnel.pricing."<model label>"] with input = 2.5, cache_read = 1.25, output = 10.0 '
    "(per million tokens; cache_read is optional and defaults to input)"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Price:
    """One model's rates per million tokens."""

    input: float
    output: float
    cache_read: float

    @property
    def cache_discounted(self) -> bool:
        return self.cache_read != self.input


def parse_pricing(value: Any, where: str, path: Path) -> dict[str, Price]:
    """The `pricing` table of the config: model label -> Price; a bad entry is one clear error."""
    if not isinstance(value, Mapping):
        raise _error(where, path, "pricing", f"pricing must be a table, found {value!r}")
    return {str(label): _price(rates, where, path, str(label)) for label, rates in value.items()}


def _price(rates: Any, where: str, path: Path, label: str) -> Price:
    field = f"pricing.{label}"
    if not isinstance(rates, Mapping):
        raise _error(where, path, field, f"{field} must be a table of rates, found {rates!r}")
    unknown = sorted(set(rates) - set(RATE_KEYS))
    if unknown:
        raise _error(
            where, path, field, f"{field} has unknown key {unknown[0]!r}; known: {', '.join(RATE_KEYS)}"
        )
    for key in ("input", "output"):
        if key not in rates:
            raise _error(where, path, field, f"{field} has no {key} rate")
    for key, rate in rates.items():
        if isinstance(rate, bool) or not isinstance(rate, int | float) or rate < 0:
            raise _error(where, path, field, f"{field}.{key} must be a number >= 0, found {rate!r}")
    return Price(
        input=float(rates["input"]),
        output=float(rates["output"]),
        cache_read=float(rates.get("cache_read", rates["input"])),
    )


def _error(where: str, path: Path, field: str, message: str) -> ConfigFileError:
    return ConfigFileError(f"{where}: {message}", hint=PRICING_HINT, path=str(path), field=field)
