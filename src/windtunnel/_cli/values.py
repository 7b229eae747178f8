"""Typed CLI values (argparse `type=`): a bad value is a one-line usage error naming the flag, exit 2.

Kept apart from common.py so a container's `wt gateway serve` or `wt mcp serve` imports nothing heavy.
"""

from __future__ import annotations

import argparse
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit


def port(text: str) -> int:
    """A TCP port, 0..65535 (0 picks a free one)."""
    try:
        number = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (0-65535)") from None
    if not 0 <= number <= 65535:
        raise argparse.ArgumentTypeError(
            f"{number} is not a port number: ports are 0-65535 (0 picks a free one)"
        )
    return number


def http_url(text: str) -> str:
    """An absolute http(s) URL with a host, e.g. http://127.0.0.1:11434/v1."""
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number or out of range
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a URL: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an http(s) URL with a host (e.g. http://127.0.0.1:11434/v1)"
        )
    return text


MAX_COUNT = 100_000
"""Far above any sensible run count or concurrency; a bigger number is a typo, not a plan."""


def count(text: str) -> int:
    """A whole number 1..MAX_COUNT (runs per scenario, jobs at once)."""
    return _whole_number(text, 1, MAX_COUNT)


MAX_RETRIES = 100
"""Far above any sensible retry count of a flaky run."""


def retries(text: str) -> int:
    """A whole number 0..MAX_RETRIES (retries of a failed live-flaky run)."""
    return _whole_number(text, 0, MAX_RETRIES)


def _whole_number(text: str, low: int, high: int) -> int:
    try:
        number = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number ({low} or more)") from None
    if not low <= number <= high:
        raise argparse.ArgumentTypeError(f"{number} is out of range: give {low} to {high}")
    return number


def days(text: str) -> timedelta:
    """A number of days, 0..36500 (`7`, `0.5`)."""
    try:
        number = float(text)
    except ValueError:
        number = -1.0
    if not 0 <= number <= 36500:  # nan and inf fail this too
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of days (0 or more)")
    return timedelta(days=number)


def file_path(text: str) -> Path:
    """A file or directory path: not empty (an empty one would silently mean the working directory) and
    without NUL characters (no file system takes them)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path names nothing (pass e.g. ./out)")
    if "\0" in text:
        raise argparse.ArgumentTypeError(f"{text!r} holds a NUL character, which no path can")
    return Path(text)


def model_name(text: str) -> str:
    """A model name as a flag gives it: not empty, no spaces around it."""
    if not text.strip() or text != text.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not a model name (empty, or spaces around it)")
    return text
