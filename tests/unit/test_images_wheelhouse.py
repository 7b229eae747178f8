"""Wheelhouses: keys, the target Python, pip's arguments, and real builds cached by content."""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path

import pytest

from windtunnel._engine.base_image import TargetPython, parse_probe
from windtunnel._engine.wheelhouse import (
    MARKER,
    REQUIREMENTS_FILE,
    LocalProject,
    build_wheelhouse,
    download_args,
    missing_binary,
    normalize_requirements,
    project_dependencies,
    tree_files,
    wheelhouse_key,
)
from windtunnel.errors import HarnessError

HOST = TargetPython(version=f"{sys.version_info.major}.{sys.version_info.minor}", glibc="2.36")
OTHER = TargetPython(version="3.12", glibc="2.36")


def _project(root: Path, body: str = "VALUE = 1\n") -> LocalProject:
    (root / "src" / "tinypkg").mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "tinypkg"\nversion = "0.1"\ndependencies = ["rfc8785>=0.1", "httpx"]\n'
    )
    (root / "src" / "tinypkg" / "__init__.py").write_text(body)
    return LocalProject(path=root, include=("pyproject.toml", "src"))


def test_requirements_normalize_order_comments_and_repeats() -> None:
    assert normalize_requirements(["b>=1  # why", "", "# note", "a", "b>=1"]) == ("a", "b>=1")


def test_key_ignores_requirement_order_but_not_content_or_python(tmp_path: Path) -> None:
    project = _project(tmp_path / "p")
    key = wheelhouse_key(["a", "b"], [project], HOST)
    assert wheelhouse_key(["b", "a"], [project], HOST) == key
    assert wheelhouse_key(["a", "b", "c"], [project], HOST) != key
    assert wheelhouse_key(["a", "b"], [project], OTHER) != key
    (tmp_path / "p" / "src" / "tinypkg" / "__init__.py").write_text("VALUE = 2\n")
    assert wheelhouse_key(["a", "b"], [project], HOST) != key


def test_project_content_outside_include_does_not_change_the_key(tmp_path: Path) -> None:
    project = _project(tmp_path / "p")
    key = wheelhouse_key([], [project], HOST)
    (tmp_path / "p" / "tests").mkdir()
    (tmp_path / "p" / "tests" / "test_x.py").write_text("")
    (tmp_path / "p" / "src" / "tinypkg" / "__pycache__").mkdir()
    (tmp_path / "p" / "src" / "tinypkg" / "__pycache__" / "x.pyc").write_bytes(b"\0")
    assert wheelhouse_key([], [project], HOST) == key


def test_tree_files_skip_vcs_venvs_caches_and_egg_info(tmp_path: Path) -> None:
    for name in (".git/HEAD", ".venv/pyvenv.cfg", "x.egg-info/PKG-INFO", "build/lib/m.py", "pkg/m.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    assert [p.as_posix() for p in tree_files(tmp_path)] == ["pkg/m.py"]


def test_platform_tags_cover_the_images_glibc_and_older() -> None:
    tags = TargetPython(version="3.12", glibc="2.36").platform_tags()
    assert tags[0] == "manylinux_2_36_x86_64"
    assert "manylinux_2_17_x86_64" in tags
    assert "manylinux_2_5_x86_64" in tags
    assert "manylinux_2_37_x86_64" not in tags
    assert "manylinux2014_x86_64" in tags


def test_musl_images_are_refused_with_a_hint() -> None:
    with pytest.raises(HarnessError, match="glibc"):
        TargetPython(version="3.12", glibc="").platform_tags()


def test_probe_output_parses_and_garbage_is_quoted() -> None:
    line = json.dumps({"version": "3.11", "glibc": "2.36", "machine": "x86_64"})
    assert parse_probe(f"noise\n{line}\n") == TargetPython(version="3.11", glibc="2.36")
    with pytest.raises(HarnessError, match="python3: not found"):
        parse_probe("sh: python3: not found")


def test_download_args_target_the_images_python_not_the_hosts(tmp_path: Path) -> None:
    args = download_args(OTHER, tmp_path / "w", tmp_path / "r.txt")
    assert args[0] == "download"
    assert "--only-binary=:all:" in args
    assert args[args.index("--python-version") + 1] == "3.12"
    assert args[args.index("--implementation") + 1] == "cp"
    platforms = [args[i + 1] for i, a in enumerate(args) if a == "--platform"]
    assert platforms == OTHER.platform_tags()
    assert args[-2:] == ["-r", str(tmp_path / "r.txt")]


def test_missing_binary_reads_pips_complaint() -> None:
    output = (
        "ERROR: Could not find a version that satisfies the requirement docopt==0.6.2 (from versions: none)\n"
        "ERROR: No matching distribution found for docopt==0.6.2\n"
    )
    assert missing_binary(output) == "docopt==0.6.2"
    assert missing_binary("ERROR: HTTP error 500") is None


def test_project_dependencies_come_from_pyproject(tmp_path: Path) -> None:
    _project(tmp_path)
    assert project_dependencies(tmp_path) == ("httpx", "rfc8785>=0.1")


def test_project_without_pyproject_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match=r"pyproject\.toml"):
        project_dependencies(tmp_path)


@pytest.mark.slow
def test_local_project_wheelhouse_is_built_once_and_rebuilt_after_an_edit(tmp_path: Path) -> None:
    project = _project(tmp_path / "p")
    cache = tmp_path / "cache"
    first = build_wheelhouse(["rfc8785"], target=HOST, projects=[project], cache_dir=cache)
    names = sorted(p.name for p in first.wheels())
    assert not first.reused
    assert len(names) == 2
    assert names[0].startswith("rfc8785-")
    assert names[1] == "tinypkg-0.1-py3-none-any.whl"
    assert (first.path / REQUIREMENTS_FILE).read_text() == "rfc8785\n"
    assert json.loads((first.path / MARKER).read_text())["key"] == first.key
    again = build_wheelhouse(["rfc8785"], target=HOST, projects=[project], cache_dir=cache)
    assert again.reused
    assert again.path == first.path
    (tmp_path / "p" / "src" / "tinypkg" / "__init__.py").write_text("VALUE = 2\n")
    edited = build_wheelhouse(["rfc8785"], target=HOST, projects=[project], cache_dir=cache)
    assert not edited.reused
    assert edited.key != first.key
    wheel = next(p for p in edited.wheels() if p.name.startswith("tinypkg"))
    with zipfile.ZipFile(wheel) as archive:
        assert archive.read("tinypkg/__init__.py") == b"VALUE = 2\n"
    assert not list((tmp_path / "p").glob("*.egg-info")), "the source tree got build litter"
    assert not (tmp_path / "p" / "build").exists()


@pytest.mark.slow
def test_wheelhouse_for_another_python_minor_has_its_binaries_and_built_sdists(tmp_path: Path) -> None:
    target = TargetPython(version="3.12" if HOST.version != "3.12" else "3.11", glibc="2.36")
    tag = "cp" + target.version.replace(".", "")
    house = build_wheelhouse(["rpds-py", "docopt==0.6.2"], target=target, cache_dir=tmp_path)
    names = [p.name for p in house.wheels()]
    rpds = [n for n in names if n.startswith("rpds_py-")]
    assert len(rpds) == 1
    assert f"-{tag}-" in rpds[0], rpds  # the image's Python, not the host's
    assert "manylinux" in rpds[0]
    assert any(n.startswith("docopt-0.6.2-") and n.endswith("-none-any.whl") for n in names), names
