"""A custom driver around the reference runtime that also attaches every runtime container to an ordinary
(non-internal) network: a poison only the egress check's inspection of the container may catch. The
run's own network and everything else are untouched, so a probe from that network still finds it closed.

The module name differs from other poisons' driver modules: runtime directories share one import namespace.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # ../wrapped_reference.py, shared by poisons
from wrapped_reference import WrappingPlugin  # importable only once the line above ran


class OutsideNetwork:
    """Attaches each provisioned container to one ordinary network, created on first use for the run."""

    def __init__(self) -> None:
        self._network: Any = None

    def __call__(self, runtime: Any, handle: Any) -> Any:
        stack = runtime.stack
        if self._network is None:
            # Labelled with the run, so the run's cleanup removes it with everything else.
            labels = {**stack.labels, "windtunnel.role": "poison-outside"}
            name = f"{stack.network.name}-poison-outside"
            self._network = stack.client.networks.create(name, driver="bridge", internal=False, labels=labels)
        self._network.connect(handle.container.namespace)  # the fence holder owns the namespace
        return handle


plugin = WrappingPlugin(OutsideNetwork)
