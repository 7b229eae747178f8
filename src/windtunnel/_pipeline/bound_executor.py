"""The executor plumbing for `--stack bound`: the services belong to the executor that started them."""

from __future__ import annotations


class BoundExecutor:
    """Another executor (Dagger) started every service before `wt certify` ran and stops them after it;
    this process starts no container, so it has none to sweep and none of its own to leave behind."""

    def prepare(self, run_id: str) -> list[str]:
        return []

    def leftovers(self, run_id: str) -> list[str]:
        return []
