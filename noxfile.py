"""Every dev task goes through nox; CI calls these sessions."""

from __future__ import annotations

import nox

nox.options.default_venv_backend = "venv"
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["lint", "typecheck", "tests"]

PYTHON = "3.11"


def _install(session: nox.Session) -> None:
    session.install("-e", ".[test,dev]")


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Unit and integration tests; integration tests (marker docker) start real containers."""
    _install(session)
    session.run("pytest", *session.posargs)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    session.install("ruff>=0.6")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session(python=PYTHON)
def typecheck(session: nox.Session) -> None:
    _install(session)
    session.run("mypy")


@nox.session(python=PYTHON)
def conformance(session: nox.Session) -> None:
    """The conformance kit over every runtime in runtimes/ (poisons included), in containers; JUnit in out/."""
    _install(session)
    session.run(
        "pytest",
        "conformance",
        "-p",
        "no:cacheprovider",
        "--junitxml=out/conformance.xml",
        "--wt-results=out/conformance",
        *session.posargs,
    )
