"""Node 22 and the official MCP conformance suite, installed from npm into one directory, and runs of the suite.

Nothing is installed system-wide: the npm package `node` carries a Node binary (`node@22` is Node 22) and
the suite runs with it, whatever Node the machine has. A directory that already holds both at the pinned
versions is reused without asking the registry, so a rerun works offline.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from windtunnel._engine.mcp_suite_image import (
    NODE_MAJOR,
    PINS,
    SUITE_PACKAGE,
    SUITE_VERSION,
    npm_install_command,
)

# One pin for the suite's server scenarios here and its client scenarios (windtunnel._engine.mcp_suite_image).
PACKAGES = PINS
NPM_TIMEOUT_S = 900.0
SUITE_TIMEOUT_S = 600.0
# npm's error codes for a registry it could not talk to, as opposed to a package it could not install.
UNREACHABLE = re.compile(
    r"^(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|E5\d\d)$"
)
RESULT_DIR = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$")
LISTED = re.compile(r"^\s*-\s+(?P<scenario>\S+)")


class SessionError(Exception):
    """Why the session could not run the suite, in one line; the CLI prints it and exits non-zero."""


@dataclass(frozen=True, slots=True)
class Suite:
    """The installed suite: the Node binary and the suite's entry script."""

    node: Path
    script: Path

    def scenarios(self) -> list[str]:
        """Every server scenario this version of the suite has (`conformance list --server`)."""
        done = self._run(["list", "--server"], timeout=60.0)
        names = [match["scenario"] for line in done.stdout.splitlines() if (match := LISTED.match(line))]
        if not names:
            raise SessionError(
                f"`conformance list --server` listed no scenarios: {done.stdout.strip()[:200]!r}"
            )
        return names

    def run_all(self, url: str, out: Path) -> dict[str, list[dict[str, Any]]]:
        """Run every server scenario against `url`; each scenario's checks, as it wrote them under `out`."""
        if out.exists():
            shutil.rmtree(out)  # results of an earlier run must not stand in for this one's
        out.mkdir(parents=True)
        done = self._run(["server", "--url", url, "--suite", "all", "-o", str(out)], timeout=SUITE_TIMEOUT_S)
        (out / "suite.log").write_text(done.stdout + done.stderr)
        return read_results(out)

    def _run(self, args: list[str], *, timeout: float) -> subprocess.CompletedProcess[str]:
        argv = [str(self.node), str(self.script), *args]
        try:
            # The suite's exit code is not the verdict: the session judges its checks (session.py).
            return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired as exc:
            raise SessionError(f"the conformance suite did not finish within {timeout:g} s: {argv}") from exc


def read_results(out: Path) -> dict[str, list[dict[str, Any]]]:
    """`server-<scenario>-<timestamp>/checks.json` under `out`, by scenario."""
    results: dict[str, list[dict[str, Any]]] = {}
    for directory in sorted(out.iterdir()):
        match = RESULT_DIR.match(directory.name)
        checks = directory / "checks.json"
        if match and checks.is_file():
            loaded = json.loads(checks.read_text())
            results[match["scenario"]] = loaded if isinstance(loaded, list) else []
    return results


def ensure_suite(directory: Path) -> Suite:
    """The suite under `directory`, installed there from npm unless it already holds the pinned versions."""
    suite = _installed(directory)
    if suite is not None:
        return suite
    _npm_install(directory)
    suite = _installed(directory)
    if suite is None:
        raise SessionError(
            f"npm installed {' '.join(PACKAGES)} into {directory}, but no Node >= {NODE_MAJOR} runs from it "
            "(npm may have skipped the `node` package's install script; allow it, or delete the directory)"
        )
    return suite


def _installed(directory: Path) -> Suite | None:
    modules = directory / "node_modules"
    package = modules / SUITE_PACKAGE / "package.json"
    node = modules / "node" / "bin" / "node"
    if not package.is_file() or node_major(node) < NODE_MAJOR:
        return None
    manifest = json.loads(package.read_text())
    if manifest.get("version") != SUITE_VERSION:
        return None
    return Suite(node=node, script=modules / SUITE_PACKAGE / manifest["bin"]["conformance"])


def node_major(node: Path) -> int:
    """The major version of the Node binary at `node`, 0 when it is missing or does not run."""
    if not node.is_file():
        return 0
    try:
        done = subprocess.run(
            [str(node), "--version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return 0
    match = re.match(r"^v(\d+)\.", done.stdout.strip())
    return int(match[1]) if match and done.returncode == 0 else 0


def _npm_install(directory: Path) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise SessionError(
            f"npm is not installed; it installs Node {NODE_MAJOR} and the MCP conformance suite for this "
            "session (Debian: apt-get install npm; .ci/run installs it)"
        )
    directory.mkdir(parents=True, exist_ok=True)
    argv = npm_install_command(npm, directory)
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=NPM_TIMEOUT_S, check=False, env=os.environ
        )
    except subprocess.TimeoutExpired as exc:
        raise SessionError(
            f"npm install {' '.join(PACKAGES)} did not finish within {NPM_TIMEOUT_S:g} s: the npm registry "
            "may be unreachable (check the network, or npm's registry setting)"
        ) from exc
    if done.returncode != 0:
        raise SessionError(npm_failure(done.stderr))


def npm_failure(stderr: str) -> str:
    """One line out of npm's error report: the registry could not be reached, or why the install failed."""
    code = next(
        (m[1] for line in stderr.splitlines() if (m := re.match(r"^npm error code (\S+)", line))), None
    )
    reason = next(
        (
            m[1].strip()
            for line in stderr.splitlines()
            if (m := re.match(r"^npm error (?!code |syscall |errno )(\S.*)", line))
        ),
        "no reason given",
    )
    if code is not None and UNREACHABLE.match(code):
        return (
            f"the npm registry cannot be reached ({code}: {reason}); the session installs "
            f"{' '.join(PACKAGES)} from it: check the network, or point npm at a mirror (npm config set registry URL)"
        )
    return f"npm install {' '.join(PACKAGES)} failed ({code or 'no error code'}: {reason})"
