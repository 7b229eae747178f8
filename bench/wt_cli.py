"""Wind Tunnel as the benches run it beyond the public doors: the `wt` command, in a process of its own."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

WT = str(Path(sys.executable).with_name("wt"))
"""The `wt` entry point installed next to this interpreter (the venv the bench runs in)."""


@contextmanager
def gateway(*args: str) -> Iterator[str]:
    """`wt gateway serve --port 0 ARGS` on 127.0.0.1; yields its base URL (http://127.0.0.1:PORT/v1) once it
    listens, and stops it (SIGTERM) afterwards."""
    with gateway_process(*args) as (url, _pid):
        yield url


@contextmanager
def gateway_process(*args: str) -> Iterator[tuple[str, int]]:
    """As gateway(), yielding the base URL and the process id (to measure the gateway's CPU time)."""
    child = subprocess.Popen(
        [WT, "gateway", "serve", "--port", "0", *args], stderr=subprocess.PIPE, text=True
    )
    try:
        assert child.stderr is not None
        line = child.stderr.readline()  # the one line `wt gateway serve` prints once it listens
        url = line.rsplit(" at ", 1)[-1].strip()
        if not url.startswith("http://"):
            child.kill()
            raise RuntimeError(f"wt gateway serve did not start: {line}{child.stderr.read()}")
        yield url, child.pid
    finally:
        child.terminate()
        child.wait(timeout=30)
