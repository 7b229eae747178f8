"""The one runtime lifecycle (windtunnel._runner.lifecycle) and every verb going through it: the lock is taken
before build(), pre_run() is called once, post_run() and close() run on error, on Ctrl-C and on SIGTERM, and
the lock is released. A real Python plugin (tests/fixtures/plugins/lifecycle.py) logs each step; no Docker."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.unit.pipeline_steps import Executor, build, step
from windtunnel._bundle.models import CheckRecord, CheckScope, Stage
from windtunnel._config import load_settings
from windtunnel._core.vocabulary import CheckStatus
from windtunnel._pipeline.config import REFERENCE, CertifyConfig
from windtunnel._pipeline.context import StageContext
from windtunnel._pipeline.plan import Step, execute
from windtunnel._pipeline.stages import build_stage
from windtunnel._runner.lifecycle import open_runtime
from windtunnel._runtimes.resolve import RuntimeDescription, resolve_runtime
from windtunnel.errors import HarnessError, RuntimeFault

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
sys.path.insert(0, str(FIXTURES))

from plugins import lifecycle  # type: ignore[import-not-found]  # noqa: E402

PLUGIN = "plugins.lifecycle:plugin"
ARTIFACTS = str(REPO / "scenarios" / "artifacts")
AFTER = ["post_run", "close"]


@pytest.fixture(autouse=True)
def logged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    log = tmp_path / "lifecycle.log"
    monkeypatch.setenv("LIFECYCLE_LOG", str(log))
    monkeypatch.setenv("WT_LOCK_DIR", str(tmp_path / "locks"))
    monkeypatch.setenv("WT_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.delenv("LIFECYCLE_FAIL", raising=False)
    yield log
    assert not lifecycle.lock_held(), "the machine-wide lock outlived the runtime"
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the SIGTERM handler went with the runtime


def fail(monkeypatch: pytest.MonkeyPatch, spec: str) -> None:
    monkeypatch.setenv("LIFECYCLE_FAIL", spec)


def described() -> RuntimeDescription:
    return resolve_runtime(PLUGIN, load_settings(REPO))


def opened_and_closed(events: list[str]) -> None:
    """Locked before the build, pre_run before any provision, post_run then close at the very end."""
    assert events[:2] == ["build", "locked"], events
    assert events[-2:] == AFTER, events
    assert events.count("post_run") == events.count("close") == 1
    if "provision" in events:
        assert events.count("pre_run") == 1 and events.index("pre_run") < events.index("provision")


# -- open_runtime itself -------------------------------------------------------------------------------


def test_lock_build_then_post_run_and_close_once(tmp_path: Path) -> None:
    with open_runtime(described(), lock_dir=tmp_path / "locks") as opened:
        assert lifecycle.lock_held()
        opened.pre_run([])
        with pytest.raises(HarnessError, match="asked for twice"):
            opened.pre_run([])
    assert lifecycle.events() == ["build", "locked", "pre_run", *AFTER]


@pytest.mark.parametrize("raised", [RuntimeError("boom"), KeyboardInterrupt(), SystemExit(3)])
def test_an_error_or_an_interrupt_in_the_run_still_gets_post_run_and_close(
    tmp_path: Path, raised: BaseException
) -> None:
    with pytest.raises(type(raised)), open_runtime(described(), lock_dir=tmp_path / "locks"):
        raise raised
    assert lifecycle.events() == ["build", "locked", *AFTER]


def test_an_interrupt_during_post_run_does_not_skip_close(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fail(monkeypatch, "post_run:interrupt")
    with pytest.raises(KeyboardInterrupt), open_runtime(described(), lock_dir=tmp_path / "locks"):
        pass
    assert lifecycle.events() == ["build", "locked", *AFTER]


def signalled(lock_dir: Path) -> None:
    with open_runtime(described(), lock_dir=lock_dir):
        assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL  # else the signal would kill pytest
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler raises before this ends


def test_sigterm_unwinds_like_ctrl_c(tmp_path: Path) -> None:
    with pytest.raises(KeyboardInterrupt, match="SIGTERM"):
        signalled(tmp_path / "locks")
    assert lifecycle.events() == ["build", "locked", *AFTER]


def test_a_failing_post_run_or_close_is_reported_never_in_place_of_the_runs_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fail(monkeypatch, "close:error")
    problems: list[Exception] = []
    with open_runtime(described(), lock_dir=tmp_path / "locks", on_problem=problems.append):
        pass
    assert [type(p) for p in problems] == [HarnessError] and "close failed on purpose" in str(problems[0])
    fail(monkeypatch, "post_run:error")
    with (
        pytest.raises(RuntimeFault, match=r"post_run\(\) raised RuntimeError"),
        open_runtime(described(), lock_dir=tmp_path / "locks"),
    ):
        pass  # nothing else went wrong: the caller hears of it
    with (
        pytest.raises(ValueError, match="the run's own"),
        open_runtime(described(), lock_dir=tmp_path / "locks"),
    ):
        raise ValueError("the run's own error")
    assert lifecycle.events().count("close") == 3


def test_a_failed_build_leaves_nothing_to_close_and_releases_the_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fail(monkeypatch, "build:error")
    with (
        pytest.raises(Exception, match="build failed on purpose"),
        open_runtime(described(), lock_dir=tmp_path / "locks"),
    ):
        pytest.fail("no runtime was built")
    assert lifecycle.events() == ["build"]


def test_no_limit_takes_no_lock(tmp_path: Path) -> None:
    unlimited = dataclasses.replace(described(), max_concurrency=None)
    with open_runtime(unlimited, lock_dir=tmp_path / "locks"):
        pass
    assert lifecycle.events() == ["build", "unlocked", *AFTER]


# -- every verb ----------------------------------------------------------------------------------------


VERBS = {
    "run": ["run", "--runtime", PLUGIN, "--pack", ARTIFACTS, "--scenario", "artifact_guard"],
    "selftest": ["selftest", "--runtime", PLUGIN, "--pack", ARTIFACTS, "--scenario", "artifact_guard"],
    "prove": ["prove", "--runtime", PLUGIN, "--pack", ARTIFACTS, "--scenario", "artifact_guard"],
    "doctor": ["doctor", "--runtime", PLUGIN, "--pack", ARTIFACTS],
}


def wt(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    """The CLI in its own process, as a user runs it (the plugin module importable from tests/fixtures)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(FIXTURES), str(REPO)])}
    return subprocess.run(
        [sys.executable, "-m", "windtunnel._cli.main", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_every_verb_opens_the_runtime_in_the_one_lifecycle(verb: str) -> None:
    done = wt(*VERBS[verb])
    assert "Traceback" not in done.stderr, done.stderr
    events = lifecycle.events()
    opened_and_closed(events)
    assert "pre_run" in events and "provision" in events and "teardown" in events


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_ctrl_c_in_any_verb_still_closes_the_runtime(verb: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fail(monkeypatch, "provision:interrupt")
    done = wt(*VERBS[verb])
    assert done.returncode == 130 and "wt: interrupted" in done.stderr, done.stderr
    events = lifecycle.events()
    opened_and_closed(events)
    assert events[events.index("provision") :] == ["provision", *AFTER]


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_an_error_in_any_verb_still_tears_down_and_closes(verb: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fail(monkeypatch, "send:error")
    done = wt(*VERBS[verb])
    assert "Traceback" not in done.stderr, done.stderr
    events = lifecycle.events()
    opened_and_closed(events)
    assert events.count("provision") == events.count("teardown") >= 1  # every handle torn down


def test_sigterm_stops_wt_run_and_still_closes_the_runtime(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fail(monkeypatch, "send:hang")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(FIXTURES), str(REPO)])}
    process = subprocess.Popen(
        [sys.executable, "-m", "windtunnel._cli.main", *VERBS["run"]],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while "send" not in lifecycle.events() and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 143, stderr  # 128 + SIGTERM, as README and `wt --help` say
    assert "wt: interrupted by SIGTERM" in stderr and "Traceback" not in stderr
    opened_and_closed(lifecycle.events())


# -- certify -------------------------------------------------------------------------------------------


def certify_config(tmp_path: Path) -> CertifyConfig:
    return CertifyConfig(
        runtimes=(PLUGIN,),
        pack_refs=(ARTIFACTS,),
        root=REPO,
        out_dir=tmp_path / "out",
        suite_dir=REPO / "conformance",
        lock_dir=tmp_path / "locks",
    )


def build_the_plugin(ctx: StageContext) -> list[CheckRecord]:
    """The real build stage for the plugin; the reference control is opened without Docker (pipeline_steps)."""
    return build().run(ctx) if ctx.run.name == REFERENCE else build_stage(ctx)


def interrupting(ctx: StageContext) -> list[CheckRecord]:
    if ctx.run.name != REFERENCE:
        raise KeyboardInterrupt
    return []


def plugin_checks(outcome: object) -> dict[str, CheckRecord]:
    runs = outcome.runs  # type: ignore[attr-defined]
    return {check.id: check for check in runs[1].checks}


def test_certify_takes_the_lock_and_calls_pre_run_and_post_run_like_every_verb(tmp_path: Path) -> None:
    outcome = execute(
        (Step(Stage.BUILD, build_the_plugin), step(Stage.CONFORMANCE)), certify_config(tmp_path), Executor()
    )
    # the build stage sees it get ready: one handle provisioned and torn down, after pre_run
    assert lifecycle.events() == ["build", "locked", "pre_run", "provision", "teardown", *AFTER]
    checks = plugin_checks(outcome)
    assert checks["plugins.lifecycle_plugin/build/images"].status is CheckStatus.PASSED
    assert checks["plugins.lifecycle_plugin/build/ready"].status is CheckStatus.PASSED
    assert "plugins.lifecycle_plugin/conformance/check" in checks


def test_a_runtime_that_never_gets_ready_fails_at_build_and_nothing_else_runs_on_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fail(monkeypatch, "provision:error")
    outcome = execute(
        (Step(Stage.BUILD, build_the_plugin), step(Stage.CONFORMANCE)), certify_config(tmp_path), Executor()
    )
    checks = plugin_checks(outcome)
    ready = checks["plugins.lifecycle_plugin/build/ready"]
    assert ready.status is CheckStatus.FAILED and "provision failed on purpose" in ready.detail
    assert ready.scope is CheckScope.RUNTIME and ready.evidence  # the runtime's failure, not the harness's
    assert "plugins.lifecycle_plugin/conformance/check" not in checks
    assert lifecycle.events()[-2:] == AFTER


def test_certify_closes_the_runtime_when_interrupted(tmp_path: Path) -> None:
    plan = (Step(Stage.BUILD, build_the_plugin), Step(Stage.CONFORMANCE, interrupting))
    with pytest.raises(KeyboardInterrupt):
        execute(plan, certify_config(tmp_path), Executor())
    assert lifecycle.events() == ["build", "locked", "pre_run", "provision", "teardown", *AFTER]


def test_certify_records_a_failing_pre_run_post_run_and_close(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fail(monkeypatch, "pre_run:error")
    outcome = execute(
        (Step(Stage.BUILD, build_the_plugin), step(Stage.CONFORMANCE)), certify_config(tmp_path), Executor()
    )
    checks = plugin_checks(outcome)
    assert checks["plugins.lifecycle_plugin/build/pre-run"].status is CheckStatus.FAILED
    assert (
        "plugins.lifecycle_plugin/conformance/check" not in checks
    )  # nothing runs on a runtime whose setup failed
    assert lifecycle.events()[-2:] == AFTER
    for hook, check_id, status in (
        ("post_run", "plugins.lifecycle_plugin/publish/post-run", CheckStatus.FAILED),
        ("close", "harness/publish/closed/plugins.lifecycle_plugin", CheckStatus.ERROR),
    ):
        fail(monkeypatch, f"{hook}:error")
        checks = plugin_checks(
            execute((Step(Stage.BUILD, build_the_plugin),), certify_config(tmp_path), Executor())
        )
        assert checks[check_id].status is status and f"{hook} failed on purpose" in checks[check_id].detail


# -- the conformance suite's pytest plugin ------------------------------------------------------------


def test_the_conformance_suite_opens_each_runtime_in_the_one_lifecycle(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "test_kit.py").write_text(
        "def test_kit(wt_case, wt_run_check):\n    wt_run_check(*wt_case)\n", encoding="utf-8"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(FIXTURES), str(REPO)])}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            str(suite),
            "--wt-runtime",
            PLUGIN,
            "-k",
            "response_shapes or session_affinity",
            "--rootdir",
            str(tmp_path),
        ],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert "2 passed" in done.stdout, done.stdout[-3000:] + done.stderr[-3000:]
    events = lifecycle.events()
    opened_and_closed(events)
    assert events.count("build") == 1  # built once for both checks, closed when the suite ended
