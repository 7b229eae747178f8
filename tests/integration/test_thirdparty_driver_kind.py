"""A driver kind registered by a third-party package is certified with no change to Wind Tunnel's code.

The fake package (tests/fixtures/fake_plugin_pkg) registers `fake_container` under the `windtunnel.drivers`
entry-point group: a plugin wrapping the one `windtunnel.spi.container_plugin` makes, written against the
public doors only. An out-of-tree copy of the reference runtime names it (`[driver] kind =
"fake_container"`); one real `wt certify` runs it next to the reference control. The kind's own code
builds it, and it gets every check and the verdict of the reference: Wind Tunnel asks its plugin and runtime
for abilities, never for the kind's name or class.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.fake_package import install_fake_package
from tests.integration.test_runtime_by_directory import out_of_tree_copy, outcomes, wt

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.certify]

REPO = Path(__file__).resolve().parents[2]
KINDED = "reference-kinded"


def kinded_copy(where: Path) -> Path:
    """runtimes/reference copied outside the project, renamed, its runtime.toml naming the third-party kind."""
    target = out_of_tree_copy(where)
    manifest = target / "runtime.toml"
    text = manifest.read_text().replace('name = "reference-copy"', f'name = "{KINDED}"', 1)
    manifest.write_text(text + '\n[driver]\nkind = "fake_container"\n')
    return target


def test_a_third_party_driver_kind_is_certified_like_the_built_in_one(
    docker_client: Any, base_image: str, run_label: str, tmp_path: Path
) -> None:
    site = install_fake_package(tmp_path / "fake_pkg")
    copy = kinded_copy(tmp_path)
    out = tmp_path / "bundle"
    env = {
        **os.environ,
        "PYTHONPATH": str(site),
        "WT_BASE_IMAGE": base_image,
        "WT_SESSION_LABEL": run_label,
        "WT_LOCK_DIR": str(tmp_path / "locks"),
    }
    done = wt(env, "certify", "--runtime", str(copy), "--out", str(out))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"fake_container: building {KINDED}" in done.stderr  # the kind's own code built it

    verdict = json.loads((out / "verdict.json").read_text())
    assert {r["name"]: r["result"] for r in verdict["runtimes"]} == {"reference": "PASSED", KINDED: "PASSED"}
    checks = json.loads((out / "checks.json").read_text())["checks"]
    by_kind, by_name = outcomes(checks, KINDED), outcomes(checks, "reference")
    assert by_kind == by_name and len(by_name) > 20
    run = json.loads((out / "run.json").read_text())
    assert {r["name"]: r["source"] for r in run["runtimes"]}[KINDED] == KINDED  # no host path
