"""The bad-input corpus's one runner: a case is data (argv, files, env, expected exit and message), run
through the real `wt` entry point in-process (windtunnel._cli.main.main) with its output captured.

What every case asserts (`Outcome.refused`): the exit code; no traceback anywhere in the output; and a
one-line message holding the expected text: the first line of the error (`wt: error: ...` or
`wt: SomeError: ...` on stderr, or the reason line of `INVALID ...` on stdout), followed at most by one
`  how to fix: ...` line. To add a case, add a row to the table of its area (tests/badinput/test_*.py).
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path

Setup = Callable[[Path], None]


def _entry_point() -> Callable[[list[str]], int]:
    """`wt` as installed: the console script's entry point, loaded the way the `wt` command loads it."""
    (script,) = entry_points(group="console_scripts", name="wt")
    main: Callable[[list[str]], int] = script.load()
    return main


@dataclass(frozen=True, slots=True)
class Case:
    """One bad input. `argv` may hold `{tmp}` (the case's directory); `setup` writes its files first."""

    id: str
    argv: Sequence[str]
    code: int
    expect: str
    setup: Setup | None = None
    env: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Outcome:
    code: int
    stdout: str
    stderr: str

    def refused(self, code: int, expect: str) -> None:
        """Exit `code`, no traceback, and a one-line message holding `expect` (module docstring)."""
        text = self.stdout + self.stderr
        assert self.code == code, f"exit {self.code}, expected {code}:\n{text}"
        assert "Traceback" not in text and 'File "' not in text, text
        message = self.message()
        assert expect in message, f"{expect!r} not in the message {message!r}\n{text}"

    def failed_tape(self, expect: str) -> None:
        """`wt tapes verify`'s refusal: exit 1, no traceback, a FAILED line, then the tape's first problem as
        one line holding `expect` (a mismatch's diff lines come after it, by design)."""
        text = self.stdout + self.stderr
        assert self.code == 1, f"exit {self.code}, expected 1:\n{text}"
        assert "Traceback" not in text and 'File "' not in text, text
        lines = self.stdout.splitlines()
        assert lines and lines[0].startswith("FAILED "), text
        assert len(lines) >= 3 and lines[1].startswith("        "), text
        assert expect in lines[1], f"{expect!r} not in the problem {lines[1]!r}\n{text}"

    def message(self) -> str:
        """The error's one line; asserts the lines around it are only the allowed ones."""
        lines = self.stderr.splitlines()
        errors = [i for i, line in enumerate(lines) if line.startswith("wt: ") and "warning" not in line[:12]]
        if errors:
            first = errors[-1]
            rest = lines[first + 1 :]
            assert len(rest) <= 1 and all(line.startswith("  how to fix: ") for line in rest), self.stderr
            return lines[first]
        out = self.stdout.splitlines()
        assert out and out[0].startswith("INVALID "), f"no error message:\n{self.stdout}{self.stderr}"
        assert len(out) == 2 and out[1].startswith("  "), self.stdout
        return out[1]


def wt(argv: Sequence[str], *, cwd: Path, env: Mapping[str, str] | None = None) -> Outcome:
    """`wt ARGV` in-process, from `cwd`, with `env` added to the environment for the call."""
    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_cwd = dict(os.environ), Path.cwd()
    os.environ.update(env or {})
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = _entry_point()(list(argv))
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return Outcome(code, out.getvalue(), err.getvalue())


def run_case(case: Case, tmp: Path) -> Outcome:
    if case.setup is not None:
        case.setup(tmp)
    argv = [arg.replace("{tmp}", str(tmp)) for arg in case.argv]
    # Locks of its own: a case that reaches a runtime must not wait for another run on this machine.
    return wt(argv, cwd=tmp, env={"WT_LOCK_DIR": str(tmp / "locks"), **case.env})
