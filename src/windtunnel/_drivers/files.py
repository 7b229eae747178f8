"""Files into and out of containers through the engine's API (`put_archive`, `get_archive`), never a bind mount.

A host path means nothing to a remote engine, Docker Desktop's VM or a docker:dind service: a bind mount
would name a directory on the engine's machine, not ours. Copying through the API works on every engine:
a container is created, its files put in, then started; what it writes is copied out before it is removed.
"""

from __future__ import annotations

import io
import tarfile
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from docker.errors import DockerException

from windtunnel.errors import HarnessError

SKIPPED = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"}
"""Caches Python writes beside sources: never part of what a container needs."""


def archive_of(files: Mapping[str, Path]) -> bytes:
    """A tar of host files or directories (container path -> host path), owned by root, paths below /."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for inside, source in sorted(files.items()):
            archive.add(source, arcname=_relative(inside), filter=_owned_by_root)
    return buffer.getvalue()


def empty_directories(paths: list[str]) -> bytes:
    """A tar of empty directories (world-writable: whatever user the image runs as writes into them)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for path in sorted(paths):
            info = tarfile.TarInfo(_relative(path))
            info.type, info.mode = tarfile.DIRTYPE, 0o777
            archive.addfile(info)
    return buffer.getvalue()


def put(container: Any, archive: bytes, what: str) -> None:
    """Put a tar (paths relative to /) into a created, not yet started container."""
    try:
        accepted = container.put_archive("/", archive)
    except DockerException as exc:
        raise _refused(container, what, exc) from exc
    if not accepted:
        raise _refused(container, what, "the engine said no")


def copy_out(container: Any, inside: str, destination: Path) -> list[Path]:
    """Copy the directory `inside` of a container (running or stopped) into the host directory
    `destination`, file by file; return the files written. Only regular files and directories come out."""
    try:
        stream, _ = container.get_archive(inside)
        data = b"".join(stream)
    except DockerException as exc:
        raise HarnessError(
            f"could not copy {inside} out of container {container.name}: {exc}",
            hint="check the engine (`docker info`); the container must still exist",
        ) from exc
    destination.mkdir(parents=True, exist_ok=True)
    written = []
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        for member in archive.getmembers():
            parts = PurePosixPath(member.name).parts[1:]  # the archive's top entry is `inside` itself
            if not parts or ".." in parts or not (member.isfile() or member.isdir()):
                continue
            target = destination.joinpath(*parts)
            if member.isdir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            source = archive.extractfile(member)
            if source is not None:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(source.read())
                written.append(target)
    return written


def _relative(path: str) -> str:
    return str(PurePosixPath(path).relative_to("/"))


def _owned_by_root(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
    if any(part in SKIPPED for part in PurePosixPath(info.name).parts) or info.name.endswith(".pyc"):
        return None
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info


def _refused(container: Any, what: str, reason: object) -> HarnessError:
    return HarnessError(
        f"the engine did not take {what} into container {container.name}: {reason}",
        hint="check the engine (`docker info`) and that the image has a writable file system",
    )
