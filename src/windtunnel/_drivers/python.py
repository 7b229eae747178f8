"""The `python` driver kind: a runtime directory whose runtime.toml names `[driver] plugin = "module:attr"`.

The module is imported from the runtime's own directory, so a custom driver (for instance one wrapping
`windtunnel.spi.container_plugin`) ships next to its runtime.toml.
"""

from __future__ import annotations

import sys
from typing import Any

from windtunnel._runtimes.manifest import RuntimeManifest
from windtunnel._runtimes.registry import load_attr
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
    directory = str(manifest.directory)
    if directory not in sys.path:
        sys.path.insert(0, directory)
    try:
        return load_attr(manifest.plugin)
    except PluginError as exc:
        cause = exc.__cause__ or exc  # the import's own error, without load_attr's wording
        raise PluginError(
            f"{manifest.path}: [driver] plugin {manifest.plugin!r} cannot be loaded: {cause}",
            hint="name a module in the runtime directory and its plugin attribute, like 'driver:plugin'",
            plugin=manifest.name,
            entry_point=manifest.plugin,
        ) from exc
