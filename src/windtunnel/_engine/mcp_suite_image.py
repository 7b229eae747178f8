"""The image of the official MCP conformance suite with Node 22, built once per content hash with no network.

The host installs the pinned suite and `node@22` (the npm package carrying a Node binary) with `npm install`
into a cache directory keyed by the pins, and packs that tree into one reproducible tarball (sorted entries,
zero times and owners): the build context's `npm/suite.tgz`, which containers/mcp-suite/Dockerfile unpacks.
A container never reaches a registry; the tarball's bytes are part of the image's content hash.
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import subprocess
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import docker

from windtunnel import __version__
from windtunnel._config import bundled_root
from windtunnel._engine.images import IMAGE_KIND_LABEL, BuiltImage, ImageBuildError, build_image
from windtunnel._engine.npm_packs import CONTEXT_DIR as NPM_CONTEXT_DIR
from windtunnel._engine.npm_packs import NpmPackError, default_cache_dir, packs_key
from windtunnel._engine.wheelhouse import publish

log = logging.getLogger(__name__)

SUITE_PACKAGE = "@modelcontextprotocol/conformance"
SUITE_VERSION = "0.1.16"  # the newest release; 0.2.0 alphas add scenarios of an unreleased spec version
NODE_MAJOR = 22
PINS = (f"node@{NODE_MAJOR}", f"{SUITE_PACKAGE}@{SUITE_VERSION}")
TAG = f"windtunnel/mcp-suite:{SUITE_VERSION}"
TARBALL = "suite.tgz"
MARKER = "mcp-suite.json"
NPM_TIMEOUT_S = 900.0
CONTEXT = Path("containers") / "mcp-suite"


@dataclass(frozen=True, slots=True, kw_only=True)
class SuiteTarball:
    """The packed suite: the directory holding suite.tgz (a build context's `npm/`) and its cache key."""

    path: Path
    key: str


def build_suite_image(
    client: docker.DockerClient,
    *,
    base_image: str,
    cache_dir: Path | None = None,
    lock_dir: Path | None = None,
) -> BuiltImage:
    """The suite's image on `base_image`; the existing one when its content hash is already built."""
    root = bundled_root()
    if root is None:
        raise ImageBuildError(
            "the MCP conformance suite's image is built from a source checkout's containers/mcp-suite",
            hint="install windtunnel from a clone (`pip install -e .`) to run the suite's client scenarios",
        )
    packed = suite_tarball(cache_dir=cache_dir)
    return build_image(
        client,
        context_dir=root / CONTEXT,
        dockerfile=root / CONTEXT / "Dockerfile",
        tag=TAG,
        base_image=base_image,
        wheelhouse_dir=None,
        extra_wheels={NPM_CONTEXT_DIR: packed.path},
        labels={
            IMAGE_KIND_LABEL: "mcp-suite",
            "windtunnel.version": __version__,
            "windtunnel.npm": packed.key,
        },
        lock_dir=lock_dir,
    )


def suite_tarball(*, cache_dir: Path | None = None, npm: str = "npm") -> SuiteTarball:
    """The cached tarball of the installed suite, installed and packed first when it is not in the cache."""
    cache = (cache_dir or default_cache_dir()) / "mcp-suite"
    key = packs_key(PINS)
    final = cache / key
    if (final / MARKER).is_file():
        return SuiteTarball(path=final, key=key)
    cache.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f".tmp-{key[:12]}-", dir=cache) as tmp:
        installed = Path(tmp) / "installed"
        _npm_install(npm, installed)
        staging = Path(tmp) / "packed"
        staging.mkdir()
        pack_tree(installed, staging / TARBALL)
        marker = {
            "key": key,
            "pins": list(PINS),
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        (staging / MARKER).write_text(json.dumps(marker, indent=2), encoding="utf-8")
        publish(staging, final, MARKER)
    log.info("installed and packed the MCP conformance suite in %.1f s", time.monotonic() - started)
    return SuiteTarball(path=final, key=key)


def npm_install_command(npm: str, directory: Path) -> list[str]:
    """`npm install` of the pinned Node and suite into `directory` (also the mcp_conformance session's)."""
    return [npm, "install", "--prefix", str(directory), "--no-audit", "--no-fund", "--loglevel=error", *PINS]


def _npm_install(npm: str, directory: Path) -> None:
    directory.mkdir(parents=True)
    command = npm_install_command(npm, directory)
    log.info("%s", " ".join(command))
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=NPM_TIMEOUT_S, check=False, env=os.environ
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise NpmPackError(
            f"`npm install {' '.join(PINS)}` could not run: {exc}",
            hint="install Node.js with npm on the host; the suite's image itself never reaches the registry",
        ) from exc
    node = directory / "node_modules" / "node" / "bin" / "node"
    if done.returncode != 0 or not node.is_file():
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-20:])
        raise NpmPackError(
            f"`npm install {' '.join(PINS)}` failed (exit {done.returncode}"
            f"{'' if node.is_file() else ', no node/bin/node'}):\n{tail}",
            hint="check that the npm registry is reachable from the host and that npm runs install scripts "
            "(the `node` package fetches its binary in one)",
        )


def pack_tree(directory: Path, tarball: Path) -> None:
    """`directory`'s node_modules as a gzipped tar whose bytes depend on the files alone (not on when or by
    whom they were installed), so the image's content hash is the same for the same install."""

    def normalised(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
        info.mode = 0o755 if info.isdir() or info.mode & 0o100 else 0o644
        return info

    with (
        tarball.open("wb") as raw,
        gzip.GzipFile(filename="", fileobj=raw, mode="wb", compresslevel=1, mtime=0) as zipped,
        tarfile.open(fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        for path in sorted_tree(directory / "node_modules"):
            tar.add(path, arcname=path.relative_to(directory).as_posix(), recursive=False, filter=normalised)


def sorted_tree(root: Path) -> list[Path]:
    """`root` and everything under it (symbolic links as links), in a fixed order."""
    found = [root]
    for directory, subdirs, files in os.walk(root):
        subdirs.sort()
        found += [Path(directory) / name for name in sorted([*subdirs, *files])]
    return sorted(found)
