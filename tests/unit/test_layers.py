"""The layer contracts in pyproject.toml (docs/design.md, "Layers"): the real tree keeps them, a back-edge breaks them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

pytestmark = pytest.mark.skipif(not LINT_IMPORTS.exists(), reason="import-linter is a dev dependency")


def _copy(tmp_path: Path) -> Path:
    """The package and the contracts, copied where an edit cannot touch the checkout."""
    shutil.copytree(ROOT / "src" / "windtunnel", tmp_path / "src" / "windtunnel")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def _lint(project: Path) -> subprocess.CompletedProcess[str]:
    # PYTHONPATH comes before the editable install's path entry, so the copy is the windtunnel analysed.
    env = {**os.environ, "PYTHONPATH": str(project / "src")}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--config", str(project / "pyproject.toml")],
        check=False,
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _append(module: Path, line: str) -> None:
    module.write_text(module.read_text() + f"\n\ndef _back_edge() -> None:\n    {line}  # noqa\n")


def test_the_real_tree_keeps_every_contract(tmp_path: Path) -> None:
    result = _lint(_copy(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        # a lazy import is still an import: the scenario model reaching up into the pipeline
        ("_scenario/model.py", "from windtunnel._pipeline import context", "layers"),
        # siblings of one layer stay independent
        ("_selftest/engine.py", "import windtunnel._prove.suite", "layers"),
        # the core SPI importing the authoring layer (what spi and _scenario used to do)
        ("_core/agent_runtime.py", "import windtunnel._scenario.model", "layers"),
        # a private module using a public door
        ("_runner/execute.py", "import windtunnel.api", "doors"),
        ("_gateway/admin.py", "import windtunnel._gateway.app", "gateway"),
    ],
)
def test_a_back_edge_breaks_its_contract(tmp_path: Path, module: str, line: str, contract: str) -> None:
    project = _copy(tmp_path)
    _append(project / "src" / "windtunnel" / module, line)
    result = _lint(project)
    assert result.returncode != 0, result.stdout
    broken = [text for text in result.stdout.splitlines() if "BROKEN" in text.split()]
    assert any(text.split()[0] == contract for text in broken), result.stdout


def test_outside_src_and_tests_every_private_module_is_banned() -> None:
    """ruff's banned-api keeps runtimes/, scenarios/, conformance/, pipeline/ and bench/ on the doors: it
    must name every private module, or a new one would slip through."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    banned = set(config["tool"]["ruff"]["lint"]["flake8-tidy-imports"]["banned-api"])
    private = {
        f"windtunnel.{path.stem}"
        for path in (ROOT / "src" / "windtunnel").iterdir()
        if path.name.startswith("_") and not path.name.startswith("__") and path.suffix in ("", ".py")
    }
    assert banned == private


def test_only_src_and_tests_may_import_private_modules() -> None:
    """No per-file exemption lets runtimes/, scenarios/, conformance/, pipeline/ or bench/ past the doors."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    ignores = config["tool"]["ruff"]["lint"]["per-file-ignores"]
    exempt = {pattern for pattern, rules in ignores.items() if "TID251" in rules or "TID" in rules}
    assert exempt == {"src/**", "tests/**"}
