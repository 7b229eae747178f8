"""The agent loop: one Contract C turn is one `codex exec --json` run (`codex exec resume` after the first),
its JSON event stream read into the turn's report; windtunnel_inject serves it."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from windtunnel_inject import Settings, SettingsError, Transcript, Turn, TurnFailed

from cx_runtime.config import write_home

STARTUP_TIMEOUT_S = 30.0
HOMES = Path(tempfile.gettempdir()) / "wt-codex"
"""Where each session's CODEX_HOME is made (home-1, home-2, ...); this runtime owns the directory."""
TAIL_LINES = 15


@dataclass
class Session:
    """One conversation: its own CODEX_HOME (config, rollouts), the Codex thread once a turn made one."""

    home: Path
    thread_id: str | None = None
    turns: int = 0
    lock: anyio.Lock = field(default_factory=anyio.Lock)

    @property
    def work(self) -> Path:
        return self.home / "work"


def codex_bin(settings: Settings) -> str:
    return settings.env.get("CODEX_BIN") or "codex"


def check_cli(binary: str) -> str:
    """`codex --version`, so a CLI that cannot start fails the ready stage with its own last lines."""
    try:
        done = subprocess.run(
            [binary, "--version"], capture_output=True, text=True, timeout=STARTUP_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SettingsError(f"the Codex CLI {binary!r} cannot start: {exc}; set CODEX_BIN to it") from exc
    if done.returncode != 0:
        raise SettingsError(
            f"the Codex CLI {binary!r} exited {done.returncode}: {_tail(done.stdout + done.stderr)}"
        )
    return done.stdout.strip()


class CodexLoop:
    """Turns, reset and state; the CLI does the agent loop, a fresh CODEX_HOME per session."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._bin = codex_bin(settings)
        self.version = check_cli(self._bin)
        self._sessions: dict[str, Session] = {}

    def _free_home(self) -> Path:
        """The first free home-<n> under one fixed directory, made (claimed) here. Codex names its home (the
        skills root) and working directory in every prompt, so a random path would make each run's requests
        differ (tapes, prompt caches); numbered from 1 again after a reset, the same sequence of sessions
        gets the same paths."""
        HOMES.mkdir(parents=True, exist_ok=True)
        for n in itertools.count(1):
            home = HOMES / f"home-{n}"
            try:
                home.mkdir()  # atomic: a home another loop or session holds is never shared
            except FileExistsError:
                continue
            return home
        raise AssertionError("unreachable: itertools.count never ends")

    def _session(self, session_id: str) -> Session:
        entry = self._sessions.get(session_id)
        if entry is None:
            home = self._free_home()
            write_home(self._settings, session_id, home)
            entry = Session(home=home)
            entry.work.mkdir()
            self._sessions[session_id] = entry
        return entry

    async def turn(self, session_id: str, text: str) -> Turn:
        entry = self._session(session_id)
        async with entry.lock:  # turns of one session run one at a time, as a chat would
            # A failed or cancelled turn leaves the session as it was: Codex has already appended to the
            # thread's rollout, so the whole CODEX_HOME is put back.
            backup = entry.home.with_name(entry.home.name + ".before")
            shutil.copytree(entry.home, backup, symlinks=True)
            try:
                report, thread_id = await self._run(entry, text)
            except BaseException:
                with anyio.CancelScope(shield=True):
                    shutil.rmtree(entry.home, ignore_errors=True)
                    backup.rename(entry.home)
                raise
            shutil.rmtree(backup, ignore_errors=True)
            entry.thread_id = entry.thread_id or thread_id
            entry.turns += 1
            return report

    async def _run(self, entry: Session, text: str) -> tuple[Turn, str | None]:
        resume = ["resume", entry.thread_id] if entry.thread_id else []
        # The prompt on stdin ("-"), so a prompt starting with "-" is never read as an option.
        command = [self._bin, "exec", *resume, "--json", "--skip-git-repo-check", "-"]
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "CODEX_HOME": str(entry.home),
            "HOME": str(entry.home),
        }
        done = await anyio.run_process(command, input=text.encode(), env=env, cwd=entry.work, check=False)
        stdout = done.stdout.decode(errors="replace")
        return read_events(stdout.splitlines(), done.returncode, done.stderr.decode(errors="replace"))

    async def reset(self) -> None:
        """Forget every session: its CODEX_HOME (which this runtime made) goes too."""
        dropped, self._sessions = self._sessions, {}
        for entry in dropped.values():
            shutil.rmtree(entry.home, ignore_errors=True)

    async def snapshot(self) -> dict[str, Any]:
        return {
            "sessions": {
                sid: {"thread_id": s.thread_id, "turns": s.turns} for sid, s in self._sessions.items()
            }
        }

    async def __aenter__(self) -> CodexLoop:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.reset()  # every home this loop made goes; HOMES may hold another loop's


def read_events(lines: Sequence[str], returncode: int, stderr: str) -> tuple[Turn, str | None]:
    """The turn from `codex exec --json`'s JSONL events: the tool calls as the model emitted them, in the
    order they started, the last agent message as the answer, the turn's usage. Raises TurnFailed."""
    thread_id: str | None = None
    calls: dict[str, Mapping[str, Any]] = {}  # item id -> the call, first seen (started) order
    answer, usage, failed, errors = "", None, [], []
    for line in lines:
        event = _json_line(line)
        kind = event.get("type")
        found = event.get("item")
        item: dict[str, Any] = found if isinstance(found, dict) else {}
        if kind == "thread.started":
            thread_id = str(event.get("thread_id") or "") or None
        elif kind in ("item.started", "item.completed") and item.get("type") == "mcp_tool_call":
            calls.setdefault(str(item.get("id")), item)
        elif kind == "item.completed" and item.get("type") == "agent_message":
            answer = str(item.get("text") or "")
        elif kind == "turn.completed":
            usage = event.get("usage")
        elif kind == "turn.failed":
            failed.append(str((event.get("error") or {}).get("message") or event))
        elif kind == "error":  # a stream error; fatal only when the turn did not complete
            errors.append(str(event.get("message") or event))
    if failed or usage is None or returncode != 0:
        said = "; ".join(dict.fromkeys([*failed, *errors]))  # Codex says one failure twice
        raise TurnFailed(said or f"codex exited {returncode} without finishing the turn: {_tail(stderr)}")
    transcript = Transcript()
    # The events give one usage total per turn, not per model call: it is reported as one entry.
    transcript.model_call(_usage(usage))
    for call in calls.values():
        transcript.tool_call(str(call.get("tool") or ""), call.get("arguments"))
    return transcript.turn(answer), thread_id


def _json_line(line: str) -> dict[str, Any]:
    try:
        event = json.loads(line)
    except json.JSONDecodeError:
        return {}  # Codex prints the odd plain line; only JSON objects are events
    return event if isinstance(event, dict) else {}


def _usage(usage: Any) -> dict[str, Any]:
    if not isinstance(usage, Mapping):
        return {}
    read = {key: usage[key] for key in ("input_tokens", "output_tokens") if isinstance(usage.get(key), int)}
    if len(read) == 2:
        read["total_tokens"] = read["input_tokens"] + read["output_tokens"]
    return read


def _tail(text: str) -> str:
    return " | ".join(text.strip().splitlines()[-TAIL_LINES:])
