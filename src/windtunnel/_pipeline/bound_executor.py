"""The executor plumbing for `--stack bound`: the services belong to the executor that started them."""

from __future__ import annotations


class BoundExecutor:
    """Another executor (Dagger) started every service before `wt certify` ran and stops them after it;
    this process starts no container, so it has none to sweep and none of its own to leave behind."""

    unmeasurable: tuple[str, ...] = (
        "conformance/recovery",  # the services are the engine's: none can be killed mid-turn and restarted
        "conformance/egress_closed",  # no probe can join a service's network, and services have egress
        "tapes/*",  # a committed tape needs its own replay-mode gateway; the bound stack has one script gateway
    )
    """NOT_MEASURED here for every runtime (docs/dagger.md): no runtime is certified under this executor
    while requirement set v1 scores them, but the reference control is not blamed for it."""

    def prepare(self, run_id: str) -> list[str]:
        return []

    def leftovers(self, run_id: str) -> list[str]:
        return []

    def check_engine(self) -> None:
        """The services' engine is the other executor's to watch: it stops this run if it goes."""
