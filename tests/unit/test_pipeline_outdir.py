"""--out before a run (windtunnel._pipeline.outdir): only a bundle Wind Tunnel wrote is replaced, and only
its own files; anything else is refused before anything is removed; one run at a time per directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from windtunnel._bundle.archive import write_archive
from windtunnel._pipeline.outdir import MARKER, OWNED, is_bundle, out_lock, prepare_out_dir
from windtunnel.errors import UsageError


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_missing_directory_is_created_holding_only_the_marker(tmp_path: Path) -> None:
    out = tmp_path / "a" / "out"
    assert prepare_out_dir(out) == []
    assert [p.name for p in out.iterdir()] == [MARKER] and is_bundle(out)
    marker = json.loads((out / MARKER).read_text())
    assert marker["owns"] == list(OWNED) and marker["written_by"].startswith("windtunnel ")


def test_an_empty_directory_is_used_as_it_is(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    assert prepare_out_dir(out) == [] and is_bundle(out)


def test_a_file_in_the_way_is_refused(tmp_path: Path) -> None:
    (tmp_path / "out").write_text("mine")
    with pytest.raises(UsageError, match="is a file, not a directory"):
        prepare_out_dir(tmp_path / "out")
    assert (tmp_path / "out").read_text() == "mine"


def test_an_unsealed_bundle_with_a_foreign_top_level_name_is_refused_untouched(tmp_path: Path) -> None:
    out = tmp_path / "out"
    prepare_out_dir(out)
    (out / "run.json").write_text("{}")
    (out / "my-notes.txt").write_text("mine")
    before = tree(out)
    with pytest.raises(UsageError, match=r"but also my-notes.txt, which that bundle does not list") as caught:
        prepare_out_dir(out)
    assert "how to fix: pass a new or empty directory" in str(caught.value)
    assert tree(out) == before


def test_an_unsealed_bundle_loses_only_what_its_marker_owns(tmp_path: Path) -> None:
    out = tmp_path / "out"
    prepare_out_dir(out)
    for name in ("run.json", "evidence/r/build/build.json", "traces/r/x.trace.json", "report.html"):
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text("{}")
    assert prepare_out_dir(out) == [f"the earlier bundle in {out.resolve()}"]
    assert sorted(p.name for p in out.iterdir()) == [MARKER]


def test_a_damaged_marker_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / MARKER).write_text("not json")
    (out / "run.json").write_text("{}")
    with pytest.raises(UsageError, match=f"holds a damaged {MARKER}"):
        prepare_out_dir(out)
    assert (out / "run.json").read_text() == "{}"


def test_a_symlink_is_never_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "precious.txt").write_text("mine")
    out = tmp_path / "out"
    prepare_out_dir(out)
    (out / "evidence").symlink_to(elsewhere)
    with pytest.raises(UsageError, match=r"holds a symlink \(evidence\)"):
        prepare_out_dir(out)
    assert (elsewhere / "precious.txt").read_text() == "mine"


def test_an_archive_beside_it_that_wind_tunnel_did_not_write_is_refused_before_anything_goes(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    prepare_out_dir(out)
    (out / "run.json").write_text("{}")
    archive = tmp_path / "out.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:  # a real tar.gz, but not a bundle's
        tar.add(out / "run.json", arcname="out/run.json")
    before = archive.read_bytes()
    with pytest.raises(UsageError, match="is not a Wind Tunnel bundle archive"):
        prepare_out_dir(out)
    assert archive.read_bytes() == before and (out / "run.json").is_file()


def test_a_bundle_archive_beside_it_is_replaced(tmp_path: Path) -> None:
    out = tmp_path / "out"
    prepare_out_dir(out)
    (out / "run.json").write_text("{}")
    archive = write_archive(out, tmp_path / "out.tar.gz")
    assert str(archive) in prepare_out_dir(out) and not archive.exists()


def test_a_symlinked_archive_is_refused(tmp_path: Path) -> None:
    (tmp_path / "real.tar.gz").write_bytes(b"mine")
    (tmp_path / "out.tar.gz").symlink_to(tmp_path / "real.tar.gz")
    with pytest.raises(UsageError, match="is not a Wind Tunnel bundle archive"):
        prepare_out_dir(tmp_path / "out")
    assert (tmp_path / "real.tar.gz").read_bytes() == b"mine"


HOLDER = """
import sys, time
from pathlib import Path
from windtunnel._pipeline.outdir import out_lock
with out_lock(Path(sys.argv[1])):
    print("locked", flush=True)
    time.sleep(60)
"""


def test_a_second_certify_into_the_same_out_fails_fast_naming_the_holders_pid(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path / "out")], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        done = subprocess.run(
            [sys.executable, "-m", "windtunnel._cli.main", "certify", "--out", "out"],
            cwd=tmp_path,
            env={**os.environ, "DOCKER_HOST": "unix:///nonexistent/docker.sock"},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        holder.kill()
        holder.communicate()
    assert done.returncode == 2, done.stderr
    assert f"in use by another wt certify (pid {holder.pid})" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "out").exists()


def test_the_lock_is_released_when_the_run_ends(tmp_path: Path) -> None:
    with out_lock(tmp_path / "out"):
        pass
    with out_lock(tmp_path / "out") as lock:
        assert lock.name == ".out.wt-lock" and lock.read_text().split()[0] == str(os.getpid())


def test_an_oserror_of_the_run_itself_is_not_reported_as_a_lock_problem(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="the run's own"), out_lock(tmp_path / "out"):
        raise FileNotFoundError("the run's own")
