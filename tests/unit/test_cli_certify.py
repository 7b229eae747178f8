"""`wt certify` as users call it (windtunnel._cli.cmd_certify), in a real subprocess: the embedded default
from an empty directory, usage errors and harness errors exit 2 before any stage, an earlier bundle never
outlives a run. Nothing here reaches a container: each case stops before the first stage."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def wt(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "windtunnel._cli.main", "certify", *args],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def stages_ran(done: subprocess.CompletedProcess[str]) -> bool:
    return ": build" in done.stderr


def test_print_plan_works_from_an_empty_directory(tmp_path: Path) -> None:
    done = wt(tmp_path, "--print-plan")
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert plan["stages"] == ["build", "conformance", "canary", "selftest", "tapes", "publish"]
    assert [stack["runtime"] for stack in plan["stacks"]] == ["reference"]
    assert any(service["role"] == "mock" for service in plan["stacks"][0]["mocks"])  # the bundled packs
    assert not (tmp_path / "out").exists()  # printing a plan writes nothing


def test_a_non_bundle_out_directory_is_refused_with_exit_2(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("mine")
    done = wt(tmp_path, "--out", "out")
    assert done.returncode == 2, done.stderr
    assert "is not empty and holds no earlier bundle" in done.stderr and "how to fix" in done.stderr
    assert (tmp_path / "out" / "keep.txt").read_text() == "mine" and not stages_ran(done)


def earlier_bundle(tmp_path: Path) -> tuple[Path, Path]:
    out = tmp_path / "out"
    (out / "attestations").mkdir(parents=True)
    (out / "run.json").write_text("{}")
    (out / "attestations" / "certification.intoto.jsonl").write_text("{}\n")
    archive = tmp_path / "out.tar.gz"
    archive.write_bytes(b"old")
    return out, archive


def test_a_bad_key_file_stops_before_any_stage_and_the_earlier_bundle_is_gone(tmp_path: Path) -> None:
    out, archive = earlier_bundle(tmp_path)
    (tmp_path / "key.pem").write_text("not a key")
    done = wt(tmp_path, "--out", "out", "--key", "key.pem")
    assert done.returncode == 2, done.stderr
    assert "key.pem" in done.stderr and "Traceback" not in done.stderr and not stages_ran(done)
    assert not archive.exists() and list(out.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "env", "expected"),
    [
        (("--key", "missing.pem"), {}, "cannot read the signing key"),
        (
            (),
            {"WT_SIGNING_KEY": "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"},
            "WT_SIGNING_KEY",
        ),
        (("--runtime", "no-such-runtime"), {}, "no runtime named 'no-such-runtime'"),
    ],
)
def test_usage_errors_exit_2_before_any_stage(
    tmp_path: Path, args: tuple[str, ...], env: dict[str, str], expected: str
) -> None:
    done = wt(tmp_path, "--out", "out", *args, DOCKER_HOST="unix:///nonexistent/docker.sock", **env)
    assert done.returncode == 2, done.stderr
    assert expected in done.stderr and "Traceback" not in done.stderr and not stages_ran(done)


def test_no_engine_is_a_harness_error_exit_2(tmp_path: Path) -> None:
    done = wt(tmp_path, "--out", "out", DOCKER_HOST=f"unix://{tmp_path}/no-engine.sock")
    assert done.returncode == 2, done.stderr
    assert "EngineUnavailableError" in done.stderr and "Traceback" not in done.stderr
    assert not stages_ran(done)


def test_an_unknown_config_key_exits_2_naming_it(tmp_path: Path) -> None:
    (tmp_path / "windtunnel.toml").write_text('runtimes = ["reference"]\npakcs = []\n')
    done = wt(tmp_path, "--print-plan")
    assert done.returncode == 2
    assert "unknown key 'pakcs'" in done.stderr and "known keys: runtimes, packs" in done.stderr


def test_the_help_states_the_exit_codes(tmp_path: Path) -> None:
    done = wt(tmp_path, "--help")
    text = " ".join(done.stdout.split())
    assert done.returncode == 0
    assert "0 certified (PASSED)" in text and "1 not certified" in text and "HARNESS_INVALID" in text
