"""`wt`'s entry point, in a real subprocess: a named verb builds only its own parser, so a container's
`wt gateway serve` does not import what certify, tapes or the mocks need; without a verb every verb is
listed, and an unknown one is a usage error naming them all."""

from __future__ import annotations

import subprocess
import sys

import pytest

VERBS = (
    "run",
    "selftest",
    "prove",
    "doctor",
    "certify",
    "verify",
    "report",
    "tapes",
    "gateway",
    "mcp",
    "images",
)


def wt(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "windtunnel._cli.main", *args], capture_output=True, text=True, check=False
    )


def test_without_a_verb_every_verb_is_listed() -> None:
    done = wt("--help")
    assert done.returncode == 0
    assert all(f"    {verb} " in done.stdout for verb in VERBS), done.stdout


@pytest.mark.parametrize("argv", [("gateway", "--help"), ("-v", "gateway", "--help")])
def test_a_named_verb_parses_with_its_own_parser(argv: tuple[str, ...]) -> None:
    done = wt(*argv)
    assert done.returncode == 0 and done.stdout.startswith("usage: wt gateway")


def test_an_unknown_verb_is_a_usage_error_naming_the_verbs() -> None:
    done = wt("certifyy")
    assert done.returncode == 2
    assert "invalid choice: 'certifyy'" in done.stderr and "'certify'" in done.stderr


def test_gateway_serve_imports_no_other_verb() -> None:
    probe = (
        "import sys\n"
        "from windtunnel._cli.main import main\n"
        "try:\n"
        "    main(['gateway', 'serve', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "loaded = sorted(m for m in sys.modules if m.startswith(('windtunnel._cli.cmd_', 'docker', 'mcp')))\n"
        "print('LOADED', ' '.join(loaded))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded = next(line for line in done.stdout.splitlines() if line.startswith("LOADED"))
    assert loaded.split()[1:] == ["windtunnel._cli.cmd_gateway"]


HEAVY = ("docker", "pydantic", "httpx", "cryptography")
"""What `wt --help` and `wt --version` must not import (docs/design.md: a fast CLI; the time is benched)."""


@pytest.mark.parametrize("argv", [("--help",), ("--version",), ()])
def test_listing_the_verbs_imports_nothing_heavy(argv: tuple[str, ...]) -> None:
    probe = (
        "import sys\n"
        "from windtunnel._cli.main import main\n"
        "try:\n"
        f"    main({list(argv)!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        f"heavy = {HEAVY!r}\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in heavy or m.startswith('windtunnel._cli.cmd_'))\n"
        "print('LOADED', ' '.join(loaded))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded = next(line for line in done.stdout.splitlines() if line.startswith("LOADED"))
    assert loaded.split()[1:] == [], loaded


def test_every_verb_module_has_its_summary() -> None:
    """A verb module with no summary would be imported to be listed: `wt --help` would slow down unseen."""
    from windtunnel._cli.main import _verbs
    from windtunnel._cli.verbs import SUMMARIES

    assert set(_verbs()) == set(SUMMARIES)
