"""CertifyConfig: everything one certification run needs, immutable, read in one place."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from windtunnel._bundle.shard_models import ShardInfo
from windtunnel._config import SUITE_VERSION, Settings, bundled_root, default_lock_dir
from windtunnel._core.rates import Price
from windtunnel._env_values import process_env
from windtunnel._runtimes.resolve import REFERENCE, RuntimeDescription, resolve_runtimes
from windtunnel.errors import ConfigFileError, UnknownRuntimeError

__all__ = ["REFERENCE", "CertifyConfig", "embedded_default", "suite_dir", "utc_now"]


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True, kw_only=True)
class CertifyConfig:
    """`runtimes` are the runtimes to certify, as the user named them (names, directories, images...); the
    reference runtime always runs too, as the harness's known-good control. `project` is the config they
    resolve against (its `[tool.windtunnel] runtimes` entries; default: `root` with no config), and
    `described` holds them resolved (from_settings() resolves them once, up front). `suite_dir` holds
    requirement sets, poisons and expected failures."""

    runtimes: tuple[str, ...]
    pack_refs: tuple[str, ...]
    root: Path
    out_dir: Path
    suite_dir: Path
    requirement_set: str = SUITE_VERSION
    fail_fast: bool = False
    key_path: Path | None = None
    key_pem: str | None = None
    certification: bool = True
    clock: Callable[[], datetime] = field(default=utc_now)
    lock_dir: Path = field(default_factory=default_lock_dir)
    project: Settings | None = None
    described: tuple[RuntimeDescription, ...] = ()
    tiers: tuple[str, ...] = ()
    """--tier values: none selects the gate tiers (smoke, stable); see windtunnel._core.tiers."""
    control_cache: Path | None = None
    """Where the reference control's selftest result is kept and reused (windtunnel._pipeline.control_cache);
    None runs it afresh every time (`wt certify --no-cache`, and every run not started by `wt certify`)."""
    shard: ShardInfo | None = None
    """This run is one shard of a plan (`wt certify --shard I/N`, windtunnel._pipeline.sharding): publish
    writes it as shard.json, which the statement signs."""

    @property
    def env(self) -> Mapping[str, str]:
        """The environment as the project's settings read it once (the process's without settings)."""
        return self.project.env if self.project is not None and self.project.env else process_env()

    @property
    def pricing(self) -> Mapping[str, Price]:
        """The project's [tool.windtunnel.pricing] rates by model label (windtunnel._core.rates)."""
        return self.project.pricing if self.project is not None else {}

    @property
    def all_runtimes(self) -> tuple[str, ...]:
        """The reference control first, then the requested runtimes, each once, as named."""
        return tuple(dict.fromkeys((REFERENCE, *self.runtimes)))

    def descriptions(self) -> tuple[RuntimeDescription, ...]:
        """Every runtime of the run resolved by the one resolver (the reference control first), each once.
        Two different runtimes with one name are a usage error naming both."""
        project = self.project or Settings(root=self.root, source=None)
        return self.described or resolve_runtimes(self.all_runtimes, project)

    def description_of(self, name: str) -> RuntimeDescription:
        found = next((d for d in self.descriptions() if d.name == name), None)
        if found is None:
            raise UnknownRuntimeError(f"runtime {name!r} is not part of this certify run", runtime=name)
        return found

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        runtimes: tuple[str, ...],
        out_dir: Path,
        fail_fast: bool = False,
        key_path: Path | None = None,
        tiers: tuple[str, ...] = (),
        control_cache: Path | None = None,
    ) -> CertifyConfig:
        """Read once: the project's config, or with none the embedded default (the bundled reference
        runtime, packs and suite of the windtunnel checkout); CLI values win over the config. Every
        runtime is resolved here, so a bad name stops the run before anything starts."""
        project = settings if settings.source is not None else embedded_default(settings)
        config = cls(
            runtimes=runtimes or tuple(entry.name for entry in project.runtimes) or (REFERENCE,),
            pack_refs=project.packs,
            root=project.root,
            out_dir=out_dir,
            suite_dir=suite_dir(project.root, project.requirement_set),
            requirement_set=project.requirement_set,
            fail_fast=fail_fast,
            key_path=key_path,
            key_pem=settings.env_value("WT_SIGNING_KEY"),
            lock_dir=settings.lock_dir,
            project=project,
            tiers=tiers,
            control_cache=control_cache,
        )
        return dataclasses.replace(config, described=resolve_runtimes(config.all_runtimes, project))


def embedded_default(settings: Settings) -> Settings:
    """With no config above the cwd: the windtunnel checkout's own [tool.windtunnel] (the bundled reference
    runtime and packs), so `wt certify` works from any directory. Unchanged when there is no checkout."""
    from windtunnel._config import load_settings

    root = bundled_root()
    if root is None:
        return settings
    bundled = load_settings(cwd=root, env=settings.env)
    return bundled if bundled.source is not None and bundled.source.parent == root else settings


def suite_dir(root: Path, version: str) -> Path:
    """The conformance suite: the project's `conformance/` when it has the requirement set, else the
    bundled one of the windtunnel checkout."""
    wanted = Path("conformance") / "requirements" / f"v{version}.toml"
    bases = list(dict.fromkeys(base for base in (root, bundled_root()) if base is not None))
    for base in bases:
        if (base / wanted).is_file():
            return base / "conformance"
    raise ConfigFileError(
        f"no conformance suite with requirement set {version}: looked for "
        + " and ".join(str(base / wanted) for base in bases),
        hint="run from a Wind Tunnel checkout (`pip install -e .` of a clone), add conformance/ "
        "(requirements/, poisons.toml, expected_failures.toml) to your project, or set requirement_set",
        path=str(root / wanted),
        field="requirement_set",
    )
