"""Finding runtime plugins: the `windtunnel.runtimes` entry-point group or a `module:attr` path.

A plugin is checked when it loads; an error names the plugin, the entry point and the missing method,
one fact a line (pluggy's habit).
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any

from windtunnel.errors import PluginError, UnknownRuntimeError, WindTunnelError
from windtunnel.spi.runtime_plugin import PLUGIN_OPTIONAL_HOOKS

ENTRY_POINT_GROUP = "windtunnel.runtimes"


@dataclass(frozen=True, slots=True)
class LoadedPlugin:
    name: str
    source: str
    plugin: Any

    @property
    def max_concurrency(self) -> int | None:
        limit: int | None = getattr(self.plugin, "max_concurrency", 1)
        return limit

    def lock_key(self) -> str:
        hook = getattr(self.plugin, "lock_key", None)
        return str(self._ask("lock_key", hook)) if callable(hook) else self.name

    def model_label(self) -> str | None:
        hook = getattr(self.plugin, "model_label", None)
        label: str | None = self._ask("model_label", hook) if callable(hook) else None
        return label

    def _ask(self, name: str, hook: Any) -> Any:
        try:
            return hook(self.name)
        except Exception as exc:
            raise PluginError(
                f"runtime plugin {self.name!r}: {name}() raised {type(exc).__name__}: {exc}\n"
                f"  loaded from: {self.source}",
                hint=f"fix the plugin's {name}(runtime_name); it must answer without side effects",
                plugin=self.name,
                entry_point=self.source,
            ) from exc


def available_runtimes() -> list[str]:
    return sorted({entry.name for entry in entry_points(group=ENTRY_POINT_GROUP)})


def load_runtime_plugin(name: str) -> LoadedPlugin:
    """Resolve `name` as a registered runtime or a `module:attr` path and check the plugin."""
    path = Path(name)
    if (path / "runtime.toml").is_file() or (path.name == "runtime.toml" and path.is_file()):
        from windtunnel._drivers.plugin import plugin_for_path

        return _check(path.resolve().name, f"runtime manifest {path}", plugin_for_path(path))
    if ":" in name:
        return _check(name, name, _load_attr(name))
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        if entry.name == name:
            return _check(name, f"entry point {entry.name} = {entry.value}", _load_entry(entry))
    from windtunnel._drivers.plugin import find_runtime_dir, plugin_for_path

    directory = find_runtime_dir(name)
    if directory is not None:
        return _check(name, f"runtime manifest {directory / 'runtime.toml'}", plugin_for_path(directory))
    known = ", ".join(available_runtimes()) or "none"
    raise UnknownRuntimeError(
        f"no runtime named {name!r}\n  registered runtimes: {known}",
        hint="install the package that provides it (it registers under the 'windtunnel.runtimes' "
        "entry-point group), add runtimes/<name>/runtime.toml, or pass --runtime module:attr or a runtime directory",
        runtime=name,
        plugin=name,
    )


def _load_entry(entry: EntryPoint) -> Any:
    try:
        return entry.load()
    except Exception as exc:
        raise PluginError(
            f"runtime plugin {entry.name!r} failed to import\n  entry point: {entry.value}\n  "
            f"error: {type(exc).__name__}: {exc}",
            hint="reinstall the package that registers it, or fix the import error above",
            plugin=entry.name,
            entry_point=entry.value,
        ) from exc


def _load_attr(ref: str) -> Any:
    module_name, _, attr = ref.partition(":")
    try:
        value: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError) as exc:
        raise PluginError(
            f"runtime plugin {ref!r} cannot be loaded\n  error: {type(exc).__name__}: {exc}",
            hint="check the module path (importable from here) and the attribute name after ':'",
            plugin=ref,
            entry_point=ref,
        ) from exc
    return value


def _instantiate(name: str, source: str, value: Any) -> Any:
    """A plugin registered as a class is constructed with no arguments; a failure there names it."""
    if not inspect.isclass(value):
        return value
    try:
        return value()
    except Exception as exc:
        raise PluginError(
            f"runtime plugin {name!r}: constructing {value.__qualname__}() raised "
            f"{type(exc).__name__}: {exc}\n  loaded from: {source}",
            hint="fix the plugin class's __init__ (Wind Tunnel calls it with no arguments), or register "
            "an instance instead of the class",
            plugin=name,
            entry_point=source,
        ) from exc


def _check(name: str, source: str, value: Any) -> LoadedPlugin:
    plugin = _instantiate(name, source, value)
    build = getattr(plugin, "build", None)
    if not callable(build):
        raise PluginError(
            f"runtime plugin {name!r} has no build() method\n  loaded from: {source}\n  "
            "missing: build(runtime_name, label, soul_path) -> AgentRuntime",
            hint="add a build() method to the plugin object (see windtunnel.spi.RuntimePlugin)",
            plugin=name,
            entry_point=source,
            missing="build",
        )
    for hook in PLUGIN_OPTIONAL_HOOKS:
        if hasattr(plugin, hook) and not callable(getattr(plugin, hook)):
            raise PluginError(
                f"runtime plugin {name!r}: {hook} is not callable\n  loaded from: {source}",
                hint=f"make {hook} a method, or remove it",
                plugin=name,
                entry_point=source,
                missing=hook,
            )
    limit = getattr(plugin, "max_concurrency", 1)
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise PluginError(
            f"runtime plugin {name!r}: max_concurrency is {limit!r}\n  loaded from: {source}",
            hint="set max_concurrency to a positive int, or None for no limit",
            plugin=name,
            entry_point=source,
            missing="max_concurrency",
        )
    return LoadedPlugin(name=name, source=source, plugin=plugin)


def build_runtime(loaded: LoadedPlugin, label: str | None = None) -> Any:
    """Call the plugin's build(); errors other than ours name the plugin."""
    try:
        return loaded.plugin.build(loaded.name, label or loaded.name, None)
    except WindTunnelError:
        raise
    except Exception as exc:
        raise PluginError(
            f"runtime plugin {loaded.name!r}: build() raised {type(exc).__name__}: {exc}\n  loaded from: {loaded.source}",
            hint="fix the plugin's build(); it should construct the runtime without starting a run",
            plugin=loaded.name,
            entry_point=loaded.source,
        ) from exc
