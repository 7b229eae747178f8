"""A runtime's image inputs come from its runtime.toml: the Dockerfile, requirements, local packages, build
arguments, the tag from its name."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from windtunnel._engine.images import (
    requirements_file,
    runtime_image_tag,
    runtime_requirements,
)
from windtunnel._runtimes.manifest import check_buildable, load_manifest
from windtunnel.errors import ConfigFileError

REPO = Path(__file__).resolve().parents[2]

COMPONENT = re.compile(r"^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$")
"""A path component of a Docker image reference (distribution/reference's grammar)."""


def _component(tag: str) -> str:
    repository, _, version = tag.rpartition(":")
    assert version == "latest"
    namespace, _, name = repository.partition("/")
    assert namespace == "windtunnel"
    return name


@pytest.mark.parametrize(
    "name",
    [
        "reference",
        "Reference",
        "MyAgent",
        "a..b",
        "_x_",
        "x__y",
        "a---b",
        "ünïcode",
        "",
        "-",
        "a" * 300,
        "x/y:z",
    ],
)
def test_every_runtime_name_gives_a_valid_repository(name: str) -> None:
    component = _component(runtime_image_tag(name))
    assert COMPONENT.match(component), component
    assert len(component) < 128


def test_valid_names_are_kept_and_changed_ones_carry_a_digest() -> None:
    assert runtime_image_tag("reference") == "windtunnel/runtime-reference:latest"
    assert (
        runtime_image_tag("reference-poison-reset_noop")
        == "windtunnel/runtime-reference-poison-reset_noop:latest"
    )
    assert re.fullmatch(r"windtunnel/runtime-myagent-[0-9a-f]{8}:latest", runtime_image_tag("MyAgent"))
    assert runtime_image_tag("MyAgent") == runtime_image_tag("MyAgent")  # deterministic


def test_names_differing_only_by_case_or_replaced_characters_stay_apart() -> None:
    names = ["agent", "Agent", "AGENT", "agent!", "agent?", "a.gent", "a..gent"]
    tags = [runtime_image_tag(name) for name in names]
    assert len(set(tags)) == len(names), tags


def _runtime(root: Path, toml: str, files: dict[str, str]) -> Path:
    directory = root / "runtimes" / "alt"
    for name, text in {"runtime.toml": toml, **files}.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text(text)
    return directory


ALT = 'name = "Alt"\n[image]\nbuild = "."\ndockerfile = "docker/Alt.Dockerfile"\nrequirements = "deps/prod.txt"\n'


def test_the_plan_builds_the_manifests_dockerfile_with_its_requirements(tmp_path: Path) -> None:
    directory = _runtime(
        tmp_path,
        ALT,
        {
            "Dockerfile": "FROM scratch\n",
            "requirements.txt": "not-this==1\n",
            "docker/Alt.Dockerfile": "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\n",
            "deps/prod.txt": "rfc8785\n",
        },
    )
    manifest = load_manifest(directory)
    check_buildable(manifest)
    assert manifest.build_dir == directory.resolve()
    assert (directory / manifest.dockerfile).resolve() == (directory / "docker" / "Alt.Dockerfile").resolve()
    assert runtime_requirements(directory, manifest.requirements, manifest.packages) == ("rfc8785",)
    assert runtime_image_tag("Alt") != "windtunnel/runtime-alt:latest"
    assert requirements_file(directory, manifest.requirements) == directory / "deps" / "prod.txt"


def test_without_keys_the_directorys_dockerfile_and_requirements_are_used(tmp_path: Path) -> None:
    directory = _runtime(
        tmp_path,
        'name = "alt"\n[image]\nbuild = "."\n',
        {"Dockerfile": "FROM x\n", "requirements.txt": "httpx\n"},
    )
    manifest = load_manifest(directory)
    assert manifest.dockerfile == "Dockerfile"
    assert runtime_requirements(directory, manifest.requirements, manifest.packages) == ("httpx",)
    (directory / "requirements.txt").unlink()
    assert requirements_file(directory, None) is None
    assert runtime_requirements(directory, None, ()) == ()


@pytest.mark.parametrize(
    ("files", "field"),
    [
        ({"Dockerfile": "FROM x\n", "deps/prod.txt": ""}, "image.dockerfile"),
        ({"docker/Alt.Dockerfile": "FROM x\n"}, "image.requirements"),
    ],
)
def test_a_missing_dockerfile_or_requirements_file_names_its_key(
    tmp_path: Path, files: dict[str, str], field: str
) -> None:
    manifest = load_manifest(_runtime(tmp_path, ALT, files))
    with pytest.raises(ConfigFileError) as raised:
        check_buildable(manifest)
    assert raised.value.field == field  # type: ignore[attr-defined]
    assert "runtime.toml" in str(raised.value)


LIBRARY = 'name = "lib"\nversion = "1.0"\ndependencies = ["anyio>=4", "starlette>=0.37"]\n'
WITH_PACKAGES = (
    'name = "alt"\n[image]\nbuild = "."\ndockerfile = "../../shared.Dockerfile"\n'
    'packages = ["../../packages/lib"]\nargs = { RUNTIME_PACKAGE = "alt_runtime" }\n'
)


def _with_library(tmp_path: Path, toml: str = WITH_PACKAGES) -> Path:
    (tmp_path / "packages" / "lib").mkdir(parents=True)
    (tmp_path / "packages" / "lib" / "pyproject.toml").write_text(f"[project]\n{LIBRARY}")
    (tmp_path / "shared.Dockerfile").write_text("ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\n")
    return _runtime(tmp_path, toml, {"requirements.txt": "httpx\nanyio>=4\n"})


def test_local_packages_are_built_from_their_directory_and_their_dependencies_join_the_wheels(
    tmp_path: Path,
) -> None:
    manifest = load_manifest(_with_library(tmp_path))
    check_buildable(manifest)
    assert manifest.packages == ((tmp_path / "packages" / "lib").resolve(),)
    assert (manifest.directory / manifest.dockerfile).resolve() == (tmp_path / "shared.Dockerfile").resolve()
    assert manifest.build_args == {"RUNTIME_PACKAGE": "alt_runtime"}
    # The package is never a requirement (no index is asked for its name), only its dependencies are.
    requirements = ("anyio>=4", "httpx", "starlette>=0.37")
    assert runtime_requirements(manifest.directory, None, manifest.packages) == requirements


def test_a_variant_inherits_the_packages_and_build_arguments(tmp_path: Path) -> None:
    directory = _with_library(tmp_path)
    variant = directory / "poison" / "p"
    variant.mkdir(parents=True)
    (variant / "runtime.toml").write_text(
        'name = "alt-p"\nextends = "../.."\n[env]\nset = { WT_FAULT = "x" }\n'
    )
    manifest = load_manifest(variant)
    assert manifest.packages == load_manifest(directory).packages
    assert manifest.build_args == {"RUNTIME_PACKAGE": "alt_runtime"}


@pytest.mark.parametrize(
    ("toml", "field", "problem"),
    [
        (WITH_PACKAGES.replace("packages/lib", "packages/gone"), "image.packages", "not a Python project"),
        (WITH_PACKAGES.replace('["../../packages/lib"]', '"../../packages/lib"'), "image.packages", "a list"),
        (WITH_PACKAGES.replace("RUNTIME_PACKAGE", "BASE_IMAGE"), "image.args", "BASE_IMAGE is set by Wind"),
        (
            WITH_PACKAGES.replace('"alt_runtime"', "3"),
            "image.args.RUNTIME_PACKAGE",
            'must be a table of NAME = "value" strings',
        ),
    ],
)
def test_a_bad_package_or_build_argument_names_its_key(
    tmp_path: Path, toml: str, field: str, problem: str
) -> None:
    with pytest.raises(ConfigFileError) as raised:
        check_buildable(load_manifest(_with_library(tmp_path, toml)))
    assert raised.value.field == field  # type: ignore[attr-defined]
    assert problem in str(raised.value)


def test_windtunnel_assets_resolve_wherever_the_runtime_directory_lives(tmp_path: Path) -> None:
    """A copy of runtimes/reference outside the repository names the same Dockerfile and library."""
    original = load_manifest(REPO / "runtimes" / "reference")
    copy = tmp_path / "elsewhere" / "reference"
    shutil.copytree(REPO / "runtimes" / "reference", copy, ignore=shutil.ignore_patterns("poison"))
    moved = load_manifest(copy)
    assert moved.dockerfile == original.dockerfile == str(REPO / "containers" / "python-runtime.Dockerfile")
    assert moved.packages == original.packages == (REPO / "packages" / "windtunnel-inject",)
    check_buildable(moved)


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ('dockerfile = "windtunnel:no-such-thing"', "image.dockerfile"),
        ('packages = ["windtunnel:no-such-thing"]', "image.packages"),
    ],
)
def test_an_unknown_windtunnel_asset_is_named(tmp_path: Path, line: str, field: str) -> None:
    (tmp_path / "runtime.toml").write_text(f'name = "x"\n[image]\nbuild = "."\n{line}\n', encoding="utf-8")
    with pytest.raises(ConfigFileError) as raised:
        load_manifest(tmp_path)
    assert raised.value.context["field"] == field
    assert "does not ship" in str(raised.value)
    assert "windtunnel:python-runtime, windtunnel:windtunnel-inject" in (raised.value.hint or "")
