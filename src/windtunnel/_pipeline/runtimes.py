"""What a certify run means by a runtime: a configured build directory or image, or a registered name.

`[tool.windtunnel] runtimes` entries with `build=` or `image=` become a RuntimeManifest (the container
driver's own description of a runtime) and run through the container driver's plugin; plain names
resolve as in every verb (entry points, `runtimes/**/runtime.toml`, `module:attr`). No second driver.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from windtunnel._config import RuntimeEntry, Settings
from windtunnel._drivers.plugin import ContainerRuntimePlugin, python_plugin
from windtunnel._pipeline.config import REFERENCE, CertifyConfig
from windtunnel._runtimes.manifest import RuntimeManifest, load_manifest
from windtunnel._runtimes.registry import LoadedPlugin
from windtunnel.errors import ConfigFileError, HarnessError, WindTunnelError


def bundled_root() -> Path | None:
    """The windtunnel checkout this package runs from (its runtimes/, scenarios/, conformance/), if any."""
    from windtunnel._drivers.images import windtunnel_source_root

    try:
        return windtunnel_source_root()
    except WindTunnelError:
        return None  # an installed wheel: no bundled runtimes, packs or suite


def entry_manifest(entry: RuntimeEntry, settings: Settings) -> RuntimeManifest | None:
    """The manifest of a configured `build=` directory or `image=` reference; None for a plain name.

    The entry's name is the runtime's name (checks, bundle, image digests), whatever its runtime.toml says.
    """
    if entry.build is None and entry.image is None:
        return None
    assert settings.source is not None  # entries come from a config file
    if entry.name == REFERENCE:
        raise ConfigFileError(
            f"{settings.source}: runtimes entry {REFERENCE!r} has build=/image=, but {REFERENCE!r} is "
            "Wind Tunnel's own known-good control and always the bundled one",
            hint="give your runtime another name",
            path=str(settings.source),
            field="runtimes",
        )
    if entry.build is not None:
        manifest = load_manifest(settings.root / entry.build)
        return dataclasses.replace(manifest, name=entry.name)
    assert entry.image is not None
    if entry.manifest is not None:
        described = load_manifest(settings.root / entry.manifest)
    else:  # plain Contract C: standard env names, no optional ability claimed
        described = RuntimeManifest(name=entry.name, path=settings.source)
    return dataclasses.replace(described, name=entry.name, image_ref=entry.image, build_dir=None, plugin=None)


class ConfiguredRuntimePlugin(ContainerRuntimePlugin):
    """The container driver's plugin, for a manifest made from a config entry rather than found by name."""

    def __init__(self, manifest: RuntimeManifest) -> None:
        super().__init__(manifest.path)
        self._configured = manifest

    def manifest(self) -> RuntimeManifest:
        return self._configured


def configured_plugin(name: str, manifest: RuntimeManifest) -> LoadedPlugin:
    """The plugin for a configured manifest (a `[driver] plugin` in a build directory wins)."""
    plugin: Any = python_plugin(manifest) if manifest.plugin else ConfiguredRuntimePlugin(manifest)
    where = f"image {manifest.image_ref}" if manifest.image_ref else f"build directory {manifest.directory}"
    return LoadedPlugin(
        name=name, source=f"[tool.windtunnel] runtimes entry {name!r} ({where})", plugin=plugin
    )


def ensure_image(client: Any, name: str, ref: str) -> None:
    """The configured image is in the engine: present, or pulled now; else say how to load it."""
    from docker.errors import DockerException, ImageNotFound

    try:
        client.images.get(ref)
        return
    except ImageNotFound:
        pass
    except DockerException as exc:
        raise HarnessError(f"the Docker engine could not look up image {ref}: {exc}") from exc
    try:
        client.images.pull(ref)
    except DockerException as exc:
        reason = str(exc).splitlines()[0][:300]
        raise ConfigFileError(
            f"runtime {name!r}: image {ref} is not in the Docker engine, and pulling it failed: {reason}",
            hint=f"load it first: `docker load -i IMAGE.tar`, `docker pull {ref}` where its registry is "
            f"reachable, or `docker tag LOCAL_IMAGE {ref}`; or configure build = 'path/to/runtime-dir'",
            runtime=name,
            field="runtimes",
        ) from exc


def ensure_configured_images(config: CertifyConfig) -> None:
    """Before any stage: every configured image of this run is in the engine (a usage error if not)."""
    wanted = {
        name: manifest.image_ref
        for name, manifest in config.configured.items()
        if manifest.image_ref is not None and name in config.all_runtimes
    }
    if not wanted:
        return
    from windtunnel._drivers.docker_env import docker_client

    client = docker_client()
    for name, ref in wanted.items():
        ensure_image(client, name, ref)
