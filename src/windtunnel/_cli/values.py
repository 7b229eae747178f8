"""Typed CLI values (argparse `type=`): a bad value is a one-line usage error naming the flag, exit 2.

Kept apart from common.py so a container's `wt gateway serve` or `wt mcp serve` imports nothing heavy.
"""

from __future__ import annotations

import argparse
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
