"""CertifyConfig: everything one certification run needs, immutable, read in one place."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from windtunnel._config import Settings

if TYPE_CHECKING:
    from windtunnel._drivers.bound import BoundStack
    from windtunnel._runtimes.registry import LoadedPlugin

REFERENCE = "reference"
STACKS = ("docker", "bound")
"""docker: this process starts every container; bound: another executor (Dagger) started them (WT_BOUND_STACKS)."""


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True, kw_only=True)
class CertifyConfig:
    """`runtimes` are the runtimes to certify; the reference runtime always runs too, as the harness's
    known-good control. `suite_dir` holds requirement sets, poisons and expected failures. `bound` holds
    the stacks another executor started (`stack="bound"`), by runtime name."""

    runtimes: tuple[str, ...]
    pack_refs: tuple[str, ...]
    root: Path
    out_dir: Path
    suite_dir: Path
    requirement_set: str = "1"
    fail_fast: bool = False
    key_path: Path | None = None
    key_pem: str | None = None
    certification: bool = True
    clock: Callable[[], datetime] = field(default=utc_now)
    stack: str = "docker"
    bound: Mapping[str, BoundStack] = field(default_factory=dict)

    @property
    def all_runtimes(self) -> tuple[str, ...]:
        """The reference control first, then the requested runtimes, each once."""
        return tuple(dict.fromkeys((REFERENCE, *self.runtimes)))

    def load_plugin(self, name: str) -> LoadedPlugin:
        """The runtime's plugin: bound to running services when the executor started them, else as registered
        (a runtime with no bound stack, such as a Python plugin, loads and runs here as usual)."""
        from windtunnel._runtimes.registry import load_runtime_plugin

        stack = self.bound.get(name)
        if stack is None:
            return load_runtime_plugin(name)
        from windtunnel._drivers.bound import bound_plugin

        return bound_plugin(name, stack)

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        runtimes: tuple[str, ...],
        out_dir: Path,
        fail_fast: bool = False,
        key_path: Path | None = None,
        stack: str = "docker",
    ) -> CertifyConfig:
        configured = tuple(entry.name for entry in settings.runtimes)
        return cls(
            runtimes=runtimes or configured or (REFERENCE,),
            pack_refs=settings.packs,
            root=settings.root,
            out_dir=out_dir,
            suite_dir=settings.root / "conformance",
            requirement_set=settings.requirement_set,
            fail_fast=fail_fast,
            key_path=key_path,
            key_pem=settings.env_value("WT_SIGNING_KEY"),
            stack=stack,
            bound=_bound_stacks(settings) if stack == "bound" else {},
        )


def _bound_stacks(settings: Settings) -> Mapping[str, BoundStack]:
    from windtunnel._drivers.bound import ENV_VAR, load_bound_stacks
    from windtunnel.errors import ConfigFileError

    text = settings.env_value(ENV_VAR)
    if not text:
        raise ConfigFileError(
            f"--stack bound needs {ENV_VAR}: the URLs of the services another executor started",
            hint="run it inside `dagger call certify` (pipeline/), or use the default --stack docker",
            field=ENV_VAR,
        )
    return load_bound_stacks(text)
