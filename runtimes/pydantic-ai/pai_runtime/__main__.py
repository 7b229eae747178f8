"""Entry point: `python -m pai_runtime` validates the WT_* environment, then serves Contract C."""

from __future__ import annotations

import os
import sys

import uvicorn

from pai_runtime.app import create_app
from pai_runtime.settings import Settings, SettingsError


def main() -> int:
    try:
        settings = Settings.from_env(os.environ)
    except SettingsError as exc:
        # Refuse to start: a runtime that guessed its configuration would certify something else.
        print(f"pydantic-ai runtime: refusing to start: {exc}", file=sys.stderr)  # noqa: T201
        return 2
    uvicorn.run(
        create_app(settings), host=settings.host, port=settings.port, lifespan="on", log_level="warning"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
