"""`wt` as users run it: a real subprocess of this checkout's CLI, from the repository root."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def wt(
    *args: str | Path, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run `wt ARGS...` and return it finished (never raising on its exit code)."""
    return subprocess.run(
        [sys.executable, "-m", "windtunnel._cli.main", *map(str, args)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
