"""The conformance pytest plugin resolves `--wt-runtime` with the one resolver: a runtime given by directory
is collected (and judged) under its own name, and two runtimes with one name are refused; `--wt-skip-runtime`
leaves named runtimes out of the default selection. Collection only: nothing is built, so no Docker."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
POISON_DIR = REPO / "runtimes" / "reference" / "poison" / "ignore_sampling"


def run_pytest(tmp_path: Path, suite: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """pytest over `suite` in a subprocess, with the project's runtimes/ as the default selection."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            str(suite),
            *args,
            f"--rootdir={REPO}",  # the default selection is the project's runtimes/
        ],
        cwd=REPO,
        env={**os.environ, "WT_LOCK_DIR": str(tmp_path / "locks")},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def runtime_options(runtimes: tuple[str, ...]) -> list[str]:
    return [item for runtime in runtimes for item in ("--wt-runtime", runtime)]


def collect(tmp_path: Path, *runtimes: str, extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    suite = tmp_path / "suite"
    suite.mkdir(exist_ok=True)
    (suite / "test_kit.py").write_text("def test_kit(wt_case):\n    pass\n", encoding="utf-8")
    return run_pytest(tmp_path, suite, "--collect-only", *runtime_options(runtimes), *extra)


def test_a_runtime_given_by_directory_is_collected_under_its_name(tmp_path: Path) -> None:
    done = collect(tmp_path, "reference", "runtimes/reference/poison/ignore_sampling", str(POISON_DIR))
    assert done.returncode == 0, done.stdout + done.stderr
    ids = [line.split("[", 1)[1].rstrip("]") for line in done.stdout.splitlines() if "::test_kit[" in line]
    assert "reference-poison-ignore_sampling::sampling" in ids and "reference::sampling" in ids
    # no path in a test id's runtime: the same runtime, once (a check id may hold one: faults/model_429)
    assert not any("/" in test_id.split("::")[0] for test_id in ids)
    assert len(ids) == 2 * len({test_id.split("::")[1] for test_id in ids})


def test_two_runtimes_with_one_name_are_refused(tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(
        REPO / "runtimes" / "reference", copy, ignore=shutil.ignore_patterns("poison", "__pycache__")
    )
    done = collect(tmp_path, "reference", str(copy))
    assert done.returncode != 0
    assert "two different runtimes are named 'reference'" in done.stdout + done.stderr


def runtimes_of(done: subprocess.CompletedProcess[str]) -> set[str]:
    return {
        line.split("[", 1)[1].split("::")[0] for line in done.stdout.splitlines() if "::test_kit[" in line
    }


def test_a_skipped_runtime_is_left_out_of_the_default_selection(tmp_path: Path) -> None:
    every = collect(tmp_path)
    skips = ("--wt-skip-runtime", "reference", "--wt-skip-runtime", "minimal")
    done = collect(tmp_path, extra=skips)
    assert every.returncode == 0 and done.returncode == 0, every.stderr + done.stdout + done.stderr
    assert runtimes_of(every) - runtimes_of(done) == {"reference", "minimal"}
    assert "reference-poison-ignore_sampling" in runtimes_of(done)  # a name, not a prefix, is skipped


def test_a_skip_of_no_runtime_or_beside_a_selection_is_refused(tmp_path: Path) -> None:
    misspelt = collect(tmp_path, extra=("--wt-skip-runtime", "refrence"))
    assert misspelt.returncode != 0
    assert "--wt-skip-runtime refrence: no runtime of that name under runtimes/" in misspelt.stderr
    both = collect(tmp_path, "reference", extra=("--wt-skip-runtime", "minimal"))
    assert both.returncode != 0
    assert "give either --wt-runtime or --wt-skip-runtime" in both.stderr


def test_under_loadgroup_each_runtime_runs_whole_on_one_worker(tmp_path: Path) -> None:
    # Real pytest-xdist workers; each case writes which worker ran it (no check runs, so no Docker).
    suite = tmp_path / "suite"
    suite.mkdir()
    ran = tmp_path / "ran"
    ran.mkdir()
    (suite / "test_kit.py").write_text(
        "import os, pathlib\n"
        "def test_kit(wt_case):\n"
        f"    ran = pathlib.Path({str(ran)!r})\n"
        "    (ran / os.environ['PYTEST_XDIST_WORKER']).open('a').write(wt_case[0] + chr(10))\n",
        encoding="utf-8",
    )
    runtimes = ("reference", "minimal", "minimal-messages")
    done = run_pytest(tmp_path, suite, "-n", "3", "--dist", "loadgroup", *runtime_options(runtimes))
    assert done.returncode == 0, done.stdout + done.stderr
    workers_of: dict[str, set[str]] = {}
    for log in ran.iterdir():
        for runtime in log.read_text(encoding="utf-8").split():
            workers_of.setdefault(runtime, set()).add(log.name)
    assert set(workers_of) == set(runtimes)
    assert all(len(workers) == 1 for workers in workers_of.values()), workers_of
