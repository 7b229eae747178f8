"""A custom driver around the reference runtime that opens each runtime container's network namespace again:
the default route through the bridge (the host) comes back and the egress firewall lets everything out,
as for a runtime started without the fence. Only the egress check, which probes from inside the
namespace, may catch it: the runtime's peers still answer, so every other check passes.

The module name differs from other poisons' driver modules: runtime directories share one import namespace.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # ../wrapped_reference.py, shared by poisons
from wrapped_reference import WrappingPlugin  # importable only once the line above ran

OPEN = (
    "IPT=iptables; iptables -S >/dev/null 2>&1 || IPT=iptables-legacy; "
    "$IPT -P OUTPUT ACCEPT && $IPT -F OUTPUT && ip route replace default via {gateway}"
)


def open_namespace(runtime: Any, handle: Any) -> Any:
    """Give the namespace the runtime lives in (its fence holder's) a way out again."""
    network = runtime.stack.network
    network.reload()
    gateway = network.attrs["IPAM"]["Config"][0]["Gateway"]
    code, output = handle.container.namespace.exec_run(["sh", "-c", OPEN.format(gateway=gateway)])
    if code != 0:
        raise RuntimeError(f"the poison could not open the namespace: {output!r}")
    return handle


plugin = WrappingPlugin(lambda: open_namespace)
