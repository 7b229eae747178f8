"""Loading plugins: the `windtunnel.runtimes` and `windtunnel.drivers` entry-point groups, `module:attr` paths.

A plugin is checked when it loads; an error names the plugin, where it came from and what is missing,
one fact a line (pluggy's habit). The resolver (windtunnel._runtimes.resolve) decides what to load.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from windtunnel._configfile import shown
from windtunnel._runtimes.manifest import RuntimeManifest
from windtunnel._runtimes.plugin import PLUGIN_OPTIONAL_HOOKS
from windtunnel.errors import PluginError

ENTRY_POINT_GROUP = "windtunnel.runtimes"
DRIVER_GROUP = "windtunnel.drivers"
"""Driver kinds, the one registry of them: the built-in `in_memory`, `http_inject`, `python` (`[driver] plugin =
"module:attr"`) and `container` (a runtime.toml with an image), and any a third-party package registers. Each
is a callable taking the RuntimeManifest and returning a runtime plugin; one that reads settings from the
environment also takes the keyword `env`, the environment as the caller's Settings read it once (the CLI's
`Settings.env`), so it never reads the process environment itself."""

DriverFactory = Callable[..., Any]


def available_runtimes() -> list[str]:
    return sorted({entry.name for entry in entry_points(group=ENTRY_POINT_GROUP)})


def runtime_entry_point(name: str) -> EntryPoint | None:
    return next((entry for entry in entry_points(group=ENTRY_POINT_GROUP) if entry.name == name), None)


def load_entry(entry: EntryPoint) -> Any:
    try:
        return entry.load()
    except Exception as exc:
        raise PluginError(
            f"runtime plugin {entry.name!r} (entry point {entry.value}) failed to import: "
            f"{type(exc).__name__}: {exc}",
            hint="reinstall the package that registers it, or fix the import error above",
            plugin=entry.name,
            entry_point=entry.value,
        ) from exc


def load_attr(ref: str) -> Any:
    """The object a `module:attr` path names (dotted attributes allowed)."""
    module_name, _, attr = ref.partition(":")
    try:
        value: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError) as exc:
        raise PluginError(
            f"runtime plugin {ref!r} cannot be loaded: {type(exc).__name__}: {exc}",
            hint="check the module path (importable from here) and the attribute name after ':'; an image "
            "reference needs a registry or a namespace (docker.io/library/NAME:TAG)",
            plugin=ref,
            entry_point=ref,
        ) from exc
    return value


def driver_kinds() -> list[str]:
    """The names of every registered driver kind."""
    return sorted({entry.name for entry in entry_points(group=DRIVER_GROUP)})


def load_driver(kind: str, manifest: RuntimeManifest, *, env: Mapping[str, str] | None = None) -> Any:
    """The plugin the driver `kind` makes for `manifest` (given `env` when it takes it); an unknown kind is
    one line naming the known ones."""
    entry = next((e for e in entry_points(group=DRIVER_GROUP) if e.name == kind), None)
    if entry is None:
        known = ", ".join(driver_kinds()) or "none"
        raise PluginError(
            f"{shown(manifest.path)}: [driver] kind = {kind!r} is not a registered driver kind (known: {known})",
            hint=f"name one of {known} in [driver] kind, or install the package that registers {kind!r} under "
            f"the {DRIVER_GROUP!r} entry-point group (reinstall windtunnel if a built-in one is missing)",
            plugin=manifest.name,
            entry_point=f"{DRIVER_GROUP}:{kind}",
            path=str(manifest.path),
            field="driver.kind",
        )
    factory: DriverFactory = load_entry(entry)
    if env is not None and _takes_env(factory):
        return factory(manifest, env=env)
    return factory(manifest)


def _takes_env(factory: DriverFactory) -> bool:
    try:
        return "env" in inspect.signature(factory).parameters
    except (TypeError, ValueError):  # a callable whose signature cannot be read takes the manifest only
        return False


def instantiate(name: str, origin: str, value: Any) -> Any:
    """A plugin registered as a class is constructed with no arguments; a failure there names it."""
    if not inspect.isclass(value):
        return value
    try:
        return value()
    except Exception as exc:
        raise PluginError(
            f"runtime plugin {name!r}: constructing {value.__qualname__}() raised "
            f"{type(exc).__name__}: {exc}\n  loaded from: {origin}",
            hint="fix the plugin class's __init__ (Wind Tunnel calls it with no arguments), or register "
            "an instance instead of the class",
            plugin=name,
            entry_point=origin,
        ) from exc


def checked(name: str, origin: str, value: Any) -> tuple[Any, int | None]:
    """The plugin object and its max_concurrency, once it has build(), callable hooks and a sane limit."""
    plugin = instantiate(name, origin, value)
    if not callable(getattr(plugin, "build", None)):
        raise PluginError(
            f"runtime plugin {name!r} has no build() method\n  loaded from: {origin}\n  "
            "missing: build(runtime_name, label, soul_path) -> AgentRuntime",
            hint="add a build() method to the plugin object (see windtunnel.spi.RuntimePlugin)",
            plugin=name,
            entry_point=origin,
            missing="build",
        )
    for hook in PLUGIN_OPTIONAL_HOOKS:
        if hasattr(plugin, hook) and not callable(getattr(plugin, hook)):
            raise PluginError(
                f"runtime plugin {name!r}: {hook} is not callable\n  loaded from: {origin}",
                hint=f"make {hook} a method, or remove it",
                plugin=name,
                entry_point=origin,
                missing=hook,
            )
    # An optional plain attribute, read once here: the single place a plugin is inspected.
    limit = getattr(plugin, "max_concurrency", 1)
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise PluginError(
            f"runtime plugin {name!r}: max_concurrency is {limit!r}\n  loaded from: {origin}",
            hint="set max_concurrency to a positive int, or None for no limit",
            plugin=name,
            entry_point=origin,
            missing="max_concurrency",
        )
    return plugin, limit
