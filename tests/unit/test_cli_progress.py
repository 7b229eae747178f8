"""`wt certify`'s progress views: rich bars with timings under a real pty, plain lines without a terminal,
JSON events that parse; the ETA comes from the last run's timings in the user's cache."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

from tests.pty_run import run_in_pty
from windtunnel._cli.progress import JsonView, ProgressView, make_view, time_table
from windtunnel._cli.timings import Timings, duration
from windtunnel._pipeline.events import StageFinished, StageStarted

PENDING = [("reference", "build"), ("reference", "conformance"), ("mine", "build")]

# Drives the view `make_view("auto")` picks, as `wt certify` drives it: notes, then stage events.
DRIVER = """
import sys, time
from tests.pty_run import run_in_pty
from windtunnel._cli.progress import make_view
from windtunnel._pipeline.events import StageFinished, StageStarted
pending = [("reference", "build"), ("reference", "conformance"), ("mine", "build")]
view = make_view(sys.argv[1], pending)
view.note("runtimes reference, mine")
for runtime, stage in pending:
    view.event(StageStarted(runtime, stage))
    time.sleep(0.8)
    view.event(StageFinished(runtime, stage, 1.25, (("c1", "passed"), ("c2", "failed"))))
view.close()
view.report("summary", {"result": "FAILED", "lines": ["verify: wt verify out\\n"]})
"""


def _timings(tmp_path: Path) -> dict[str, str]:
    cache = tmp_path / "cache"
    (cache / "windtunnel").mkdir(parents=True, exist_ok=True)
    seconds = {"reference/build": 40.0, "reference/conformance": 80.0, "mine/build": 30.0}
    (cache / "windtunnel" / "timings.json").write_text(json.dumps({"schema": 1, "seconds": seconds}))
    return {**os.environ, "XDG_CACHE_HOME": str(cache)}


def test_under_a_pty_the_progress_is_drawn_with_timings_and_an_eta(tmp_path: Path) -> None:
    env = _timings(tmp_path)
    code, text = run_in_pty([sys.executable, "-c", DRIVER, "auto"], env=env)
    assert code == 0, text
    assert "\x1b[" in text  # drawn with terminal control sequences: rich, not plain lines
    assert "reference: build" in text and "(last run 40.0s)" in text
    assert "ETA 2m" in text  # 40 + 80 + 30 s from the last run, minus what already ran
    assert "1.2s" in text and "1 passed, 1 failed" in text.replace("\r", "")
    assert "time" in text and "total" in text and "verify: wt verify out" in text


def test_without_a_terminal_progress_is_plain_lines_on_stderr(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, "auto"],
        env=_timings(tmp_path),
        capture_output=True,
        text=True,
        check=True,
    )
    assert "\x1b[" not in done.stderr + done.stdout
    lines = done.stderr.splitlines()
    assert lines[0] == "wt certify: runtimes reference, mine"
    assert "wt certify: reference: build took 1.2s (1 passed, 1 failed); about 1m" in lines[1]
    assert done.stdout.startswith("summary\ntime") and done.stdout.endswith("verify: wt verify out\n")
    saved = json.loads((tmp_path / "cache" / "windtunnel" / "timings.json").read_text())
    assert saved["seconds"]["mine/build"] == 1.25  # this run's times are the next run's ETA


def test_json_events_are_one_object_per_line_and_nothing_else_on_stdout(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, "json"],
        env=_timings(tmp_path),
        capture_output=True,
        text=True,
        check=True,
    )
    events = [json.loads(line) for line in done.stdout.splitlines()]
    kinds = [e["event"] for e in events]
    assert kinds[0] == "note" and kinds[-1] == "verdict"
    assert (
        kinds.count("stage_started") == 3 and kinds.count("stage_finished") == 3 and kinds.count("check") == 6
    )
    started = next(e for e in events if e["event"] == "stage_started")
    assert started == {
        "event": "stage_started",
        "runtime": "reference",
        "stage": "build",
        "expected_seconds": 40.0,
    }
    assert events[-1]["result"] == "FAILED" and events[-1]["seconds"]["mine"]["build"] == 1.25
    assert "lines" not in events[-1] and done.stderr == ""


def test_the_eta_needs_every_pending_stage_to_have_run_before(tmp_path: Path) -> None:
    timings = Timings(tmp_path / "t.json", {"r/build": 10.0, "r/conformance": 50.0})
    assert timings.remaining([("r", "build"), ("r", "conformance")], running_for=4.0) == 56.0
    assert timings.remaining([("r", "build"), ("new", "build")]) is None
    assert Timings.load(tmp_path / "missing.json").last == {}
    (tmp_path / "bad.json").write_text("{not json")
    assert Timings.load(tmp_path / "bad.json").last == {}


def test_a_plain_view_reports_each_stage_and_a_time_table() -> None:
    err, out = io.StringIO(), io.StringIO()
    view = ProgressView(PENDING[:1], Timings(Path("/nonexistent/t.json")), out=out, err=err)
    view.event(StageStarted("reference", "build"))
    view.event(StageFinished("reference", "build", 65.0, ()))
    assert err.getvalue() == "wt certify: reference: build took 1m05s (no checks)\n"
    assert time_table(view.seconds).splitlines()[2].split() == ["reference", "1m05s", "1m05s"]
    assert [duration(s) for s in (4.21, 65, 3725)] == ["4.2s", "1m05s", "1h02m"]


def test_json_mode_never_draws_and_auto_is_plain_without_a_terminal() -> None:
    assert isinstance(make_view("json", PENDING, Timings(Path("/nonexistent"))), JsonView)
    assert type(make_view("auto", PENDING, Timings(Path("/nonexistent")))) is ProgressView  # pytest captures
