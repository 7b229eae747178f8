"""File handling every package shares: a whole file or none, and an OSError as a one-line error."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from windtunnel.errors import WindTunnelError


@contextmanager
def os_error_as(error: type[WindTunnelError], doing: str, path: Path, *, hint: str) -> Iterator[None]:
    """An OSError in the block becomes `error`: "DOING: reason", naming `path` and the fix, from the cause."""
    try:
        yield
    except OSError as exc:
        raise error(f"{doing}: {exc.strerror or exc}", hint=hint, path=str(path)) from exc


def write_atomic(path: Path, text: str) -> None:
    """Write via a temporary file and rename, so a crash never leaves half a file."""
    write_atomic_bytes(path, text.encode("utf-8"))


def write_atomic_bytes(path: Path, data: bytes) -> None:
    """write_atomic for bytes: a temporary file beside `path`, flushed, then renamed over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        Path(temporary).replace(path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
