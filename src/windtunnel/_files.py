"""File handling every package shares: a whole file or none, and an OSError as a one-line error."""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from windtunnel.errors import WindTunnelError

DISK_FAULTS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EIO})
"""A full, over-quota, read-only or failing disk: no step can go on writing, so none of them is at fault."""


def disk_fault(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in DISK_FAULTS


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
    """write_atomic for bytes: a temporary file beside `path`, flushed, then renamed over it. An OSError
    names `path` (a full disk fails the write, which knows no file name)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        Path(temporary).replace(path)
    except OSError as exc:
        Path(temporary).unlink(missing_ok=True)
        if exc.filename is not None:
            raise
        raise OSError(exc.errno, exc.strerror, str(path)) from exc
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
