"""A machine-wide lock per lock_key, so two sweeps against one backend take turns instead of colliding."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path


def lock_path(key: str, directory: Path) -> Path:
    """The file whose flock is the lock on `key`."""
    return directory / f"{hashlib.sha256(key.encode()).hexdigest()[:16]}.lock"


@contextlib.contextmanager
def machine_lock(key: str, directory: Path) -> Iterator[Path]:
    """Hold an exclusive flock on `<directory>/<sha256(key)>.lock`; blocks while another process holds it."""
    directory.mkdir(parents=True, exist_ok=True)
    path = lock_path(key, directory)
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        os.ftruncate(descriptor, 0)
        os.write(descriptor, f"{os.getpid()} {key}\n".encode())
        yield path
    finally:
        fcntl.flock(descriptor, fcntl.LOCK_UN)
        os.close(descriptor)
