"""The fake third-party package (tests/fixtures/fake_plugin_pkg), pip-installed from a copy into a target
directory of its own, so the build leaves nothing behind in the repository: put it on PYTHONPATH to use it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent / "fixtures" / "fake_plugin_pkg"


def install_fake_package(work: Path) -> Path:
    """Build and install the package under `work`; the directory to put on PYTHONPATH."""
    source = work / "src"
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    target = work / "site"
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation"]
    subprocess.run(
        [*pip, "--target", str(target), str(source)],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return target
