"""Entry point: `python -m reference_agent` validates the WT_* environment, then serves Contract C."""

from __future__ import annotations

import os
import sys

import uvicorn

from reference_agent.app import create_app
from reference_agent.settings import Settings, SettingsError


def main() -> int:
    try:
        settings = Settings.from_env(os.environ)
    except SettingsError as exc:
        # Refuse to start: a runtime that guessed its configuration would certify something else.
        print(f"reference runtime: refusing to start: {exc}", file=sys.stderr)  # noqa: T201
        return 2
    uvicorn.run(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        lifespan="on",
        log_level="warning",
        access_log=False,  # every turn is a request: no access-log record is built for each
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
