"""The entry point of a runtime's service: validate the WT_* environment, build the loop, serve Contract C."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

import uvicorn

from windtunnel_inject._app import create_app
from windtunnel_inject._loop import LoopFactory
from windtunnel_inject._settings import Settings, SettingsError

REFUSED = 2
"""The exit status of a runtime that refuses its environment, as for a command-line usage error."""


def serve(factory: LoopFactory, *, name: str, env: Mapping[str, str] | None = None) -> int:
    """Serve `factory`'s loop on WT_INJECT_HOST:WT_INJECT_PORT until stopped; the exit status to return.

    `env` defaults to os.environ. A bad variable (the Contract's or one the factory reads) is refused
    before anything listens: one line on stderr naming it, exit status 2. `python -m my_runtime` runs:

        raise SystemExit(serve(MyLoop, name="my-runtime"))
    """
    try:
        settings = Settings.from_env(os.environ if env is None else env)
        loop = factory(settings)
    except SettingsError as exc:
        # Refuse to start: a runtime that guessed its configuration would certify something else.
        print(f"{name} runtime: refusing to start: {exc}", file=sys.stderr)  # noqa: T201
        return REFUSED
    uvicorn.run(
        create_app(loop, name=name),
        host=settings.host,
        port=settings.port,
        lifespan="on",
        log_level="warning",
        access_log=False,  # every turn is a request: no access-log record is built for each
    )
    return 0
