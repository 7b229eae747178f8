"""Wheelhouses built on the host for the Python inside an image, cached by what goes into them.

Images install with `pip install --no-index --find-links /wheels`, so every wheel they need is made here:
`pip wheel` when the image's Python minor matches the host's, otherwise `pip download --only-binary` for
the image's Python and platform, with pure-Python sdists turned into wheels with `pip wheel --no-deps`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from windtunnel._engine.base_image import TargetPython
from windtunnel._files import os_error_as
from windtunnel.errors import HarnessError

log = logging.getLogger(__name__)

KEY_SCHEMA = "2"
"""Bump when the layout or the way wheels are made changes, so old caches stop matching."""

MARKER = "wheelhouse.json"
REQUIREMENTS_FILE = "requirements.txt"
"""Written into each wheelhouse: its requirements, so a Dockerfile can `pip install -r` them."""
PIP_TIMEOUT_S = 900.0
MAX_SDIST_ROUNDS = 20


class WheelhouseError(HarnessError):
    """A wheelhouse could not be built."""


@dataclass(frozen=True, slots=True, kw_only=True)
class LocalProject:
    """A project on disk to build as a wheel (no deps). `include` lists the files and directories that
    feed the wheel, relative to `path`; empty means the whole tree less caches and VCS dirs."""

    path: Path
    include: tuple[str, ...] = ()

    def digest(self) -> str:
        return tree_digest(self.path, self.include)


@dataclass(frozen=True, slots=True, kw_only=True)
class Wheelhouse:
    path: Path
    key: str
    python: TargetPython
    reused: bool
    requirements: tuple[str, ...] = field(default=())

    def wheels(self) -> list[Path]:
        return sorted(self.path.glob("*.whl"))


def default_cache_dir() -> Path:
    return Path.home() / ".cache" / "windtunnel" / "wheelhouse"


SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".venv",
        "venv",
        ".nox",
        ".tox",
        "__pycache__",
        ".mypy_cache",
        ".ruff_cache",
        ".pytest_cache",
        "build",
        "dist",
        "runs",
        "node_modules",
        "wheels",
    }
)
"""Never part of a project's content: VCS, virtualenvs, caches, build output, run output."""


def _skipped(name: str) -> bool:
    return name in SKIP_DIRS or name.endswith(".egg-info")


def tree_files(root: Path, include: Sequence[str] = ()) -> list[Path]:
    """Files under `root` (or only under its `include` entries), relative, sorted, caches skipped."""
    starts = [root / entry for entry in include] if include else [root]
    found: set[Path] = set()
    for start in starts:
        if start.is_file():
            found.add(start.relative_to(root))
            continue
        # os.walk, not Path.walk (3.12+); pruning `subdirs` in place keeps it out of caches.
        for directory, subdirs, files in os.walk(start):
            subdirs[:] = sorted(d for d in subdirs if not _skipped(d))
            found.update(
                (Path(directory) / name).relative_to(root) for name in files if not name.endswith(".pyc")
            )
    return sorted(found)


def tree_digest(root: Path, include: Sequence[str] = ()) -> str:
    """sha256 over each file's relative path and bytes: the same content anywhere gives the same digest."""
    digest = hashlib.sha256()
    for relative in tree_files(root, include):
        digest.update(relative.as_posix().encode() + b"\0")
        digest.update(hashlib.sha256((root / relative).read_bytes()).digest())
    return digest.hexdigest()


def copy_tree(root: Path, destination: Path, include: Sequence[str] = ()) -> None:
    for relative in tree_files(root, include):
        target = destination / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / relative, target)


def normalize_requirements(lines: Sequence[str]) -> tuple[str, ...]:
    """Requirement lines without comments, blanks or repeats, sorted so order does not change the key."""
    kept = {line.split(" #", 1)[0].strip() for line in lines if not line.strip().startswith("#")}
    return tuple(sorted(line for line in kept if line))


def read_requirements(path: Path) -> tuple[str, ...]:
    fix = "create it, one requirement a line (it may be empty)"
    with os_error_as(WheelhouseError, f"cannot read the requirements file {path}", path, hint=fix):
        text = path.read_text(encoding="utf-8")
    return normalize_requirements(text.splitlines())


def wheelhouse_key(
    requirements: Sequence[str], projects: Sequence[LocalProject], target: TargetPython
) -> str:
    """sha256 over the normalized requirements, each local project's content and the target Python."""
    payload = {
        "schema": KEY_SCHEMA,
        "requirements": list(normalize_requirements(requirements)),
        "projects": sorted(project.digest() for project in projects),
        "python": asdict(target),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def build_wheelhouse(
    requirements: Sequence[str],
    *,
    target: TargetPython,
    projects: Sequence[LocalProject] = (),
    cache_dir: Path | None = None,
    python: str | None = None,
) -> Wheelhouse:
    """The cached wheelhouse for these inputs, building it first when it is not in `cache_dir`.

    `python` runs pip on the host (default: this interpreter). Raises WheelhouseError with pip's output.
    """
    requirements = normalize_requirements(requirements)
    cache = cache_dir or default_cache_dir()
    key = wheelhouse_key(requirements, projects, target)
    final = cache / key
    if (final / MARKER).is_file():
        return Wheelhouse(path=final, key=key, python=target, reused=True, requirements=requirements)
    cache.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f".tmp-{key[:12]}-", dir=cache) as tmp:
        staging = Path(tmp) / "wheels"
        staging.mkdir()
        builder = _PipBuilder(python or sys.executable, staging, Path(tmp), target)
        for project in projects:
            builder.local_project(project)
        builder.requirements(requirements)
        _write_marker(staging, key, requirements, projects, target)
        publish(staging, final)
    log.info("built wheelhouse %s in %.1f s", key[:12], time.monotonic() - started)
    return Wheelhouse(path=final, key=key, python=target, reused=False, requirements=requirements)


def _write_marker(
    staging: Path,
    key: str,
    requirements: Sequence[str],
    projects: Sequence[LocalProject],
    target: TargetPython,
) -> None:
    marker = {
        "key": key,
        "requirements": list(requirements),
        "projects": [{"path": str(p.path), "digest": p.digest()} for p in projects],
        "python": asdict(target),
        "wheels": sorted(p.name for p in staging.glob("*.whl")),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    (staging / REQUIREMENTS_FILE).write_text("".join(f"{line}\n" for line in requirements), encoding="utf-8")
    (staging / MARKER).write_text(json.dumps(marker, indent=2), encoding="utf-8")


def publish(staging: Path, final: Path, marker: str = MARKER) -> None:
    """Move a finished cache entry into place; `marker` is the file a complete entry holds."""
    # A rename is atomic: a concurrent builder of the same key either wins or finds ours complete.
    try:
        staging.rename(final)
    except OSError:
        if not (final / marker).is_file():
            shutil.rmtree(final, ignore_errors=True)
            staging.rename(final)


class _PipBuilder:
    """Runs pip on the host into one staging directory."""

    def __init__(self, python: str, wheels: Path, scratch: Path, target: TargetPython) -> None:
        self.python = python
        self.wheels = wheels
        self.scratch = scratch
        self.target = target
        self.same_minor = target.version == f"{sys.version_info.major}.{sys.version_info.minor}"

    def local_project(self, project: LocalProject) -> None:
        # Build from a copy of exactly the hashed files: the wheel then matches its key, and the source
        # tree gets no build/ or egg-info litter.
        source = Path(tempfile.mkdtemp(prefix="project-", dir=self.scratch))
        copy_tree(project.path, source, project.include)
        self._pip("wheel", "--no-deps", "--wheel-dir", str(self.wheels), str(source))

    def requirements(self, requirements: Sequence[str]) -> None:
        if not requirements:
            return
        listing = self.scratch / "requirements.txt"
        listing.write_text("\n".join(requirements) + "\n", encoding="utf-8")
        if self.same_minor:
            self._pip(
                "wheel", "--wheel-dir", str(self.wheels), "--find-links", str(self.wheels), "-r", str(listing)
            )
        else:
            self._download_binaries(listing)

    def _download_binaries(self, listing: Path) -> None:
        for _ in range(MAX_SDIST_ROUNDS):
            result = self._pip(*download_args(self.target, self.wheels, listing), check=False)
            if result.returncode == 0:
                return
            missing = missing_binary(result.stdout + result.stderr)
            if missing is None:
                raise self._failure("pip download", result)
            self._wheel_from_sdist(missing)
        raise WheelhouseError(
            f"more than {MAX_SDIST_ROUNDS} requirements for Python {self.target.version} are sdists only",
            hint="build those wheels yourself and add them to the requirements as paths",
        )

    def _wheel_from_sdist(self, requirement: str) -> None:
        before = set(self.wheels.glob("*.whl"))
        self._pip("wheel", "--no-deps", "--wheel-dir", str(self.wheels), requirement)
        for wheel in set(self.wheels.glob("*.whl")) - before:
            if not wheel.name.endswith("-none-any.whl"):
                wheel.unlink()
                raise WheelhouseError(
                    f"{requirement} has no wheel for Python {self.target.version} on "
                    f"{self.target.platform_tags()[0]}, and its sdist builds a platform wheel ({wheel.name})",
                    hint="use a base image whose Python minor matches the host's, or pin a version "
                    "that publishes wheels for that Python",
                )

    def _pip(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = [self.python, "-m", "pip", *args, "--disable-pip-version-check", "--progress-bar", "off"]
        log.info("%s", " ".join(command))
        try:
            result = subprocess.run(
                command, capture_output=True, text=True, timeout=PIP_TIMEOUT_S, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise WheelhouseError(
                f"`{' '.join(command[:4])}` could not run: {exc}",
                hint="make sure the host Python has pip (`python -m ensurepip`) and PyPI is reachable",
            ) from exc
        if check and result.returncode != 0:
            raise self._failure(" ".join(command[2:4]), result)
        return result

    def _failure(self, what: str, result: subprocess.CompletedProcess[str]) -> WheelhouseError:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-20:])
        return WheelhouseError(
            f"{what} for Python {self.target.version} failed with exit {result.returncode}:\n{tail}",
            hint="check the requirement names and that PyPI (or your index) is reachable from the host",
        )


def download_args(target: TargetPython, wheels: Path, listing: Path) -> list[str]:
    """`pip download` arguments fetching wheels for the image's Python rather than the host's."""
    args = [
        "download",
        "--dest",
        str(wheels),
        "--find-links",
        str(wheels),
        "--only-binary=:all:",
        "--implementation",
        "cp",
        "--python-version",
        target.version,
    ]
    for tag in target.platform_tags():
        args += ["--platform", tag]
    return [*args, "-r", str(listing)]


_MISSING = re.compile(r"No matching distribution found for ([^\s]+)")


def missing_binary(pip_output: str) -> str | None:
    """The requirement pip found no wheel for, from `pip download --only-binary` output, if that was why."""
    found = _MISSING.search(pip_output)
    return found.group(1) if found else None


def project_dependencies(project: Path) -> tuple[str, ...]:
    """`[project].dependencies` of a PEP 621 project: what its wheel needs beside it in a wheelhouse."""
    import tomllib

    pyproject = project / "pyproject.toml"
    try:
        table = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise WheelhouseError(
            f"cannot read {pyproject}: {exc}", hint="point at a project root with a valid pyproject.toml"
        ) from exc
    dependencies = table.get("project", {}).get("dependencies", [])
    if not isinstance(dependencies, list) or not all(isinstance(d, str) for d in dependencies):
        raise WheelhouseError(
            f"{pyproject}: [project].dependencies is {dependencies!r}; expected a list of strings",
            hint='write dependencies = ["name>=1.0", ...]',
        )
    return normalize_requirements(dependencies)
