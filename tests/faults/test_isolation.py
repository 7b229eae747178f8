"""Per-runtime isolation under a real `wt certify`: a runtime whose Dockerfile fails and one whose container
never gets ready are each FAILED at their build stage, with the build log's tail or the container's last
lines in their evidence; the reference control still PASSES, and the bundle is signed (FAILED, not
HARNESS_INVALID: that verdict belongs to Wind Tunnel's own controls)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import docker
import pytest

from tests.faults.conftest import left_behind, output, small_project, wt_process

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.certify]

HEAD = "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\n"
RUNTIMES = {
    "does-not-build": HEAD + "RUN echo the-broken-step-runs && exit 3\n",
    "never-ready": HEAD + 'CMD ["python3", "-c", "print(\'no config, giving up\'); raise SystemExit(4)"]\n',
}


def runtime(root: Path, name: str, dockerfile: str) -> Path:
    directory = root / "runtimes" / name
    directory.mkdir(parents=True)
    (directory / "Dockerfile").write_text(dockerfile, encoding="utf-8")
    (directory / "runtime.toml").write_text(
        f'name = "{name}"\n[image]\nbuild = "."\n[config]\nsupported = ["system_prompt"]\n', encoding="utf-8"
    )
    return directory


def checks(bundle: Path) -> dict[str, dict[str, Any]]:
    data = json.loads((bundle / "checks.json").read_text(encoding="utf-8"))
    return {check["id"]: check for check in data["checks"]}


def test_a_runtime_that_does_not_build_or_never_gets_ready_fails_alone_and_the_bundle_is_signed(
    docker_client: docker.DockerClient, fault_env: dict[str, str], tmp_path: Path
) -> None:
    project, out = small_project(tmp_path / "project"), tmp_path / "out"
    args = ["certify", "--out", str(out)]
    for name, dockerfile in RUNTIMES.items():
        args += ["--runtime", str(runtime(project, name, dockerfile))]
    process = wt_process(args, fault_env, project)
    assert process.wait(timeout=2400) == 1, output(project)  # FAILED: not certified, but signed
    stdout, stderr = output(project)
    assert "verdict: FAILED" in stdout and "signed" in stdout and "Traceback" not in stderr
    assert re.search(r"^reference .* PASSED$", stdout, re.MULTILINE), stdout
    verdict = json.loads((out / "verdict.json").read_text(encoding="utf-8"))
    assert verdict["result"] == "FAILED" and verdict["harness_failures"] == []
    assert {r["name"]: r["result"] for r in verdict["runtimes"]} == {
        "reference": "PASSED",
        "does-not-build": "FAILED",
        "never-ready": "FAILED",
    }
    assert (out / "MANIFEST.sha256").is_file() and out.with_name("out.tar.gz").is_file()
    found = checks(out)
    built = found["does-not-build/build/images"]
    assert built["status"] == "failed" and "the image of runtime 'does-not-build' did not build" in str(
        built["detail"]
    )
    assert [c for c in found if c.startswith("does-not-build/")] == ["does-not-build/build/images"]
    (build_evidence,) = built["evidence"]
    tail = json.loads((out / build_evidence).read_text(encoding="utf-8"))["log_tail"]
    assert any("the-broken-step-runs" in line for line in tail), tail
    ready = found["never-ready/build/ready"]
    assert ready["status"] == "failed" and "it never got ready" in str(ready["detail"])
    (ready_evidence,) = ready["evidence"]
    assert "no config, giving up" in (out / ready_evidence).read_text(encoding="utf-8")
    assert not [c for c in found if c.startswith("never-ready/conformance/")]  # nothing ran on it
    assert left_behind(docker_client, fault_env) == ([], [])
