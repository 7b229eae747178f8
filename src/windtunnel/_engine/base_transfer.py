"""An image built from Debian packages into an engine that lacks it: `docker load` of a saved tar, never a
second build.

A fresh engine (docker:dind, a remote one) has neither the base image nor the egress fence's netguard
image (windtunnel._engine.fence), and building them needs a Debian mirror and minutes. The tar saved
under the cache directory (`base-images/`) is loaded when it is there; else the image is saved from the
local engine (the host's own socket) when that one has it; a bootstrap or a netguard build saves its tar
too, so no engine ever builds the same image twice.
"""

from __future__ import annotations

import logging
import os
import re
import time
from pathlib import Path
from typing import Any

import docker
from docker.errors import DockerException, ImageNotFound

from windtunnel._engine.docker_env import DEFAULT_SOCKET

log = logging.getLogger(__name__)

SAVED_DIR = "base-images"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def default_cache_dir() -> Path:
    return Path.home() / ".cache" / "windtunnel"


def saved_tar(tag: str, cache_dir: Path | None) -> Path:
    return (cache_dir or default_cache_dir()) / SAVED_DIR / f"{_UNSAFE.sub('_', tag)}.tar"


def transfer(client: Any, tag: str, cache_dir: Path | None) -> bool:
    """Load `tag` into the engine from its saved tar, saving it first from the local engine if needed.
    False when neither has it."""
    tar = saved_tar(tag, cache_dir)
    if not tar.is_file() and not save_from_local(client, tag, tar):
        return False
    started = time.monotonic()
    try:
        with tar.open("rb") as data:
            client.api.load_image(data)
        client.images.get(tag)
    except (DockerException, OSError) as exc:
        log.warning("loading %s from %s failed: %s", tag, tar, exc)
        return False
    log.info("loaded %s from %s in %.0f s", tag, tar, time.monotonic() - started)
    return True


def save_from_local(client: Any, tag: str, tar: Path) -> bool:
    """Save `tag` from the engine on this machine's own socket (when it is another engine than `client`)."""
    if not Path(DEFAULT_SOCKET.removeprefix("unix://")).exists():
        return False
    local = docker.DockerClient(base_url=DEFAULT_SOCKET, timeout=600)
    try:
        if local.info().get("ID") == client.info().get("ID"):
            return False  # the same engine: it lacks the image too
        return save(local, tag, tar)
    except DockerException as exc:
        log.info("the local engine cannot give %s: %s", tag, exc)
        return False
    finally:
        local.close()


def save(client: Any, tag: str, tar: Path) -> bool:
    """`docker save` of `tag` into `tar`, atomically (a half-written tar is never loaded)."""
    try:
        image = client.images.get(tag)
    except ImageNotFound:
        return False
    tar.parent.mkdir(parents=True, exist_ok=True)
    staging = tar.with_name(f".{tar.name}.{os.getpid()}")
    try:
        with staging.open("wb") as out:
            for chunk in image.save(named=True):
                out.write(chunk)
        staging.replace(tar)
    finally:
        staging.unlink(missing_ok=True)
    log.info("saved %s to %s", tag, tar)
    return True
