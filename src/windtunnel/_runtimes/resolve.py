"""The one runtime resolver: what a user names becomes one immutable RuntimeDescription.

`resolve_runtime(ref, settings)` tries, in this order:

1. a `[tool.windtunnel] runtimes` entry named `ref` with `build=` or `image=` (and `manifest=`);
2. an existing path: a runtime directory or its runtime.toml;
3. a `module:attr` path to a plugin object;
4. an image reference with a tag or digest (`registry/agent:1.2`, `agent@sha256:...`): plain Contract C;
5. a name registered under the `windtunnel.runtimes` entry-point group;
6. the name of a `runtimes/**/runtime.toml` under the project root, the working directory or the Wind
   Tunnel checkout.

A runtime.toml becomes a plugin through its driver kind, registered under the `windtunnel.drivers`
entry-point group: `[driver] kind` names it, else it is inferred (`python` for `[driver] plugin =
"module:attr"`, else `container`), so this module never imports a driver nor branches on a kind. However it was found, a runtime keeps everything its manifest declares, and its
`source` names it without an absolute path: a name, an image reference, or a path relative to the
project root (a directory outside the project shows as the runtime's name).

Every runtime found is also held to the project's model ladder (`[tool.windtunnel.ladder]`,
windtunnel._core.ladder) here, so no verb builds or runs a runtime whose model the ladder does not allow.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from windtunnel._config import RuntimeEntry, Settings, bundled_root
from windtunnel._configfile import shown
from windtunnel._core.ladder import check_model
from windtunnel._runtimes.manifest import MANIFEST, RuntimeManifest, lenient_name, load_manifest
from windtunnel._runtimes.plugin import LockKeyPlugin, ModelLabelPlugin
from windtunnel._runtimes.registry import (
    available_runtimes,
    checked,
    load_attr,
    load_driver,
    load_entry,
    runtime_entry_point,
)
from windtunnel.errors import ConfigFileError, PluginError, UnknownRuntimeError, UsageError

REFERENCE = "reference"
"""Wind Tunnel's own known-good control runtime (runtimes/reference), certified in every run."""
SEARCH_DEPTH = 4

_ATTR = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_IMAGE = re.compile(
    rf"(?:[A-Za-z0-9.-]+(?::[0-9]+)?/)?{_COMPONENT}(?:/{_COMPONENT})*"
    r"(?::[\w][\w.-]{0,127})?(?:@sha256:[0-9a-f]{64})?"
)


class Found(StrEnum):
    """How a runtime was found."""

    CONFIG = "config entry"
    DIRECTORY = "directory"
    ATTR = "module:attr"
    IMAGE = "image"
    ENTRY_POINT = "entry point"
    MANIFEST = "runtime.toml"


@dataclass(frozen=True, slots=True, kw_only=True)
class RuntimeDescription:
    """One runtime, however it was named. `source` is what artefacts show (never an absolute path);
    `origin` says where the plugin came from, for messages and evidence (never an absolute path either);
    `driver` is the driver kind that made the plugin from the manifest, None for a plugin given directly."""

    name: str
    found: Found
    source: str
    origin: str
    plugin: Any
    manifest: RuntimeManifest | None = None
    driver: str | None = None
    max_concurrency: int | None = 1
    manifest_shown: str | None = None
    """Its runtime.toml as messages show it (relative to the project, never an absolute path)."""

    @property
    def identity(self) -> tuple[str, ...]:
        """What makes two descriptions the same runtime: its manifest file and image, else its origin."""
        if self.manifest is None:
            return (self.origin,)
        return (str(self.manifest.path), self.manifest.image_ref or "", self.driver or "")

    def lock_key(self) -> str:
        """The machine-wide lock's key: the plugin's lock_key() or the runtime's name."""
        if isinstance(self.plugin, LockKeyPlugin):
            return str(self._ask("lock_key", self.plugin.lock_key))
        return self.name

    def model_label(self) -> str | None:
        if isinstance(self.plugin, ModelLabelPlugin):
            label = self._ask("model_label", self.plugin.model_label)
            return None if label is None else str(label)
        return None

    def _ask(self, hook: str, call: Any) -> Any:
        try:
            return call(self.name)
        except Exception as exc:
            raise PluginError(
                f"runtime plugin {self.name!r}: {hook}() raised {type(exc).__name__}: {exc}\n"
                f"  loaded from: {self.origin}",
                hint=f"fix the plugin's {hook}(runtime_name); it must answer without side effects",
                plugin=self.name,
                entry_point=self.origin,
            ) from exc


def resolve_runtime(ref: str, settings: Settings) -> RuntimeDescription:
    """The runtime `ref` names (see the module docstring for the order); a one-line error if none, or if
    the project's model ladder does not allow the model it answers with."""
    description = _resolve(ref, settings)
    check_model(settings.ladder, description.name, description.model_label())
    return description


def _resolve(ref: str, settings: Settings) -> RuntimeDescription:
    if not ref.strip():  # an empty path would be the working directory
        raise UsageError(
            "the runtime is named by an empty string",
            hint="pass a runtime name (e.g. reference), a runtime directory, module:attr or an image reference",
            field="runtime",
        )
    entry = next((e for e in settings.runtimes if e.name == ref and (e.build or e.image)), None)
    if entry is not None:
        return _configured(entry, settings)
    path = Path(ref).expanduser()
    if path.exists():
        return from_manifest(load_manifest(path), Found.DIRECTORY, settings)
    if _ATTR.fullmatch(ref):
        return _described(ref, Found.ATTR, ref, f"module:attr {ref}", load_attr(ref))
    if is_image_ref(ref):
        return from_manifest(image_manifest(image_name(ref), ref, settings), Found.IMAGE, settings)
    if "/" in ref or os.sep in ref or ref.endswith(".toml"):
        raise ConfigFileError(
            f"runtime {ref!r}: there is no runtime directory or {MANIFEST} at {path.resolve()}",
            hint="pass an existing runtime directory (with a runtime.toml), a runtime name, or an image "
            "reference with its tag or digest (registry/agent:1.2)",
            path=str(path),
            field="runtime",
        )
    entry_point = runtime_entry_point(ref)
    if entry_point is not None:
        origin = f"entry point {entry_point.name} = {entry_point.value}"
        return _described(ref, Found.ENTRY_POINT, ref, origin, load_entry(entry_point))
    directory = find_runtime_dir(ref, search_roots(settings))
    if directory is not None:
        return from_manifest(load_manifest(directory), Found.MANIFEST, settings)
    raise _unknown(ref, settings)


def resolve_runtimes(refs: Iterable[str], settings: Settings) -> tuple[RuntimeDescription, ...]:
    """Every runtime `refs` name, each once, in order. Two different runtimes with one name are a usage
    error: checks, traces and the bundle tell runtimes apart by name."""
    chosen: dict[str, RuntimeDescription] = {}
    for ref in refs:
        description = resolve_runtime(ref, settings)
        earlier = chosen.setdefault(description.name, description)
        if earlier.identity != description.identity:
            raise _clash(earlier, description)
    return tuple(chosen.values())


def from_manifest(manifest: RuntimeManifest, found: Found, settings: Settings) -> RuntimeDescription:
    """A runtime.toml's runtime: the plugin its driver kind makes, the manifest kept whole."""
    driver = manifest.driver_kind
    source = manifest.image_ref or display_path(manifest.directory, settings.root, manifest.name)
    origin = (
        f"image {manifest.image_ref}"
        if found is Found.IMAGE
        else f"runtime manifest {display_path(manifest.path, settings.root, manifest.name)}"
    )
    plugin = load_driver(driver, manifest, env=settings.env or None)  # the environment, as read once
    described = _described(manifest.name, found, source, origin, plugin, manifest=manifest, driver=driver)
    shown = display_path(manifest.path, settings.root, manifest.name)
    return dataclasses.replace(described, manifest_shown=shown)


def _described(
    name: str,
    found: Found,
    source: str,
    origin: str,
    value: Any,
    *,
    manifest: RuntimeManifest | None = None,
    driver: str | None = None,
) -> RuntimeDescription:
    plugin, limit = checked(name, origin, value)
    return RuntimeDescription(
        name=name,
        found=found,
        source=source,
        origin=origin,
        plugin=plugin,
        manifest=manifest,
        driver=driver,
        max_concurrency=limit,
    )


def _configured(entry: RuntimeEntry, settings: Settings) -> RuntimeDescription:
    """A `[tool.windtunnel] runtimes` entry with build= or image=; the entry's name is the runtime's name
    (checks, bundle, image digests), whatever its runtime.toml says."""
    source = settings.source
    assert source is not None  # entries come from a config file
    if entry.name == REFERENCE:
        raise ConfigFileError(
            f"{source}: runtimes entry {REFERENCE!r} has build=/image=, but {REFERENCE!r} is Wind Tunnel's "
            "own known-good control and always the bundled one",
            hint="give your runtime another name",
            path=str(source),
            field="runtimes",
        )
    if entry.build is not None:
        manifest = dataclasses.replace(load_manifest(settings.root / entry.build), name=entry.name)
        where = f"build directory {display_path(manifest.directory, settings.root, entry.name)}"
    else:
        assert entry.image is not None
        described = (
            load_manifest(settings.root / entry.manifest)
            if entry.manifest is not None
            else image_manifest(entry.name, entry.image, settings)
        )
        manifest = dataclasses.replace(
            described, name=entry.name, image_ref=entry.image, build_dir=None, plugin=None
        )
        where = f"image {entry.image}"
    description = from_manifest(manifest, Found.CONFIG, settings)
    return dataclasses.replace(
        description, origin=f"[tool.windtunnel] runtimes entry {entry.name!r} ({where})"
    )


def image_manifest(name: str, ref: str, settings: Settings) -> RuntimeManifest:
    """A prebuilt image described by nothing else: plain Contract C, standard env names, no optional
    ability claimed and no AgentConfig field declared supported."""
    return RuntimeManifest(name=name, path=settings.source or settings.root / MANIFEST, image_ref=ref)


def is_image_ref(ref: str) -> bool:
    """An image reference with a tag or a digest; a bare name is a runtime name, not an image."""
    return bool(_IMAGE.fullmatch(ref)) and ("@" in ref or ":" in ref.rsplit("/", 1)[-1])


def image_name(ref: str) -> str:
    """The runtime name of an image given on its own: the last part of its repository (`agent` of
    `ghcr.io/acme/agent:1.2`)."""
    return ref.split("@", 1)[0].rsplit("/", 1)[-1].split(":", 1)[0]


def display_path(path: Path, root: Path, name: str) -> str:
    """`path` relative to the project root, or `name` when it lies outside: never an absolute path."""
    resolved, base = path.resolve(), root.resolve()
    if resolved.is_relative_to(base):
        return resolved.relative_to(base).as_posix() or "."
    return name


def search_roots(settings: Settings) -> list[Path]:
    """Where `runtimes/**/runtime.toml` names are looked up: the project, the working directory, and the
    Wind Tunnel checkout this package runs from (its bundled runtimes), in that order."""
    roots = [settings.root, Path.cwd(), bundled_root()]
    return list(dict.fromkeys(root.resolve() for root in roots if root is not None))


def find_runtime_dir(name: str, roots: Sequence[Path]) -> Path | None:
    """The directory of the runtime.toml named `name` under `<root>/runtimes/` (a few levels deep).

    A broken runtime.toml affects only its own runtime: the lookup passes over it, unless its `name`
    (read leniently) is the one asked for, and then its own error is raised."""
    for manifest in _manifest_files(roots):
        try:
            if load_manifest(manifest).name == name:
                return manifest.parent
        except ConfigFileError:
            if lenient_name(manifest) == name:
                raise
    return None


def _manifest_files(roots: Sequence[Path]) -> Iterator[Path]:
    for root in roots:
        base = root / "runtimes"
        if base.is_dir():
            for manifest in sorted(base.rglob(MANIFEST)):
                if len(manifest.relative_to(base).parts) <= SEARCH_DEPTH:
                    yield manifest


def runtime_manifests(root: Path) -> list[RuntimeManifest]:
    """Every runtime.toml under `<root>/runtimes/`, poison variants included, sorted by name."""
    found = [load_manifest(path) for path in sorted((root / "runtimes").rglob(MANIFEST))]
    return sorted(found, key=lambda manifest: manifest.name)


def _unknown(name: str, settings: Settings) -> UnknownRuntimeError:
    names: set[str] = set()
    broken: list[tuple[Path, ConfigFileError]] = []
    for manifest in _manifest_files(search_roots(settings)):
        try:
            names.add(load_manifest(manifest).name)
        except ConfigFileError as exc:  # a broken one elsewhere must not hide the error being reported
            if lenient_name(manifest) is None:
                broken.append((manifest, exc))
    maybe = "".join(
        f"; the runtime.toml at {shown(path)} is broken and may be the one you mean: {exc.message}"
        for path, exc in broken[:2]
    )
    return UnknownRuntimeError(
        f"no runtime named {name!r} (registered runtimes: {', '.join(available_runtimes()) or 'none'}; "
        f"runtime.toml names: {_listed(sorted(names))}){maybe}",
        hint="install the package that provides it (it registers under the 'windtunnel.runtimes' "
        "entry-point group), add runtimes/<name>/runtime.toml, or pass --runtime module:attr, a runtime "
        "directory or an image reference",
        runtime=name,
        plugin=name,
    )


def _listed(names: Sequence[str], most: int = 8) -> str:
    more = f" and {len(names) - most} more" if len(names) > most else ""
    return (", ".join(names[:most]) + more) or "none"


def _clash(earlier: RuntimeDescription, later: RuntimeDescription) -> UsageError:
    def where(description: RuntimeDescription) -> str:
        manifest = description.manifest
        return f"{description.origin}" + (f" ({manifest.path})" if manifest is not None else "")

    control = (
        f" ({REFERENCE!r} is Wind Tunnel's own known-good control, always certified from the bundled "
        "runtimes/reference)"
        if later.name == REFERENCE
        else ""
    )
    return UsageError(
        f"two different runtimes are named {later.name!r}: {where(earlier)} and {where(later)}{control}",
        hint='give one of them another name: name = "..." in its runtime.toml, or the name= of its '
        "[tool.windtunnel] runtimes entry",
        runtime=later.name,
        field="runtime",
    )
