"""A runtime given by directory is the same runtime as one given by name (docs/writing-a-runtime.md, "How a
runtime is found and run"). One `wt certify`, real containers: an out-of-tree copy of the bundled reference
runtime, named `reference-copy` (two runtimes of one run cannot share a name) and given by its directory,
is certified next to the reference control, given by name. Both get the same checks with the same outcomes
and the same verdict (its manifest's declared config is kept: unsupported_config passes), the bundle names
both without an absolute path (not the copy's, not $HOME, not the checkout's), and it verifies."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.certify]

REPO = Path(__file__).resolve().parents[2]
COPY = "reference-copy"


def out_of_tree_copy(where: Path) -> Path:
    """runtimes/reference copied outside the project (its poison variants left behind), renamed."""
    target = where / "elsewhere" / "my-runtime"
    shutil.copytree(
        REPO / "runtimes" / "reference", target, ignore=shutil.ignore_patterns("poison", "__pycache__")
    )
    manifest = target / "runtime.toml"
    manifest.write_text(manifest.read_text().replace('name = "reference"', f'name = "{COPY}"', 1))
    return target


def wt(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "windtunnel._cli.main", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
        check=False,
    )


def outcomes(checks: list[dict[str, Any]], runtime: str) -> dict[str, tuple[str, bool]]:
    """The runtime's own checks (status, scored) by id without the runtime's name. The tapes stage is left
    out: committed tapes are filed under the runtime's name (<pack>/tapes/reference/), so a runtime of
    another name has none to replay, by design."""
    return {
        check["id"].removeprefix(f"{runtime}/"): (check["status"], check["scored"])
        for check in checks
        if check["runtime"] == runtime and check["scope"] == "runtime" and check["stage"] != "tapes"
    }


def test_a_copy_by_directory_gets_the_checks_and_verdict_of_the_runtime_by_name(
    docker_client: Any, base_image: str, run_label: str, tmp_path: Path
) -> None:
    copy = out_of_tree_copy(tmp_path)
    out = tmp_path / "bundle"
    env = {
        **os.environ,
        "WT_BASE_IMAGE": base_image,
        "WT_SESSION_LABEL": run_label,
        "WT_LOCK_DIR": str(tmp_path / "locks"),
    }
    done = wt(env, "certify", "--runtime", str(copy), "--out", str(out))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    verdict = json.loads((out / "verdict.json").read_text())
    assert {r["name"]: r["result"] for r in verdict["runtimes"]} == {"reference": "PASSED", COPY: "PASSED"}
    checks = json.loads((out / "checks.json").read_text())["checks"]
    by_name, by_directory = outcomes(checks, "reference"), outcomes(checks, COPY)
    assert by_directory == by_name and len(by_name) > 20
    assert by_directory["conformance/unsupported_config"] == ("passed", True)  # its declared config is kept
    run = json.loads((out / "run.json").read_text())
    assert {r["name"]: r["source"] for r in run["runtimes"]} == {
        "reference": "runtimes/reference",
        COPY: COPY,
    }

    absolute = [str(tmp_path).encode(), str(Path.home()).encode(), str(REPO).encode()]  # no host path at all
    found = [
        str(p.relative_to(out)) for p in out.rglob("*") if p.is_file() and _holds(p.read_bytes(), absolute)
    ]
    with tarfile.open(f"{out}.tar.gz") as archive:
        for member in archive.getmembers():
            data = archive.extractfile(member) if member.isfile() else None
            if data is not None and _holds(data.read(), absolute):
                found.append(f"archive:{member.name}")
    assert found == [], f"absolute paths in the bundle: {found}"
    verified = wt(env, "verify", str(out), "--key", str(out / "keys" / "signer.pub.pem"))
    assert verified.returncode == 0, verified.stdout + verified.stderr


def _holds(data: bytes, needles: list[bytes]) -> bool:
    return any(needle in data for needle in needles)
