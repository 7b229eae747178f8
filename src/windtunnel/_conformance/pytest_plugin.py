"""pytest plugin shipped with windtunnel: runs the conformance kit over runtimes as parametrised tests.

A suite file needs only `def test_conformance(wt_case, wt_conformance): wt_conformance(*wt_case)`.

`--wt-runtime NAME|DIR` (repeatable) picks runtimes, resolved as every verb resolves them; by default
every runtime.toml under `runtimes/` of the project, the suite's poison variants included. A test asks for
the `wt_case` fixture (runtime name, check id) and `wt_run_check`; runtimes are built once, in order, in
the one runtime lifecycle, and closed when the suite moves to the next one.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from windtunnel._conformance.case_ids import case_id
from windtunnel._conformance.model import CheckResult

WT_RUNTIME_OPTION = "--wt-runtime"
WT_SKIP_OPTION = "--wt-skip-runtime"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("windtunnel")
    group.addoption(
        WT_RUNTIME_OPTION,
        action="append",
        default=[],
        metavar="NAME|DIR",
        help="run the Wind Tunnel conformance kit against this runtime: a name, a runtime directory, "
        "module:attr or an image reference (repeatable; default: every runtime under runtimes/)",
    )
    group.addoption(
        WT_SKIP_OPTION,
        action="append",
        default=[],
        metavar="NAME",
        help="leave this runtime under runtimes/ out of the default selection (repeatable; "
        f"not with {WT_RUNTIME_OPTION}, which names the selection itself)",
    )
    group.addoption("--wt-results", default=None, metavar="DIR", help="write each check result as JSON here")
    group.addoption(
        "--wt-requirements",
        default=None,
        metavar="VERSION",
        help="judge with this requirement set (default: requirement_set of the project's [tool.windtunnel])",
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption(WT_SKIP_OPTION):
        selected_runtimes(config)  # a bad skip is one usage line before anything is collected


def selected_runtimes(config: pytest.Config) -> list[str]:
    """What --wt-runtime names, as given; by default every runtime.toml under the project's runtimes/ but
    those --wt-skip-runtime names (each of which must be one of them: a misspelt skip would run it)."""
    chosen: list[str] = config.getoption(WT_RUNTIME_OPTION)
    skipped: list[str] = config.getoption(WT_SKIP_OPTION)
    if chosen and skipped:
        raise pytest.UsageError(f"{WT_SKIP_OPTION}: give either {WT_RUNTIME_OPTION} or {WT_SKIP_OPTION}")
    if chosen:
        return chosen
    from windtunnel._runtimes.resolve import runtime_manifests

    names = [manifest.name for manifest in runtime_manifests(Path(str(config.rootpath)))]
    unknown = sorted(set(skipped) - set(names))
    if unknown:
        raise pytest.UsageError(
            f"{WT_SKIP_OPTION} {unknown[0]}: no runtime of that name under runtimes/ "
            "(a name is the `name` of a runtimes/**/runtime.toml)"
        )
    return [name for name in names if name not in skipped]


_DESCRIBED = pytest.StashKey[dict[str, Any]]()


def described_runtimes(config: pytest.Config) -> dict[str, Any]:
    """The selected runtimes resolved once (the one resolver every verb uses), by runtime name: a runtime
    given by directory is judged under its own name, with everything its manifest declares."""
    if _DESCRIBED not in config.stash:
        from windtunnel._config import load_settings
        from windtunnel._runtimes.resolve import resolve_runtimes
        from windtunnel.errors import WindTunnelError

        try:
            found = resolve_runtimes(selected_runtimes(config), load_settings(Path(str(config.rootpath))))
        except WindTunnelError as exc:
            raise pytest.UsageError(f"{WT_RUNTIME_OPTION}: {exc}") from exc
        config.stash[_DESCRIBED] = {description.name: description for description in found}
    return config.stash[_DESCRIBED]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "wt_case" not in metafunc.fixturenames:
        return
    from windtunnel._conformance.kit import CHECK_IDS

    runtimes = described_runtimes(metafunc.config)
    directory = Path(str(metafunc.definition.path)).parent
    # A suite with poisons (the repository's conformance/) runs each poison on what can prove it precise.
    suite = load_suite(directory, metafunc.config) if (directory / "poisons.toml").is_file() else None
    # One xdist group per runtime: under `pytest -n N --dist loadgroup` a worker takes a runtime's checks
    # whole and in order, so each runtime is opened once (one lifecycle, one stack) and runtimes run side
    # by side. Without xdist the mark is inert.
    cases = [
        pytest.param((runtime, check), id=case_id(runtime, check), marks=pytest.mark.xdist_group(runtime))
        for runtime in runtimes
        for check in CHECK_IDS
        if suite is None or not suite.proves_nothing(runtime, check)
    ]
    metafunc.parametrize("wt_case", cases)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under `--dist loadgroup`, the scheduler that gives each worker a runtime's cases whole
    (windtunnel._conformance.xdist_groups); None leaves every other mode to pytest-xdist."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from windtunnel._conformance.xdist_groups import RuntimeGroupScheduling

    return RuntimeGroupScheduling(config, log)


class _Subjects:
    """Opens one runtime at a time in the one runtime lifecycle (lock, build, pre_run with the kit's
    scenarios); switching runtimes closes the previous one (post_run, close: its containers go)."""

    def __init__(self, config: pytest.Config) -> None:
        self._config = config
        self._name: str | None = None
        self._subject: Any = None
        self._lifecycle = contextlib.ExitStack()

    def get(self, name: str) -> Any:
        if name != self._name:
            self.close()
            self._subject = self._open(name)
            self._name = name
        return self._subject

    def _open(self, name: str) -> Any:
        from windtunnel._config import load_settings
        from windtunnel._conformance.subject import Subject
        from windtunnel._runner.lifecycle import open_runtime

        description = described_runtimes(self._config)[name]
        settings = load_settings(Path(str(self._config.rootpath)))
        with contextlib.ExitStack() as opening:
            opened = opening.enter_context(
                open_runtime(description, lock_dir=settings.lock_dir, prestart=True)
            )
            subject = Subject.of(description, opened.runtime, name=name)
            opened.pre_run(subject.pack.scenarios)
            self._lifecycle = opening.pop_all()  # kept open until the suite moves on
        return subject

    def close(self) -> None:
        self._name, self._subject = None, None
        self._lifecycle.close()


@pytest.fixture(scope="session")
def wt_subjects(request: pytest.FixtureRequest) -> Iterator[_Subjects]:
    subjects = _Subjects(request.config)
    yield subjects
    subjects.close()


@pytest.fixture
def wt_run_check(wt_subjects: _Subjects, request: pytest.FixtureRequest) -> Callable[[str, str], CheckResult]:
    from windtunnel._conformance.kit import check_by_id, run_check

    results_dir = request.config.getoption("--wt-results")

    def run(runtime: str, check: str) -> CheckResult:
        result = run_check(check_by_id(check), wt_subjects.get(runtime))
        if results_dir:
            target = Path(results_dir) / f"{runtime}__{check}.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(result.model_dump(mode="json"), indent=2), encoding="utf-8")
        return result

    return run


@pytest.fixture(scope="module")
def wt_suite(request: pytest.FixtureRequest) -> Any:
    """The suite's data next to the test file asking for it (requirements/, poisons.toml, ...), judged with
    the project's requirement set, as `wt certify` judges."""
    return load_suite(Path(str(request.path)).parent, request.config)


def load_suite(directory: Path, config: pytest.Config) -> Any:
    """The suite's data in `directory`, judged with --wt-requirements or the project's requirement set."""
    from windtunnel._config import load_settings
    from windtunnel._conformance.suite import Suite

    version = config.getoption("--wt-requirements") or load_settings(directory).requirement_set
    return Suite.load(directory, str(version))


@pytest.fixture
def wt_conformance(
    wt_run_check: Callable[[str, str], CheckResult], wt_suite: Any
) -> Callable[[str, str], None]:
    """Run one check on one runtime and fail the test unless the suite's rule holds for the result."""

    def check(runtime: str, check_id: str) -> None:
        result = wt_run_check(runtime, check_id)
        judgement = wt_suite.judge(runtime, check_id, result.status)
        if not judgement.ok:
            pytest.fail(
                f"{judgement.message}\n  expected: {judgement.expected}\n  got: {result.status}: {result.detail}"
            )

    return check
