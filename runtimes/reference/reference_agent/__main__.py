"""Entry point: `python -m reference_agent` validates the WT_* environment (refusing an unknown WT_FAULT),
then serves Contract C (windtunnel_inject)."""

from __future__ import annotations

from windtunnel_inject import serve

from reference_agent.loop import open_loop

if __name__ == "__main__":
    raise SystemExit(serve(open_loop, name="reference"))
