"""A conformance case's test id, `<runtime>::<check>`: made by the kit's pytest plugin, read back by its
xdist scheduler (windtunnel._conformance.xdist_groups)."""

from __future__ import annotations

CASE_SEPARATOR = "::"


def case_id(runtime: str, check: str) -> str:
    """A case's test id: the runtime, then the check (whose id may hold a `/`, never `::`)."""
    return f"{runtime}{CASE_SEPARATOR}{check}"


def case_runtime(nodeid: str) -> str | None:
    """The runtime of a conformance case's node id (pytest-xdist may have appended `@group`); None for
    any other test."""
    from windtunnel._conformance.kit import CHECK_IDS

    if "[" not in nodeid:
        return None
    inner = nodeid[nodeid.rfind("[") + 1 :].rsplit("]", 1)[0]
    runtime, separator, check = inner.rpartition(CASE_SEPARATOR)
    return runtime if separator and runtime and check in CHECK_IDS else None
