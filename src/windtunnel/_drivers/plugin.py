"""Runtime plugins for runtimes in containers: `reference`, any `runtimes/**/runtime.toml`, or a path.

Settings are read when a plugin builds, never at import:
`WT_BASE_IMAGE` (or `BASE_IMAGE`, default python:3.12-slim, bootstrapped from Debian when it cannot be
pulled), `WT_GATEWAY_MODE` (script; live with `WT_UPSTREAM_URL` and `WT_UPSTREAM_API_KEY`),
`WT_INJECT_TIMEOUT_S`, `WT_CACHE_DIR`, `WT_SESSION_LABEL` (an extra label on every container, so a
test session or CI job can remove what it started).
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from windtunnel._drivers.manifest import MANIFEST, RuntimeManifest, check_buildable, load_manifest
from windtunnel._drivers.network import CALLER_LABEL
from windtunnel._drivers.stack import ContainerStack, GatewaySpec
from windtunnel._env_values import env_seconds
from windtunnel._runtimes.http_inject import DEFAULT_TIMEOUT_S
from windtunnel.errors import ConfigFileError, PluginError, UnknownRuntimeError

if TYPE_CHECKING:
    from windtunnel._drivers.images import BuiltImage

SEARCH_DEPTH = 4
log = logging.getLogger(__name__)


def _search_roots() -> list[Path]:
    roots = [Path.cwd()]
    from windtunnel._drivers.images import windtunnel_source_root

    with contextlib.suppress(Exception):  # an installed wheel has no source checkout; the cwd is enough then
        roots.append(windtunnel_source_root())
    from windtunnel._config import load_settings

    roots.insert(0, load_settings().root)
    return list(dict.fromkeys(root.resolve() for root in roots))


def find_runtime_dir(name: str, roots: Sequence[Path] | None = None) -> Path | None:
    """The directory of the runtime.toml named `name` under `<root>/runtimes/` (a few levels deep)."""
    for root in roots if roots is not None else _search_roots():
        base = root / "runtimes"
        if not base.is_dir():
            continue
        for manifest in sorted(base.rglob(MANIFEST)):
            if len(manifest.relative_to(base).parts) > SEARCH_DEPTH:
                continue
            try:
                if load_manifest(manifest).name == name:
                    return manifest.parent
            except ConfigFileError:
                continue
    return None


def runtime_manifests(root: Path) -> list[RuntimeManifest]:
    """Every runtime.toml under `<root>/runtimes/`, poison variants included, sorted by name."""
    found = [load_manifest(path) for path in sorted((root / "runtimes").rglob(MANIFEST))]
    return sorted(found, key=lambda manifest: manifest.name)


@dataclass(frozen=True, slots=True, kw_only=True)
class DriverSettings:
    base_image: str
    gateway: GatewaySpec
    timeout_s: float
    cache_dir: Path | None
    session: str | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> DriverSettings:
        mode = env.get("WT_GATEWAY_MODE", "script")
        args: tuple[str, ...] = ()
        gateway_env: dict[str, str] = {}
        if mode in {"live", "record"}:
            upstream = env.get("WT_UPSTREAM_URL")
            if not upstream:
                raise ConfigFileError(
                    f"WT_GATEWAY_MODE={mode} needs WT_UPSTREAM_URL",
                    field="WT_UPSTREAM_URL",
                    hint="point WT_UPSTREAM_URL at an OpenAI-compatible endpoint, or use script mode",
                )
            args = ("--upstream", upstream)
            if env.get("WT_UPSTREAM_API_KEY"):
                gateway_env["WT_UPSTREAM_API_KEY"] = env["WT_UPSTREAM_API_KEY"]
        return cls(
            base_image=env.get("WT_BASE_IMAGE") or env.get("BASE_IMAGE") or "python:3.12-slim",
            gateway=GatewaySpec(
                mode=mode, extra_args=args, env=gateway_env, needs_egress=mode in {"live", "record"}
            ),
            timeout_s=env_seconds(env, "WT_INJECT_TIMEOUT_S", DEFAULT_TIMEOUT_S),
            cache_dir=Path(env["WT_CACHE_DIR"]) if env.get("WT_CACHE_DIR") else None,
            session=env.get("WT_SESSION_LABEL") or None,
        )


@dataclass(frozen=True, slots=True)
class Images:
    windtunnel: str
    runtime: str
    digests: Mapping[str, str]


def prepare_images(client: Any, manifest: RuntimeManifest, settings: DriverSettings) -> Images:
    """Build (or reuse, by content hash) the windtunnel image and the runtime's image, offline."""
    from windtunnel._drivers.base_image import ensure_base_image
    from windtunnel._drivers.images import build_windtunnel_image, windtunnel_source_root

    check_buildable(manifest)
    base = ensure_base_image(client, settings.base_image)
    harness = build_windtunnel_image(
        client, repo_root=windtunnel_source_root(), base_image=base, cache_dir=settings.cache_dir
    )
    if manifest.image_ref is not None:
        runtime_ref = manifest.image_ref
        runtime_digest = client.images.get(runtime_ref).id
    else:
        built = build_manifest_image(client, manifest, base_image=base, cache_dir=settings.cache_dir)
        runtime_ref, runtime_digest = built.id, built.digest
    # By id, not tag: the engine may be shared, and a tag can be moved by another build meanwhile, so the
    # containers would not run the images the bundle records.
    return Images(
        windtunnel=harness.id,
        runtime=runtime_ref,
        digests={"windtunnel": harness.digest, f"runtime:{manifest.name}": runtime_digest},
    )


def build_manifest_image(
    client: Any, manifest: RuntimeManifest, *, base_image: str, cache_dir: Path | None = None
) -> BuiltImage:
    """The image a runtime.toml describes: its build directory, Dockerfile, requirements, local packages,
    build arguments and name."""
    from windtunnel._drivers.images import build_runtime_image

    if manifest.build_dir is None:
        raise ValueError(f"{manifest.path} names no build directory")  # check_buildable() comes first
    return build_runtime_image(
        client,
        manifest.build_dir,
        base_image=base_image,
        cache_dir=cache_dir,
        dockerfile=manifest.dockerfile,
        requirements=manifest.requirements,
        packages=manifest.packages,
        build_args=manifest.build_args,
        name=manifest.name,
    )


def sweep_dead_runs(client: Any) -> list[str]:
    """Remove what runs whose owner process died left behind (never a live run's), saying what went.

    Every entry point that starts containers builds a plugin, so `wt run` and `wt selftest` clean up
    after a crashed run as `wt certify` and `wt images sweep` do.
    """
    from docker.errors import DockerException

    from windtunnel._drivers.cleanup import sweep_leftovers

    try:
        removed = sweep_leftovers(client)
    except DockerException as exc:  # hygiene only: a failed sweep must not stop this run
        log.warning("sweeping leftovers of dead runs failed: %s", exc)
        return []
    for line in removed:
        log.warning("removed a leftover of a dead run: %s", line)
    return removed


class ContainerRuntimePlugin:
    """Builds a ContainerRuntime (reference-capable when the manifest says so) for one runtime.toml."""

    max_concurrency = 1

    def __init__(
        self,
        manifest_path: Path | None = None,
        *,
        name: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self._manifest_path = manifest_path
        self._name = name
        self._env = env
        self.images: Images | None = None

    def manifest(self) -> RuntimeManifest:
        path = self._manifest_path
        if path is None:
            assert self._name is not None
            path = find_runtime_dir(self._name)
            if path is None:
                raise UnknownRuntimeError(
                    f"no runtimes/**/runtime.toml named {self._name!r} under {', '.join(map(str, _search_roots()))}",
                    hint="run from the project checkout, or pass --runtime path/to/runtime-dir",
                    runtime=self._name,
                )
        return load_manifest(path)

    def build(self, runtime_name: str, label: str, soul_path: Path | None) -> Any:
        from windtunnel._drivers.container import ContainerRuntime, ReferenceContainerRuntime
        from windtunnel._drivers.docker_env import docker_client

        manifest = self.manifest()
        settings = DriverSettings.from_env(os.environ if self._env is None else self._env)
        client = docker_client()
        sweep_dead_runs(client)
        self.images = prepare_images(client, manifest, settings)
        stack = ContainerStack(
            client,
            windtunnel_image=self.images.windtunnel,
            gateway=settings.gateway,
            session=settings.session or label,
            labels={CALLER_LABEL: label},
        )
        kind = ReferenceContainerRuntime if manifest.reference else ContainerRuntime
        runtime = kind(manifest, stack, self.images.runtime, timeout_s=settings.timeout_s)
        runtime.image_digests = dict(self.images.digests)  # type: ignore[attr-defined]
        return runtime

    def lock_key(self, runtime_name: str) -> str:
        return f"container:{runtime_name}"

    def post_run(self, runtime: Any, scenarios: Any, runtime_name: str) -> None:
        close = getattr(runtime, "close", None)
        if callable(close):
            close()


def python_plugin(manifest: RuntimeManifest) -> Any:
    """A runtime directory whose manifest names `[driver] plugin = "module:attr"` in that directory."""
    assert manifest.plugin is not None
    module_name, _, attr = manifest.plugin.partition(":")
    directory = str(manifest.directory)
    if directory not in sys.path:
        sys.path.insert(0, directory)
    try:
        value: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError) as exc:
        raise PluginError(
            f"{manifest.path}: [driver] plugin {manifest.plugin!r} cannot be loaded: {exc}",
            hint="name a module in the runtime directory and its plugin attribute, like 'driver:plugin'",
            plugin=manifest.name,
            entry_point=manifest.plugin,
        ) from exc
    return value


def plugin_for_path(path: Path) -> Any:
    manifest = load_manifest(path)
    return python_plugin(manifest) if manifest.plugin else ContainerRuntimePlugin(manifest.path)


def plugin_for_name(name: str) -> Any | None:
    directory = find_runtime_dir(name)
    return None if directory is None else plugin_for_path(directory)


reference = ContainerRuntimePlugin(name="reference")
"""The bundled reference runtime (runtimes/reference), registered as `reference`."""
