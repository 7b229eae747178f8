"""Run a command under a real pseudo-terminal (its stdout and stderr both the pty) and collect what it drew."""

from __future__ import annotations

import os
import pty
import select
import time
from collections.abc import Mapping, Sequence
from pathlib import Path


def run_in_pty(
    argv: Sequence[str], *, env: Mapping[str, str], cwd: Path | None = None, timeout: float = 60.0
) -> tuple[int, str]:
    """(exit code, output with its control sequences); the child is killed at `timeout`."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: its stdin, stdout and stderr are the pty
        if cwd is not None:
            os.chdir(cwd)
        os.execve(argv[0], list(argv), dict(env))
    output = bytearray()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the child exited and the pty closed
            break
        if not chunk:
            break
        output += chunk
    else:
        os.kill(pid, 9)
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), output.decode("utf-8", "replace")
