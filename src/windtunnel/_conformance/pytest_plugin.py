"""pytest plugin shipped with windtunnel: `--wt-runtime NAME` selects the runtimes conformance checks run on."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("windtunnel")
    group.addoption(
        "--wt-runtime",
        action="append",
        default=[],
        metavar="NAME",
        help="run the Wind Tunnel conformance kit against this runtime (repeatable; default: every runtime "
        "under runtimes/)",
    )
