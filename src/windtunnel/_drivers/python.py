"""The `python` driver kind: a runtime directory whose runtime.toml names `[driver] plugin = "module:attr"`.

The module is imported from the runtime's own directory, so a custom driver (for instance one wrapping
`windtunnel.spi.container_plugin`) ships next to its runtime.toml.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

from windtunnel._runtimes.manifest import RuntimeManifest
from windtunnel.errors import PluginError


def python_plugin(manifest: RuntimeManifest) -> Any:
    """The plugin object `[driver] plugin` names, imported with the runtime's directory on sys.path."""
    if manifest.plugin is None:
        raise PluginError(
            f'{manifest.path}: the python driver needs [driver] plugin = "module:attr"',
            hint="name a module in the runtime directory and its plugin attribute, like 'driver:plugin'",
            plugin=manifest.name,
            entry_point="windtunnel.drivers:python",
            missing="driver.plugin",
        )
    module_name, _, attr = manifest.plugin.partition(":")
    directory = str(manifest.directory)
    if directory not in sys.path:
        sys.path.insert(0, directory)
    try:
        value: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError) as exc:
        raise PluginError(
            f"{manifest.path}: [driver] plugin {manifest.plugin!r} cannot be loaded: {exc}",
            hint="name a module in the runtime directory and its plugin attribute, like 'driver:plugin'",
            plugin=manifest.name,
            entry_point=manifest.plugin,
        ) from exc
    return value
