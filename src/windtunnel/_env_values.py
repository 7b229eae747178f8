"""The process environment, read here and nowhere else in the library, and typed values of WT_* variables.

`process_env()` is the one read of `os.environ`: the settings loader (windtunnel._config.load_settings)
takes its snapshot from it once per command, and the CLI passes that (`Settings.env`) down; a library caller
that passes no environment of its own gets the process's from here. A bad value is a one-line config error
naming the variable.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping

from windtunnel.errors import ConfigFileError


def process_env() -> Mapping[str, str]:
    """The process environment as it is now (never cached: a test or a signal handler may change it)."""
    return os.environ


def env_seconds(env: Mapping[str, str], name: str, default: float) -> float:
    """A positive, finite number of seconds (`7`, `0.5`); `default` when unset or empty."""
    text = (env.get(name) or "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise ConfigFileError(
            f"{name}={text!r} is not a number of seconds",
            hint=f"set {name} to a positive number, e.g. {name}={default:g}, or unset it for the default",
            field=name,
        )
    return value


def env_bytes(env: Mapping[str, str], name: str, default: int) -> int:
    """A positive whole number of bytes (`8388608`, or with a unit: `8MiB`, `512KiB`, `8MB`)."""
    text = (env.get(name) or "").strip()
    if not text:
        return default
    number, unit = _split_unit(text)
    factor = _UNITS.get(unit.lower())
    if number is None or factor is None or number <= 0:
        raise ConfigFileError(
            f"{name}={text!r} is not a size in bytes",
            hint=f"set {name} to a positive whole number of bytes (or with KiB, MiB, KB, MB), e.g. "
            f"{name}={default}, or unset it for the default",
            field=name,
        )
    return number * factor


_UNITS = {
    "": 1,
    "b": 1,
    "kb": 1000,
    "mb": 1000**2,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
    "gb": 1000**3,
}


def _split_unit(text: str) -> tuple[int | None, str]:
    digits = len(text) - len(text.lstrip("0123456789"))
    if digits == 0:
        return None, text
    return int(text[:digits]), text[digits:].strip()
