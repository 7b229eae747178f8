"""Files into and out of containers through the engine's API (`put_archive`, `get_archive`), never a bind mount.

A host path means nothing to a remote engine, Docker Desktop's VM or a docker:dind service: a bind mount
would name a directory on the engine's machine, not ours. Copying through the API works on every engine:
a container is created, its files put in, then started; what it writes is copied out before it is removed.
A secret (the upstream key) goes in the same way, never as the container's environment or command line,
which `docker inspect` shows to anyone who can reach the engine: read-only for its owner (0400) in a
directory only its owner may enter (0700); the owner is the container's user, root for Wind Tunnel's image.
"""

from __future__ import annotations

import io
import tarfile
import time
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from docker.errors import DockerException

from windtunnel.errors import HarnessError

SECRET_MODE = 0o400
SECRET_DIRECTORY_MODE = 0o700
_EXISTING = {"run", "tmp", "etc", "var"}
"""Directories every image has: their owner and mode stay as the image made them."""
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


def secret_files(files: Mapping[str, str | bytes], *, uid: int = 0, gid: int = 0) -> bytes:
    """A tar of secrets (absolute container path -> content), 0400 in 0700 directories owned by uid:gid."""
    buffer = io.BytesIO()
    now = time.time()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for directory in sorted({str(parent) for path in files for parent in _new_parents(path)}):
            info = tarfile.TarInfo(directory)
            info.type, info.mode, info.uid, info.gid, info.mtime = (
                tarfile.DIRTYPE,
                SECRET_DIRECTORY_MODE,
                uid,
                gid,
                now,
            )
            archive.addfile(info)
        for path, text in sorted(files.items()):
            data = text.encode("utf-8") if isinstance(text, str) else text
            info = tarfile.TarInfo(_relative(path))
            info.size, info.mode, info.uid, info.gid, info.mtime = len(data), SECRET_MODE, uid, gid, now
            archive.addfile(info, io.BytesIO(data))
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


def _new_parents(path: str) -> list[PurePosixPath]:
    """The directories a secret's own directory adds below the existing /run (or /): e.g. run/secrets."""
    parents = [parent for parent in PurePosixPath(_relative(path)).parents if str(parent) != "."]
    return [parent for parent in parents if str(parent) not in _EXISTING]


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
