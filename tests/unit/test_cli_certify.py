"""`wt certify` as users call it (windtunnel._cli.cmd_certify), in a real subprocess: the embedded default
from an empty directory, usage errors and harness errors exit 2 before any stage, an earlier bundle never
outlives a run. Nothing here reaches a container: each case stops before the first stage."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from windtunnel._bundle.archive import write_archive
from windtunnel._pipeline.outdir import MARKER, prepare_out_dir

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


def test_a_non_bundle_out_directory_is_refused_with_exit_2(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("mine")
    done = wt(tmp_path, "--out", "out")
    assert done.returncode == 2, done.stderr
    assert "is not empty and holds no Wind Tunnel bundle" in done.stderr and "how to fix" in done.stderr
    assert (tmp_path / "out" / "keep.txt").read_text() == "mine" and not stages_ran(done)


def test_a_users_files_with_a_run_json_survive_byte_for_byte(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "sub").mkdir(parents=True)
    files = {"run.json": b'{"mine": true}', "notes.txt": b"\x00\xffnotes", "sub/data.csv": b"a,b\n1,2\n"}
    for name, data in files.items():
        (out / name).write_bytes(data)
    (tmp_path / "out.tar.gz").write_bytes(b"my own archive")
    done = wt(tmp_path, "--out", "out")
    assert done.returncode == 2, done.stderr
    assert "holds no Wind Tunnel bundle" in done.stderr and "Traceback" not in done.stderr
    assert not stages_ran(done)
    assert {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()} == files
    assert (tmp_path / "out.tar.gz").read_bytes() == b"my own archive"


def earlier_bundle(tmp_path: Path) -> tuple[Path, Path]:
    """An unsealed bundle a killed run left (marker, run.json, an attestation) and a Wind Tunnel archive."""
    out = tmp_path / "out"
    prepare_out_dir(out)
    (out / "attestations").mkdir(parents=True)
    (out / "run.json").write_text("{}")
    (out / "attestations" / "certification.intoto.jsonl").write_text("{}\n")
    archive = write_archive(out, tmp_path / "out.tar.gz")
    return out, archive


def test_a_bad_key_file_stops_before_any_stage_and_the_earlier_bundle_is_gone(tmp_path: Path) -> None:
    out, archive = earlier_bundle(tmp_path)
    (tmp_path / "key.pem").write_text("not a key")
    done = wt(tmp_path, "--out", "out", "--key", "key.pem")
    assert done.returncode == 2, done.stderr
    assert "key.pem" in done.stderr and "Traceback" not in done.stderr and not stages_ran(done)
    assert not archive.exists() and [p.name for p in out.iterdir()] == [MARKER]


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
    done = wt(tmp_path, "--out", "out", DOCKER_HOST=f"unix://{tmp_path}/no-engine.sock")
    assert done.returncode == 2
    assert "unknown key 'pakcs'" in done.stderr and "known keys: runtimes, packs" in done.stderr


def test_the_help_states_the_exit_codes(tmp_path: Path) -> None:
    done = wt(tmp_path, "--help")
    text = " ".join(done.stdout.split())
    assert done.returncode == 0
    assert "0 certified (PASSED)" in text and "1 not certified" in text and "HARNESS_INVALID" in text


@pytest.mark.parametrize(("flags", "cached"), [((), True), (("--no-cache",), False)])
def test_the_control_cache_is_the_users_cache_dir_unless_no_cache(
    tmp_path: Path, flags: tuple[str, ...], cached: bool
) -> None:
    """`wt certify` keeps the reference control under the user's cache dir, never under --out;
    --no-cache keeps nothing and reuses nothing (the selftest stage then plays it afresh)."""
    import argparse

    from windtunnel._cli import cmd_certify
    from windtunnel._config import default_control_cache_dir, load_settings

    parser = argparse.ArgumentParser()
    cmd_certify.register(parser.add_subparsers())
    args = parser.parse_args(["certify", "--out", str(tmp_path / "out"), *flags])
    config = cmd_certify._config(args, load_settings(cwd=REPO))
    assert config.control_cache == (default_control_cache_dir() if cached else None)
    assert config.control_cache is None or not config.control_cache.is_relative_to(config.out_dir)
