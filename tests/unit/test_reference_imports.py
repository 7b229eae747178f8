"""The reference runtime's entry point is import-light: its client libraries load in the background once it
serves (runtimes/reference/README.md, docs/design.md "Speed")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

RUNTIME_DIR = Path(__file__).resolve().parents[2] / "runtimes" / "reference"
CLIENT_LIBRARIES = ("aiohttp", "mcp", "mcp_types", "httpx2", "pydantic")
"""Only a turn needs them; the runtime must listen without them."""


def _run(probe: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(RUNTIME_DIR), "WT_MODEL_BASE_URL": "http://127.0.0.1:9/v1"}
    done = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _loaded_after(code: str) -> str:
    return _run(f"import sys\n{code}\nprint(sorted(m for m in {CLIENT_LIBRARIES!r} if m in sys.modules))\n")


def test_importing_the_entry_point_loads_no_client_library() -> None:
    assert _loaded_after("import reference_agent.__main__, reference_agent.loop") == "[]"


def test_entering_the_loop_loads_them_in_the_background() -> None:
    code = (
        "import os, anyio\n"
        "import windtunnel_inject\n"
        "from reference_agent import preload\n"
        "from reference_agent.loop import open_loop\n"
        "async def main():\n"
        "    async with open_loop(windtunnel_inject.Settings.from_env(os.environ)):\n"
        "        await preload.loaded()\n"
        "anyio.run(main)"
    )
    assert _loaded_after(code) == str(sorted(CLIENT_LIBRARIES))
