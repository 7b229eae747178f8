"""Entry point: `python -m cx_runtime` validates the WT_* environment, then serves Contract C (windtunnel_inject)."""

from __future__ import annotations

from windtunnel_inject import serve

from cx_runtime.agent import CodexLoop

if __name__ == "__main__":
    raise SystemExit(serve(CodexLoop, name="codex"))
