"""`--dist loadgroup` for the conformance kit: a worker takes a runtime's cases whole and in order.

Each case is marked `xdist_group(runtime)`, but pytest-xdist (3.8) groups by a suffix it writes into the
item's private node id attribute, which pytest 9.2 renamed: the suffix is lost, and loadgroup silently
becomes plain load. The checks of one runtime then go to every worker: each opens the runtime again (its
stack, pre_run) and waits for the runtime's machine-wide lock while another worker holds it (in one CI run,
two waits of 90-400 s per runtime). This scheduler reads the runtime from the case's own id, so the
grouping holds whichever way xdist and pytest change; any other test is grouped as loadgroup groups it.
"""

from __future__ import annotations

from xdist.scheduler import LoadGroupScheduling  # type: ignore[import-untyped]

from windtunnel._conformance.case_ids import case_runtime

RUNTIME_SCOPE = "windtunnel-runtime:"


class RuntimeGroupScheduling(LoadGroupScheduling):  # type: ignore[misc]
    def _split_scope(self, nodeid: str) -> str:
        runtime = case_runtime(nodeid)
        return RUNTIME_SCOPE + runtime if runtime is not None else str(super()._split_scope(nodeid))
