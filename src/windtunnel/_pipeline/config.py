"""CertifyConfig: everything one certification run needs, immutable, read in one place."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from windtunnel._config import LATEST_REQUIREMENT_SET, Settings
from windtunnel._score.ladder import Ladder, check_model
from windtunnel._score.pricing import Price
from windtunnel.errors import ConfigFileError, UsageError

if TYPE_CHECKING:
    from windtunnel._drivers.bound import BoundStack
    from windtunnel._drivers.manifest import RuntimeManifest
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
    the stacks another executor started (`stack="bound"`), by runtime name. `configured` holds the
    runtimes a config entry describes by `build=` or `image=`, by name."""

    runtimes: tuple[str, ...]
    pack_refs: tuple[str, ...]
    root: Path
    out_dir: Path
    suite_dir: Path
    requirement_set: str = LATEST_REQUIREMENT_SET
    fail_fast: bool = False
    key_path: Path | None = None
    key_pem: str | None = None
    certification: bool = True
    clock: Callable[[], datetime] = field(default=utc_now)
    stack: str = "docker"
    bound: Mapping[str, BoundStack] = field(default_factory=dict)
    configured: Mapping[str, RuntimeManifest] = field(default_factory=dict)
    tiers: tuple[str, ...] = ()
    """--tier values: none selects the gate tiers (smoke, stable); see windtunnel._scenario.tiers."""
    pricing: Mapping[str, Price] = field(default_factory=dict)
    ladder: Ladder | None = None

    def check_model(self, runtime: str, label: str | None) -> None:
        """The model ladder's verdict on a runtime's label (windtunnel._score.ladder); no ladder allows all."""
        check_model(self.ladder, runtime, label)

    @property
    def all_runtimes(self) -> tuple[str, ...]:
        """The reference control first, then the requested runtimes, each once."""
        return tuple(dict.fromkeys((REFERENCE, *self.runtimes)))

    def load_plugin(self, name: str) -> LoadedPlugin:
        """The runtime's plugin: bound to running services when the executor started them; the container
        driver's for a configured build directory or image; else as registered (a runtime with no bound
        stack, such as a Python plugin, loads and runs here as usual)."""
        from windtunnel._runtimes.registry import load_runtime_plugin

        stack, manifest = self.bound.get(name), self.configured.get(name)
        if stack is not None:
            from windtunnel._drivers.bound import bound_plugin

            if manifest is not None:
                raise UsageError(
                    f"runtime {name!r} comes from a build=/image= config entry, which --stack bound cannot bind",
                    hint="under Dagger, certify a runtimes/**/runtime.toml by name (docs/dagger.md)",
                    runtime=name,
                )
            return bound_plugin(name, stack)
        if manifest is not None:
            from windtunnel._pipeline.runtimes import configured_plugin

            return configured_plugin(name, manifest)
        return load_runtime_plugin(name)

    def manifest_of(self, name: str) -> RuntimeManifest | None:
        """The runtime's manifest: its config entry's, else its runtimes/**/runtime.toml; None for others."""
        if name in self.configured:
            return self.configured[name]
        from windtunnel._drivers.manifest import load_manifest
        from windtunnel._drivers.plugin import find_runtime_dir

        directory = find_runtime_dir(name)
        return load_manifest(directory) if directory is not None else None

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
        tiers: tuple[str, ...] = (),
    ) -> CertifyConfig:
        """Read once: the project's config, or with none the embedded default (the bundled reference
        runtime, packs and suite of the windtunnel checkout); CLI values win over the config."""
        from windtunnel._pipeline.runtimes import entry_manifest

        project = settings if settings.source is not None else embedded_default(settings)
        configured = {
            entry.name: manifest
            for entry in project.runtimes
            if (manifest := entry_manifest(entry, project)) is not None
        }
        return cls(
            runtimes=runtimes or tuple(entry.name for entry in project.runtimes) or (REFERENCE,),
            pack_refs=project.packs,
            root=project.root,
            out_dir=out_dir,
            suite_dir=suite_dir(project.root, project.requirement_set),
            requirement_set=project.requirement_set,
            fail_fast=fail_fast,
            key_path=key_path,
            key_pem=settings.env_value("WT_SIGNING_KEY"),
            stack=stack,
            bound=_bound_stacks(settings) if stack == "bound" else {},
            configured=configured,
            tiers=tiers,
            pricing=project.pricing,
            ladder=project.ladder,
        )


def embedded_default(settings: Settings) -> Settings:
    """With no config above the cwd: the windtunnel checkout's own [tool.windtunnel] (the bundled reference
    runtime and packs), so `wt certify` works from any directory. Unchanged when there is no checkout."""
    from windtunnel._config import load_settings
    from windtunnel._pipeline.runtimes import bundled_root

    root = bundled_root()
    if root is None:
        return settings
    bundled = load_settings(cwd=root, env=settings.env)
    return bundled if bundled.source is not None and bundled.source.parent == root else settings


def suite_dir(root: Path, version: str) -> Path:
    """The conformance suite: the project's `conformance/` when it has the requirement set, else the
    bundled one of the windtunnel checkout."""
    from windtunnel._pipeline.runtimes import bundled_root

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


def _bound_stacks(settings: Settings) -> Mapping[str, BoundStack]:
    from windtunnel._drivers.bound import ENV_VAR, load_bound_stacks

    text = settings.env_value(ENV_VAR)
    if not text:
        raise ConfigFileError(
            f"--stack bound needs {ENV_VAR}: the URLs of the services another executor started",
            hint="run it inside `dagger call certify` (pipeline/), or use the default --stack docker",
            field=ENV_VAR,
        )
    return load_bound_stacks(text)
