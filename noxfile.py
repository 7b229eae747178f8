"""Every dev task goes through nox; CI calls these sessions."""

from __future__ import annotations

import os
from pathlib import Path

import nox

nox.options.default_venv_backend = "venv"
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["lint", "typecheck", "mcp_conformance", "tests", "runtimes", "conformance", "certify"]

PYTHON = "3.11"
THIRDPARTY_RUNTIMES = ["openai-agents", "pydantic-ai", "claude-agent-sdk", "langgraph", "codex"]
IN_PROCESS_RUNTIMES = ("openai-agents", "pydantic-ai")
"""The runtimes whose agent loop THIRDPARTY_TESTS also loads in the harness's own process. langgraph's
requirements cannot share a venv with windtunnel (langchain-mcp-adapters needs mcp<2); claude-agent-sdk
and codex run a CLI per turn: those are tested by their own tests (runtimes/<name>/tests), which drive
their images."""
THIRDPARTY_TESTS = "tests/integration/test_thirdparty_runtimes.py"
DIND_TESTS = "tests/dind"
COVERAGE_JSON = "out/coverage.json"
TEST_WORKERS = os.environ.get("WT_TEST_WORKERS", "3")
"""pytest-xdist workers for `nox -s tests`: most integration tests wait on containers, so more workers than
cores still shortens the session. Each worker has its own run label, images are shared by content hash, and
--dist loadfile keeps a module's fixtures (its stacks) in one worker. WT_TEST_WORKERS=0 runs in-process."""
INJECT_LIBRARY = "packages/windtunnel-inject"
"""The Contract C server library the runtimes are built on: its own distribution, tested and typed here."""


def _install(session: nox.Session) -> None:
    session.install("-e", ".[test,dev]", "-e", INJECT_LIBRARY)


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Unit and integration tests under coverage, then the per-package coverage floor (CONTRIBUTING.md).

    Integration tests (marker docker) start real containers. With posargs (a subset of the tests) the
    coverage table is printed but the floor is not enforced: a subset cannot measure a package.
    """
    _install(session)
    session.run("coverage", "erase")
    # The third-party runtimes' in-process tests need their SDKs: `runtimes` runs them, one venv each.
    # tests/dind needs the Docker-in-Docker engine of `nox -s certify_in_container`, which runs it.
    workers = ["-n", TEST_WORKERS, "--dist", "loadfile"] if TEST_WORKERS != "0" else []
    ignored = [f"--ignore={THIRDPARTY_TESTS}", f"--ignore={DIND_TESTS}"]
    # The slowest tests are printed so the session's time can be cut where it goes (docs/design.md, Speed).
    # out/tests.xml has every test's time, for the same purpose.
    slowest = ["--durations=40", "--durations-min=5", "--junitxml=out/tests.xml"]
    session.run("coverage", "run", "-m", "pytest", *workers, *ignored, *slowest, *session.posargs)
    session.run("coverage", "combine", "--quiet")
    session.run("coverage", "json", "--quiet", "-o", COVERAGE_JSON)
    floor = ["python", "tools/coverage_floor.py", COVERAGE_JSON]
    session.run(*floor, *(["--report-only"] if session.posargs else []))


@nox.session(python=PYTHON)
@nox.parametrize("runtime", THIRDPARTY_RUNTIMES)
def runtimes(session: nox.Session, runtime: str) -> None:
    """A third-party runtime's own tests, and its agent loop in-process with its SDK (IN_PROCESS_RUNTIMES),
    against the real gateway and mocks."""
    in_process = runtime in IN_PROCESS_RUNTIMES
    sdk = ["-r", f"runtimes/{runtime}/requirements.txt"] if in_process else []
    session.install("-e", ".[test]", "-e", INJECT_LIBRARY, *sdk)
    # The runtime's own tests (runtimes/<name>/tests: the docs/testing.md example) run its container through
    # windtunnel.testing's fixtures, so they need the Docker engine CI starts.
    own = [f"runtimes/{runtime}/tests"] if Path(f"runtimes/{runtime}/tests").is_dir() else []
    tests = [THIRDPARTY_TESTS, *own] if in_process else own
    if not tests:
        session.error(
            f"runtimes/{runtime}/tests is missing: a runtime not loaded in-process needs its own tests"
        )
    session.run("pytest", *tests, *session.posargs, env={"WT_THIRDPARTY_RUNTIME": runtime})


@nox.session(python=PYTHON)
def mcp_conformance(session: nox.Session) -> None:
    """The official MCP conformance suite's server scenarios against a mock; Node 22 from npm, in this venv."""
    session.install("-e", ".")
    node_dir = f"{session.virtualenv.location}/node"
    session.run("python", "-m", "tests.mcp_conformance.session", "--node-dir", node_dir, *session.posargs)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff, and the layer contracts (lint-imports reads [tool.importlinter]; docs/design.md, "Layers")."""
    session.install("ruff>=0.6", "import-linter>=2.1", "-e", ".")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("lint-imports")


@nox.session(python=PYTHON)
def typecheck(session: nox.Session) -> None:
    _install(session)
    session.run("mypy")


CERTIFIED_RUNTIMES = ("reference", "minimal", "minimal-messages", "minimal-responses")
"""The runtimes `nox -s certify` certifies: the reference (always, as the known-good control) and the
`minimal` runtime in each model wire (chat, Anthropic Messages, OpenAI Responses), each of which must be
certified PASSED (docs/conformance.md)."""


@nox.session(python=PYTHON)
def conformance(session: nox.Session) -> None:
    """The conformance kit over every runtime in runtimes/ (poisons included), in containers; JUnit in out/.
    xdist workers take whole runtimes (one group per runtime, windtunnel._conformance.pytest_plugin).

    The runtimes of CERTIFIED_RUNTIMES are left to `nox -s certify`, whose conformance stage runs the same
    kit on them and whose PASSED verdict requires every scored check to pass, as this session does: running
    them here too was a sixth of this session's time. `nox -s conformance -- --wt-runtime NAME` runs any."""
    _install(session)
    workers = ["-n", TEST_WORKERS, "--dist", "loadgroup"] if TEST_WORKERS != "0" else []
    chosen = any(arg.startswith("--wt-runtime") for arg in session.posargs)
    skipped = [] if chosen else [arg for name in CERTIFIED_RUNTIMES for arg in ("--wt-skip-runtime", name)]
    session.run(
        "pytest",
        "conformance",
        *workers,
        *skipped,
        "-p",
        "no:cacheprovider",
        "--junitxml=out/conformance.xml",
        "--wt-results=out/conformance",
        *session.posargs,
    )


TEST_SIGNER = "tests/fixtures/keys/test-signer"
"""A TEST FIXTURE key pair (tests/fixtures/keys/README.md): CI signs with it and pins its public half."""
TEST_SIGNER_FINGERPRINT = "SHA256:32d0c812f25b772cc972872f46159ded8f4acee4d2558c240c6f0e254ab538a6"


@nox.session(python=PYTHON)
def certify(session: nox.Session) -> None:
    """`wt certify` of the configured runtimes into out/bundle, signed with the test fixture key, then
    `wt verify` of what it wrote against that key and its fingerprint, both kept outside out/: never
    against the bundle's own keys/signer.pub.pem, which would prove integrity only."""
    _install(session)
    out = "out/bundle"
    # CERTIFIED_RUNTIMES: the reference is the control of every certify, the others are named.
    chosen = any(arg.startswith("--runtime") for arg in session.posargs)
    named = [name for name in CERTIFIED_RUNTIMES if name != "reference"]
    runtimes = [] if chosen else [arg for name in named for arg in ("--runtime", name)]
    session.run("wt", "certify", "--out", out, "--key", f"{TEST_SIGNER}.pem", *runtimes, *session.posargs)
    session.run("wt", "verify", out, "--key", f"{TEST_SIGNER}.pub.pem")
    session.run("wt", "verify", f"{out}.tar.gz", "--key-fingerprint", TEST_SIGNER_FINGERPRINT)


BENCHES = (
    ("bench_cli.py",),
    ("bench_runner.py",),
    ("bench_concurrency.py",),
    ("bench_stack.py",),
    ("bench_tapes.py",),
    ("bench_dialects.py",),
    ("bench_certify.py", "--parallel"),
    ("bench_cold.py",),
    ("bench_merge.py",),
)
"""Every benchmark, each printing the machine's load and its ratios to anchors measured in the same run."""


@nox.session(python=PYTHON)
def certify_in_container(session: nox.Session) -> None:
    """`dagger call certify`'s wiring offline (tests/dind/simulation.py, docs/dagger.md): an engine container
    from a Docker-in-Docker image built from Debian packages, a runner container bound to it running the same
    `wt certify`; a cold run and a warm one (wall times printed), each bundle verified against the test key."""
    _install(session)
    out = "out/dind"
    runs = ["--out", out, "--key", f"{TEST_SIGNER}.pem", "--runs", "2"]
    session.run("python", "-m", "tests.dind.simulation", *runs, *session.posargs)
    for run in ("run-1", "run-2"):
        session.run("wt", "verify", f"{out}/{run}", "--key", f"{TEST_SIGNER}.pub.pem")
    # The acceptance points on the same engine image and warm state: DOCKER_HOST from the host, a poison,
    # SIGTERM (tests/dind/test_in_container.py).
    session.run("pytest", DIND_TESTS)


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Every benchmark in one go (not part of CI): the anchors' libraries (Inspect AI, VCR.py) are installed
    here, in this session's own venv. Each script prints its ratios with the load line; all run even when
    one misses its target, and the session fails at the end if any did."""
    _install(session)
    session.install("inspect-ai", "vcrpy")
    failed = []
    for script, *args in BENCHES:
        try:
            session.run("python", f"bench/{script}", *args)
        except nox.command.CommandFailed:
            failed.append(script)
    if failed:
        session.error(f"benchmarks that missed a target or could not measure: {', '.join(failed)}")
