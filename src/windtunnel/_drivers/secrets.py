"""Secret files into a container before it starts: a tar archive put with the engine's API (`put_archive`).

Not a host bind mount, so it works on any engine (a remote one, Docker-in-Docker, Dagger's), and not the
container's environment or command line, which `docker inspect` shows to anyone who can reach the engine.
Each file is read-only for its owner (0400) in a directory only its owner may enter (0700); the owner is
the container's user, root for Wind Tunnel's image (it sets no USER).
"""

from __future__ import annotations

import io
import tarfile
import time
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

FILE_MODE = 0o400
DIRECTORY_MODE = 0o700


def secrets_archive(files: Mapping[str, str], *, uid: int = 0, gid: int = 0) -> bytes:
    """A tar of `files` (absolute container path -> text) with their directories, owned by uid:gid."""
    buffer = io.BytesIO()
    now = time.time()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        directories = sorted({str(parent) for path in files for parent in _parents(path)})
        for directory in directories:
            info = tarfile.TarInfo(directory)
            info.type, info.mode, info.uid, info.gid, info.mtime = (
                tarfile.DIRTYPE,
                DIRECTORY_MODE,
                uid,
                gid,
                now,
            )
            archive.addfile(info)
        for path, text in sorted(files.items()):
            data = text.encode("utf-8")
            info = tarfile.TarInfo(str(PurePosixPath(path).relative_to("/")))
            info.size, info.mode, info.uid, info.gid, info.mtime = len(data), FILE_MODE, uid, gid, now
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def put_secrets(container: Any, files: Mapping[str, str]) -> None:
    """Put `files` into the created (not yet started) `container`; nothing for no files."""
    if not files:
        return
    from windtunnel.errors import HarnessError

    if not container.put_archive("/", secrets_archive(files)):
        raise HarnessError(
            f"the engine refused to put {len(files)} secret file(s) into container {container.name}",
            hint="check the engine (`docker info`); the container's image must have a writable file system",
        )


def _parents(path: str) -> list[PurePosixPath]:
    """The directories a secret's own directory adds below the existing /run (or /): e.g. run/secrets."""
    relative = PurePosixPath(path).relative_to("/")
    parents = [parent for parent in relative.parents if str(parent) != "."]
    return [parent for parent in parents if str(parent) not in _EXISTING]


_EXISTING = {"run", "tmp", "etc", "var"}
"""Directories every image has: their owner and mode stay as the image made them."""
