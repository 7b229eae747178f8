"""The container driver's plugin: a runtime.toml with an image becomes a ContainerRuntime on a stack of its own.

Registered as the `container` driver kind (`windtunnel.drivers` entry-point group); the resolver
(windtunnel._runtimes.resolve) hands it the manifest. Settings are read when a plugin builds, never at
import: `WT_BASE_IMAGE` (or `BASE_IMAGE`, default python:3.12-slim, bootstrapped from Debian when it cannot
be pulled), `WT_GATEWAY_MODE` (script; live with `WT_UPSTREAM_URL` and `WT_UPSTREAM_API_KEY` or `WT_UPSTREAM_KEY_FILE`,
the key handed to the gateway container as a read-only file),
`WT_INJECT_TIMEOUT_S`, `WT_CACHE_DIR`, `WT_SESSION_LABEL` (an extra label on every container, so a test
session or CI job can remove what it started), `WT_PREBUILT_IMAGES` (in a runner container), `WT_LOCK_DIR`
(read as Settings read it, so image builds and runtimes lock in one directory). They come from the
environment the caller's Settings read (the resolver hands it over), else the process's; a plugin reads
them once (DriverSettings.from_env) and hands them down to every image it builds.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from windtunnel._config import default_lock_dir, lock_dir
from windtunnel._drivers.http_inject import DEFAULT_TIMEOUT_S
from windtunnel._engine.network import CALLER_LABEL
from windtunnel._engine.prebuilt import ENV_VAR as PREBUILT_ENV
from windtunnel._engine.stack import ContainerStack, GatewaySpec
from windtunnel._env_values import env_seconds, process_env
from windtunnel._gateway.upstream_key import in_container, upstream_key
from windtunnel._runtimes.manifest import RuntimeManifest, check_buildable, load_manifest
from windtunnel.errors import ConfigFileError, RuntimeFault

if TYPE_CHECKING:
    from windtunnel._drivers.container import ContainerRuntime
    from windtunnel._engine.images import BuiltImage

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class DriverSettings:
    base_image: str
    gateway: GatewaySpec
    timeout_s: float
    cache_dir: Path | None
    session: str | None = None
    prebuilt: str | None = None
    """WT_PREBUILT_IMAGES as given: in a runner container, the images the host side built
    (windtunnel._engine.prebuilt)."""
    lock_dir: Path = field(default_factory=default_lock_dir)
    """Where image builds take their machine-wide locks: Settings.lock_dir, the runtimes' lock directory."""

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> DriverSettings:
        """The one place driver settings are read: from `env`, the environment the caller's Settings read."""
        return cls(
            base_image=env.get("WT_BASE_IMAGE") or env.get("BASE_IMAGE") or "python:3.12-slim",
            gateway=gateway_spec(env),
            timeout_s=env_seconds(env, "WT_INJECT_TIMEOUT_S", DEFAULT_TIMEOUT_S),
            cache_dir=Path(env["WT_CACHE_DIR"]) if env.get("WT_CACHE_DIR") else None,
            session=env.get("WT_SESSION_LABEL") or None,
            prebuilt=env.get(PREBUILT_ENV) or None,
            lock_dir=lock_dir(env),
        )


def gateway_spec(env: Mapping[str, str]) -> GatewaySpec:
    """How the gateway serves, as WT_GATEWAY_MODE says: script; live or record with WT_UPSTREAM_URL and a key."""
    mode = env.get("WT_GATEWAY_MODE", "script")
    if mode not in {"live", "record"}:
        return GatewaySpec(mode=mode)
    upstream = env.get("WT_UPSTREAM_URL")
    if not upstream:
        raise ConfigFileError(
            f"WT_GATEWAY_MODE={mode} needs WT_UPSTREAM_URL",
            field="WT_UPSTREAM_URL",
            hint="point WT_UPSTREAM_URL at an OpenAI-compatible endpoint, or use script mode",
        )
    # The key goes in as a read-only file, never as the container's env or command line.
    key_args, secrets = in_container(upstream_key(env))
    return GatewaySpec(
        mode=mode, extra_args=("--upstream", upstream, *key_args), secrets=secrets, needs_egress=True
    )


def with_side_models(gateway: GatewaySpec, side_models: tuple[str, ...]) -> GatewaySpec:
    """The gateway told the runtime's side model names (`[model] side_models`), so its side calls are
    answered beside the script and never consume a scripted decision."""
    if not side_models:
        return gateway
    args = tuple(arg for name in side_models for arg in ("--side-model", name))
    return replace(gateway, extra_args=(*gateway.extra_args, *args))


@dataclass(frozen=True, slots=True)
class Images:
    windtunnel: str
    runtime: str
    digests: Mapping[str, str]
    netguard: str | None = None
    """The egress fence's holder image (windtunnel._engine.fence)."""


def prepare_images(client: Any, manifest: RuntimeManifest, settings: DriverSettings) -> Images:
    """Build (or reuse, by content hash) the windtunnel image and the runtime's image, offline."""
    from windtunnel._engine.base_image import ensure_base_image
    from windtunnel._engine.fence import ensure_netguard_image

    check_buildable(manifest)
    prebuilt = _prebuilt(client, manifest.name, settings)
    if prebuilt is not None:
        return prebuilt
    base = ensure_base_image(
        client, settings.base_image, cache_dir=settings.cache_dir, lock_dir=settings.lock_dir
    )
    netguard = ensure_netguard_image(client, base, cache_dir=settings.cache_dir, lock_dir=settings.lock_dir)
    harness = prepare_windtunnel_image(client, base, settings)
    runtime_ref, runtime_digest = prepare_runtime_image(client, manifest, base, settings)
    # By id, not tag: the engine may be shared, and a tag can be moved by another build meanwhile, so the
    # containers would not run the images the bundle records.
    return Images(
        windtunnel=harness.id,
        runtime=runtime_ref,
        digests={
            "windtunnel": harness.digest,
            f"runtime:{manifest.name}": runtime_digest,
            "netguard": str(client.images.get(netguard).id),
        },
        netguard=netguard,
    )


def _prebuilt(client: Any, runtime: str, settings: DriverSettings) -> Images | None:
    """In a runner container the host side built the images (windtunnel._engine.prebuilt): use those."""
    from windtunnel._engine.prebuilt import FAILED, prebuilt_for, require_present

    found = prebuilt_for({PREBUILT_ENV: settings.prebuilt} if settings.prebuilt else {}, runtime)
    if found is None:
        return None
    if FAILED in found:  # it did not build on the host side: the runtime's failure, as here
        raise RuntimeBuildError(
            found[FAILED], hint=found.get("hint"), runtime=runtime, log_tail=list(found["log_tail"])
        )
    require_present(client, found)
    return Images(
        windtunnel=found["windtunnel"],
        runtime=found["runtime"],
        digests=dict(found["digests"]),
        netguard=found["netguard"],
    )


class RuntimeBuildError(RuntimeFault):
    """The image of a runtime under certification did not build (its Dockerfile, its requirements or its
    packages): the runtime's failure, not Wind Tunnel's. `.log_tail` holds the build's last lines."""


def _runtime_image(client: Any, manifest: RuntimeManifest, base: str, settings: DriverSettings) -> BuiltImage:
    """The runtime's own image; what fails in it is the runtime's (RuntimeBuildError), while the base image
    and the windtunnel image, built before it, stay Wind Tunnel's (HarnessError)."""
    from windtunnel._engine.images import ImageBuildError
    from windtunnel._engine.npm_packs import NpmPackError
    from windtunnel._engine.wheelhouse import WheelhouseError

    try:
        return build_manifest_image(
            client, manifest, base_image=base, cache_dir=settings.cache_dir, lock_dir=settings.lock_dir
        )
    except (ImageBuildError, WheelhouseError, NpmPackError) as exc:
        first, *rest = exc.message.splitlines() or [""]
        raise RuntimeBuildError(
            f"the image of runtime {manifest.name!r} did not build: {first}",
            hint=exc.hint,
            runtime=manifest.name,
            log_tail=list(getattr(exc, "log_tail", None) or rest[-25:]),
        ) from exc


def prepare_windtunnel_image(client: Any, base: str, settings: DriverSettings) -> BuiltImage:
    """The gateway/mocks image on the base image `base` (already in the engine), built from this checkout."""
    from windtunnel._engine.images import build_windtunnel_image, windtunnel_source_root

    return build_windtunnel_image(
        client,
        repo_root=windtunnel_source_root(),
        base_image=base,
        cache_dir=settings.cache_dir,
        lock_dir=settings.lock_dir,
    )


def prepare_runtime_image(
    client: Any, manifest: RuntimeManifest, base: str, settings: DriverSettings
) -> tuple[str, str]:
    """The runtime's image (id or reference, digest): its `image` pulled or found, else built as its
    runtime.toml says. Call check_buildable(manifest) first."""
    if manifest.image_ref is not None:
        from windtunnel._engine.prebuilt import ensure_image

        ensure_image(client, manifest.name, manifest.image_ref)
        return manifest.image_ref, str(client.images.get(manifest.image_ref).id)
    built = _runtime_image(client, manifest, base, settings)
    return built.id, built.digest


def build_manifest_image(
    client: Any, manifest: RuntimeManifest, *, base_image: str, cache_dir: Path | None, lock_dir: Path | None
) -> BuiltImage:
    """The image a runtime.toml describes: its build directory, Dockerfile, requirements, local packages,
    build arguments and name; `lock_dir` holds the build's machine-wide lock (Settings.lock_dir)."""
    from windtunnel._engine.images import build_runtime_image

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
        npm=manifest.npm,
        lock_dir=lock_dir,
    )


def sweep_dead_runs(client: Any) -> list[str]:
    """Remove what runs whose owner process died left behind (never a live run's), saying what went.

    Every entry point that starts containers builds a plugin, so `wt run` and `wt selftest` clean up
    after a crashed run as `wt certify` and `wt images sweep` do.
    """
    from docker.errors import DockerException

    from windtunnel._engine.cleanup import sweep_leftovers

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

    def __init__(self, manifest: RuntimeManifest, *, env: Mapping[str, str] | None = None) -> None:
        self.manifest = manifest
        self._env = env
        self._settings: DriverSettings | None = None

    @property
    def settings(self) -> DriverSettings:
        """The driver settings, read once from the environment the resolver handed over (the caller's
        Settings'), on first use: resolving a runtime reads none, so a verb that builds nothing never fails
        on them."""
        if self._settings is None:
            self._settings = DriverSettings.from_env(process_env() if self._env is None else self._env)
        return self._settings

    def build(self, runtime_name: str, label: str, soul_path: Path | None) -> ContainerRuntime:
        from windtunnel._drivers.container import ContainerRuntime, ReferenceContainerRuntime
        from windtunnel._engine.docker_env import docker_client

        settings = self.settings
        client = docker_client()
        sweep_dead_runs(client)
        images = prepare_images(client, self.manifest, settings)
        stack = ContainerStack(
            client,
            windtunnel_image=images.windtunnel,
            gateway=with_side_models(settings.gateway, self.manifest.side_models),
            session=settings.session or label,
            labels={CALLER_LABEL: label},
            netguard_image=images.netguard,
        )
        kind = ReferenceContainerRuntime if self.manifest.reference else ContainerRuntime
        return kind(
            self.manifest, stack, images.runtime, timeout_s=settings.timeout_s, image_digests=images.digests
        )

    def lock_key(self, runtime_name: str) -> str:
        return f"container:{runtime_name}"

    # The ImagePlugin ability (windtunnel._runtimes.abilities): what verbs ask of an image-backed runtime.
    def prebuilt_ref(self) -> str | None:
        return self.manifest.image_ref

    def build_image(
        self, client: Any, *, base_image: str, cache_dir: Path | None, lock_dir: Path
    ) -> BuiltImage:
        check_buildable(self.manifest)
        return build_manifest_image(
            client, self.manifest, base_image=base_image, cache_dir=cache_dir, lock_dir=lock_dir
        )

    def prepare_images(self, client: Any, settings: DriverSettings) -> Images:
        return prepare_images(client, self.manifest, settings)


def container_plugin(runtime_dir: Path) -> ContainerRuntimePlugin:
    """The plugin Wind Tunnel builds for a runtime directory (a Dockerfile and a runtime.toml).

    Wrap it to write a custom driver around a containerised runtime; see docs/writing-a-runtime.md.
    """
    return ContainerRuntimePlugin(load_manifest(Path(runtime_dir)))
