"""The upstream API key of live and record modes: from a key file, or from an environment variable.

A key file (`--upstream-key-file PATH`, else `$WT_UPSTREAM_KEY_FILE`) wins over the variable
(`$WT_UPSTREAM_API_KEY`, or the one `--api-key-env` names). A gateway in a container always gets it as a file
(`in_container`): put into the container before it starts (KEY_PATH, mode 0400, not a host bind mount, so
any engine works), never as its environment or command line, which anyone who can `docker inspect` it sees.
`wt gateway serve` run by hand may still read the variable from its own environment.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path

from windtunnel.errors import UsageError

KEY_ENV = "WT_UPSTREAM_API_KEY"
KEY_FILE_ENV = "WT_UPSTREAM_KEY_FILE"
KEY_FILE_FLAG = "--upstream-key-file"
KEY_PATH = "/run/secrets/upstream_api_key"
"""Where a gateway container finds its upstream key: a read-only (0400) file owned by the gateway's user."""


def in_container(key: str | None) -> tuple[tuple[str, ...], dict[str, str]]:
    """The gateway arguments and the files (container path -> content) that hand `key` to a gateway
    container; nothing for no key."""
    if not key:
        return (), {}
    return (KEY_FILE_FLAG, KEY_PATH), {KEY_PATH: key + "\n"}


def add_key_file_argument(parser: argparse.ArgumentParser, *, what: str = "the upstream API key") -> None:
    parser.add_argument(
        KEY_FILE_FLAG,
        type=Path,
        metavar="PATH",
        help=f"a file holding {what} on one line (default ${KEY_FILE_ENV}); it wins over ${KEY_ENV}",
    )


def key_file(env: Mapping[str, str], given: Path | None) -> Path | None:
    """The key file to use: the flag's, else $WT_UPSTREAM_KEY_FILE's, else None."""
    if given is not None:
        return given
    named = env.get(KEY_FILE_ENV)
    return Path(named) if named else None


def read_key_file(path: Path) -> str:
    """The key in `path`: one line, surrounding whitespace dropped; an unreadable or empty file is an error."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(
            f"cannot read the upstream key file {path}: {exc}",
            hint=f"fix the path given to {KEY_FILE_FLAG} (or ${KEY_FILE_ENV}), or make the file readable",
            path=str(path),
            field=KEY_FILE_FLAG,
        ) from exc
    key = text.strip()
    if not key or any(char.isspace() for char in key):
        found = "is empty" if not key else "holds more than one word or line"
        raise UsageError(
            f"the upstream key file {path} {found}",
            hint="write only the key, on one line",
            path=str(path),
            field=KEY_FILE_FLAG,
        )
    return key


def upstream_key(env: Mapping[str, str], *, given: Path | None = None, key_env: str = KEY_ENV) -> str | None:
    """The key from the key file (see key_file), else from the variable `key_env`; None when neither is set."""
    path = key_file(env, given)
    if path is not None:
        return read_key_file(path)
    return env.get(key_env) or None
