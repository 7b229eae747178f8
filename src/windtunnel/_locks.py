"""Locks: a machine-wide one per key (two sweeps against one backend take turns instead of colliding; two
builds of one image, or two base-image bootstraps, make it once), and one that does not wait and names its
holder (two certifies into one --out)."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import time
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


@contextlib.contextmanager
def held_lock(path: Path, *, owner: str) -> Iterator[str | None]:
    """Try an exclusive flock on `path` without waiting: yields None when this process now holds it, else
    the holder's pid (as the holder wrote it; "unknown" if it has not yet). The file is never removed:
    removing a lock file lets a third process lock a new file while the old one is still held."""
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield _holder(descriptor)
            return
        try:
            os.ftruncate(descriptor, 0)
            os.pwrite(descriptor, f"{os.getpid()} {owner}\n".encode(), 0)
            yield None
        finally:
            fcntl.flock(descriptor, fcntl.LOCK_UN)
    finally:
        os.close(descriptor)


def _holder(descriptor: int) -> str:
    for _ in range(20):  # the holder writes its pid right after it locked; give it a moment
        text = os.pread(descriptor, 200, 0).decode(errors="replace").split()
        if text and text[0].isdigit():
            return text[0]
        time.sleep(0.01)
    return "unknown"
