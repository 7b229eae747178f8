"""The upstream API key of live and record modes: from a key file, or from an environment variable.

A key file (`--upstream-key-file PATH`, else `$WT_UPSTREAM_KEY_FILE`) wins over the variable
(`$WT_UPSTREAM_API_KEY`, or the one `--api-key-env` names). A file can be mounted read-only into the gateway
container, where an environment variable would be visible to anyone who can `docker inspect` it.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path

from windtunnel.errors import UsageError

KEY_ENV = "WT_UPSTREAM_API_KEY"
KEY_FILE_ENV = "WT_UPSTREAM_KEY_FILE"
KEY_FILE_FLAG = "--upstream-key-file"


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
