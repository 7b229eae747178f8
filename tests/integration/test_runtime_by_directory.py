"""A runtime given by directory, of a driver kind a third-party package registers, is certified like the
bundled reference by name (docs/writing-a-runtime.md, "How a runtime is found and run").

One `wt certify`, real containers, shared by the module's tests (each certify of a runtime takes minutes on
two cores): an out-of-tree copy of the reference runtime, named `reference-copy` (two runtimes of one run
cannot share a name), given by its directory, and whose runtime.toml names `[driver] kind =
"fake_container"`. That kind comes from a fake package (tests/fixtures/fake_plugin_pkg) registered under the
`windtunnel.drivers` entry-point group: a plugin wrapping the one `windtunnel.spi.container_plugin` makes,
written against the public doors only. The copy is certified next to the reference control, given by name:
the kind's own code builds it, both get the same checks with the same outcomes and the same verdict (its
manifest's declared config is kept: unsupported_config passes), and the bundle names both without an
absolute path (not the copy's, not $HOME, not the checkout's) and verifies. Wind Tunnel asks the plugin and
runtime for abilities, never for the kind's name or class, and never for how the runtime was named."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.fake_package import install_fake_package

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.certify]

REPO = Path(__file__).resolve().parents[2]
COPY = "reference-copy"
KIND = "fake_container"


def out_of_tree_copy(where: Path) -> Path:
    """runtimes/reference copied outside the project (its poison variants left behind), renamed, naming
    the third-party driver kind."""
    target = where / "elsewhere" / "my-runtime"
    shutil.copytree(
        REPO / "runtimes" / "reference", target, ignore=shutil.ignore_patterns("poison", "__pycache__")
    )
    manifest = target / "runtime.toml"
    text = manifest.read_text().replace('name = "reference"', f'name = "{COPY}"', 1)
    manifest.write_text(f'{text}\n[driver]\nkind = "{KIND}"\n')
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


@dataclass(frozen=True)
class Certified:
    out: Path
    done: subprocess.CompletedProcess[str]
    env: dict[str, str]
    work: Path

    def json(self, name: str) -> Any:
        return json.loads((self.out / name).read_text())


@pytest.fixture(scope="module")
def certified(
    docker_client: Any, base_image: str, run_label: str, tmp_path_factory: pytest.TempPathFactory
) -> Certified:
    work = tmp_path_factory.mktemp("by-directory")
    site = install_fake_package(work / "fake_pkg")
    copy = out_of_tree_copy(work)
    env = {
        **os.environ,
        "PYTHONPATH": str(site),
        "WT_BASE_IMAGE": base_image,
        "WT_SESSION_LABEL": run_label,
        "WT_LOCK_DIR": str(work / "locks"),
    }
    out = work / "bundle"
    done = wt(env, "certify", "--runtime", str(copy), "--out", str(out))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return Certified(out, done, env, work)


def test_a_copy_by_directory_gets_the_checks_and_verdict_of_the_runtime_by_name(certified: Certified) -> None:
    verdict = certified.json("verdict.json")
    assert {r["name"]: r["result"] for r in verdict["runtimes"]} == {"reference": "PASSED", COPY: "PASSED"}
    checks = certified.json("checks.json")["checks"]
    by_name, by_directory = outcomes(checks, "reference"), outcomes(checks, COPY)
    assert by_directory == by_name and len(by_name) > 20
    assert by_directory["conformance/unsupported_config"] == ("passed", True)  # its declared config is kept
    run = certified.json("run.json")
    assert {r["name"]: r["source"] for r in run["runtimes"]} == {
        "reference": "runtimes/reference",
        COPY: COPY,
    }


def test_a_third_party_driver_kind_builds_and_runs_it(certified: Certified) -> None:
    assert f"{KIND}: building {COPY}" in certified.done.stderr  # the kind's own code built it


def test_the_bundle_names_no_host_path_and_verifies(certified: Certified) -> None:
    out = certified.out
    absolute = [str(certified.work).encode(), str(Path.home()).encode(), str(REPO).encode()]
    found = [
        str(p.relative_to(out)) for p in out.rglob("*") if p.is_file() and _holds(p.read_bytes(), absolute)
    ]
    with tarfile.open(f"{out}.tar.gz") as archive:
        for member in archive.getmembers():
            data = archive.extractfile(member) if member.isfile() else None
            if data is not None and _holds(data.read(), absolute):
                found.append(f"archive:{member.name}")
    assert found == [], f"absolute paths in the bundle: {found}"
    verified = wt(certified.env, "verify", str(out), "--key", str(out / "keys" / "signer.pub.pem"))
    assert verified.returncode == 0, verified.stdout + verified.stderr


def _holds(data: bytes, needles: list[bytes]) -> bool:
    return any(needle in data for needle in needles)
