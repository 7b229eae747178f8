"""tools/coverage_floor.py: per-package coverage from coverage.py's JSON report, the 70% floor, and the
exemptions read from CONTRIBUTING.md. The end-to-end test measures a small real package with coverage.py
in a subprocess, as `nox -s tests` does, and lowers one package below the floor."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))
import coverage_floor  # noqa: E402 - tools/ is no package; mypy finds it through mypy_path

CONTRIBUTING = """# Contributing

## Integration-surface exemption

| package | why it is exempt |
|---|---|
| `windtunnel._remote` | runs only inside a container |

## Next section

| `windtunnel._ignored` | rows after the section do not count |
"""


def report(files: dict[str, tuple[int, int]]) -> dict[str, object]:
    return {
        "files": {
            path: {"summary": {"num_statements": total, "covered_lines": covered}}
            for path, (total, covered) in files.items()
        }
    }


def test_files_add_up_per_first_level_package() -> None:
    totals = coverage_floor.tally(
        report(
            {
                "src/windtunnel/api.py": (10, 10),
                "src/windtunnel/_bundle/models.py": (10, 5),
                "src/windtunnel/_conformance/kitpack/pack.py": (10, 10),
                "src/windtunnel/_conformance/kit.py": (10, 4),
                "/abs/site-packages/windtunnel/_gateway/app.py": (4, 1),
            }
        )
    )
    assert {name: (t.statements, t.covered) for name, t in totals.items()} == {
        "windtunnel": (10, 10),
        "windtunnel._bundle": (10, 5),
        "windtunnel._conformance": (20, 14),
        "windtunnel._gateway": (4, 1),
    }


def test_exemptions_are_the_table_of_their_section_only(tmp_path: Path) -> None:
    path = tmp_path / "CONTRIBUTING.md"
    path.write_text(CONTRIBUTING)
    assert coverage_floor.exemptions(path) == {"windtunnel._remote": "runs only inside a container"}


def test_below_the_floor_fails_unless_exempt_with_a_reason() -> None:
    totals = coverage_floor.tally(
        report(
            {
                "w/windtunnel/_a/x.py": (10, 9),
                "w/windtunnel/_b/x.py": (10, 6),
                "w/windtunnel/_remote/x.py": (10, 1),
            }
        )
    )
    lines, problems = coverage_floor.check(totals, {"windtunnel._remote": "runs in a container"}, 70.0)
    assert problems == ["windtunnel._b: 60.0% is below the 70% floor"]
    assert any("exempt: runs in a container" in line for line in lines)
    _, problems = coverage_floor.check(totals, {"windtunnel._remote": "", "windtunnel._gone": "x"}, 70.0)
    assert "windtunnel._remote: the exemption gives no reason" in problems
    assert "windtunnel._gone: exempt, but no such package was measured" in problems


def test_an_exempt_package_that_meets_the_floor_says_its_exemption_can_go() -> None:
    totals = coverage_floor.tally(report({"w/windtunnel/_remote/x.py": (10, 9)}))
    lines, problems = coverage_floor.check(totals, {"windtunnel._remote": "runs in a container"}, 70.0)
    assert not problems and any("meets the floor; the exemption can go" in line for line in lines)


def _project(tmp_path: Path, *, covered_b: bool) -> Path:
    """A package with subpackages _a (tested) and _b (tested only when `covered_b`), measured for real."""
    for name in ("_a", "_b"):
        package = tmp_path / "src" / "windtunnel" / name
        package.mkdir(parents=True)
        (package / "__init__.py").write_text(
            "def used(x):\n    return x + 1\n\n\n"
            + "".join(f"def unused_{i}(x):\n    y = x * {i}\n    return y - 1\n\n\n" for i in range(5))
        )
    (tmp_path / "src" / "windtunnel" / "__init__.py").write_text("")
    calls = "import windtunnel._a as a, windtunnel._b as b\n\n\ndef test_it():\n    assert a.used(1) == 2\n"
    calls += "".join(f"    assert a.unused_{i}(1) == {i - 1}\n" for i in range(5))
    if covered_b:
        calls += "".join(f"    assert b.unused_{i}(1) == {i - 1}\n" for i in range(5))
    (tmp_path / "test_it.py").write_text(calls)
    (tmp_path / "CONTRIBUTING.md").write_text(
        "## Integration-surface exemption\n\n| package | why |\n|---|---|\n"
    )
    return tmp_path


def _measured_floor(project: Path) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": str(project / "src"), "PATH": "/usr/bin:/bin"}
    run = [sys.executable, "-m", "coverage"]
    for args in (
        [
            "run",
            "--source=windtunnel",
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:windtunnel",
            "-p",
            "no:windtunnel-testing",
            "test_it.py",
        ],
        ["json", "-q", "-o", "coverage.json"],
    ):
        subprocess.run([*run, *args], cwd=project, env=env, check=True, capture_output=True, timeout=120)
    floor = [sys.executable, str(REPO / "tools" / "coverage_floor.py"), "coverage.json"]
    return subprocess.run(floor, cwd=project, capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.parametrize("covered_b", [True, False])
def test_a_package_lowered_below_the_floor_fails_the_measured_run(tmp_path: Path, covered_b: bool) -> None:
    done = _measured_floor(_project(tmp_path, covered_b=covered_b))
    if covered_b:
        assert done.returncode == 0, done.stdout
        assert "windtunnel._b" in done.stdout and "BELOW" not in done.stdout
    else:
        assert done.returncode == 1, done.stdout
        assert "windtunnel._b: 35.3% is below the 70% floor" in done.stdout
        assert "windtunnel._a " in done.stdout and "windtunnel._a:" not in done.stdout
    table = json.loads((tmp_path / "coverage.json").read_text())
    assert table["files"]
