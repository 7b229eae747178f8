"""npm package tarballs fetched on the host (`npm pack`) for offline image builds, cached by their specs.

The npm counterpart of the wheelhouse: a runtime.toml's `[image] npm` lists exact `name@version` specs, each
is packed once on the host into a cache directory keyed by the specs, and the build context gets them as
`npm/*.tgz`; the image unpacks them with no network (containers/python-runtime.Dockerfile).
"""

from __future__ import annotations

import hashlib
import json
import logging
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from windtunnel._engine.wheelhouse import publish
from windtunnel.errors import HarnessError

log = logging.getLogger(__name__)

KEY_SCHEMA = "1"
MARKER = "npm-packs.json"
NPM_TIMEOUT_S = 900.0
CONTEXT_DIR = "npm"
"""The build-context directory holding the tarballs."""


class NpmPackError(HarnessError):
    """The npm tarballs of an image could not be fetched."""


@dataclass(frozen=True, slots=True, kw_only=True)
class NpmPacks:
    path: Path
    key: str
    reused: bool

    def tarballs(self) -> list[Path]:
        return sorted(self.path.glob("*.tgz"))


def default_cache_dir() -> Path:
    return Path.home() / ".cache" / "windtunnel" / "npm"


def packs_key(specs: Sequence[str]) -> str:
    payload = {"schema": KEY_SCHEMA, "specs": sorted(set(specs))}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def fetch_npm_packs(specs: Sequence[str], *, cache_dir: Path | None = None, npm: str = "npm") -> NpmPacks:
    """The cached tarballs of `specs` (exact pins, checked by the manifest), packed first when they are not
    in `cache_dir`.

    Raises NpmPackError naming the spec and npm's last lines when a pack fails or npm is missing.
    """
    cache = cache_dir or default_cache_dir()
    key = packs_key(specs)
    final = cache / key
    if (final / MARKER).is_file():
        return NpmPacks(path=final, key=key, reused=True)
    cache.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f".tmp-{key[:12]}-", dir=cache) as tmp:
        staging = Path(tmp) / "packs"
        staging.mkdir()
        for spec in sorted(set(specs)):
            _pack(npm, spec, staging)
        marker = {
            "key": key,
            "specs": sorted(set(specs)),
            "tarballs": [p.name for p in sorted(staging.glob("*.tgz"))],
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        (staging / MARKER).write_text(json.dumps(marker, indent=2), encoding="utf-8")
        publish(staging, final, MARKER)
    log.info("packed npm packages %s in %.1f s", key[:12], time.monotonic() - started)
    return NpmPacks(path=final, key=key, reused=False)


def _pack(npm: str, spec: str, destination: Path) -> None:
    command = [npm, "pack", spec, "--pack-destination", str(destination), "--silent"]
    log.info("%s", " ".join(command))
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=NPM_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise NpmPackError(
            f"`npm pack {spec}` could not run: {exc}",
            hint="install Node.js with npm on the host; the image itself never reaches the registry",
        ) from exc
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-20:])
        raise NpmPackError(
            f"`npm pack {spec}` failed with exit {result.returncode}:\n{tail}",
            hint="check the package name and version (npm view NAME versions) and that the npm registry "
            "is reachable from the host",
        )
