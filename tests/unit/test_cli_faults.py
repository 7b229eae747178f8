"""`wt` on what is none of its own errors: a fault of the machine or a bug is one line and exit 2, code it
loaded that calls sys.exit() never ends it silently with that code, --debug shows the traceback instead, and
`wt --help` documents the exit codes (130, 143, 129 after a stop signal)."""

from __future__ import annotations

import argparse
import errno
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

# The CLI's own fault path, driven in-process: these tests are of the CLI, so they import it.
from windtunnel._cli import cmd_images
from windtunnel._cli import main as cli
from windtunnel._cli.faults import describe
from windtunnel._config import Settings


def with_handler(
    monkeypatch: pytest.MonkeyPatch, handler: Callable[[argparse.Namespace, Settings], int]
) -> None:
    """`wt images sweep` runs `handler` instead of sweeping (its parser is built after this)."""
    monkeypatch.setattr(cmd_images, "_run_sweep", handler)


def fails(exc: BaseException) -> Callable[[argparse.Namespace, Settings], int]:
    def handler(_args: argparse.Namespace, _settings: Settings) -> int:
        raise exc

    return handler


@pytest.mark.parametrize(
    ("exc", "line", "fix"),
    [
        (
            OSError(errno.ENOSPC, "No space left on device", "/out/x.json"),
            "cannot write /out/x.json: the disk",
            "free",
        ),
        (
            OSError(errno.EROFS, "Read-only file system", "/ro/x"),
            "cannot write /ro/x: the file system is read-only",
            "writable",
        ),
        (
            OSError(errno.ENOTDIR, "Not a directory", "/f/x"),
            "cannot use /f/x: a file is in the way",
            "move the file",
        ),
        (
            TypeError("unsupported operand"),
            "Wind Tunnel failed unexpectedly: TypeError: unsupported operand",
            "--debug",
        ),
        (SystemExit(3), "code wt loaded (a pack, a plugin, a scenario hook) called sys.exit(3)", "--debug"),
    ],
)
def test_what_is_none_of_our_errors_is_one_line_and_exit_2(
    exc: BaseException,
    line: str,
    fix: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with_handler(monkeypatch, fails(exc))
    assert cli.main(["images", "sweep"]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2 and line in lines[0] and lines[1].startswith("  how to fix: ") and fix in lines[1]


def test_debug_shows_the_traceback_instead(monkeypatch: pytest.MonkeyPatch) -> None:
    with_handler(monkeypatch, fails(TypeError("unsupported operand")))
    with pytest.raises(TypeError, match="unsupported operand"):
        cli.main(["--debug", "images", "sweep"])


def test_debug_shows_the_traceback_of_our_own_errors_too(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "runtime.toml").write_text('name = "x"\n[capabilities]\nport = "eighty"\n')
    plain, debug = (
        subprocess.run(
            [sys.executable, "-m", "windtunnel._cli.main", *flags, "run", "--runtime", str(tmp_path / "x")],
            capture_output=True,
            text=True,
            check=False,
        )
        for flags in ([], ["--debug"])
    )
    assert plain.returncode == 2 and "Traceback" not in plain.stderr
    assert "Traceback (most recent call last)" in debug.stderr and "ConfigFileError" in debug.stderr


def test_an_engine_that_went_away_is_named_as_such() -> None:
    import requests

    try:
        raise requests.exceptions.ConnectionError("Connection aborted.")
    except requests.exceptions.ConnectionError as exc:
        message, fix = describe(exc)
    assert message.startswith("the Docker engine stopped answering: ConnectionError") and "docker info" in fix


def test_help_documents_the_exit_codes() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "windtunnel._cli.main", "--help"], capture_output=True, text=True, check=False
    )
    assert "130, 143, 129 stopped by SIGINT, SIGTERM, SIGHUP" in done.stdout
    assert "--debug" in done.stdout
