"""Which way `wt certify` reaches its containers: from this process (host) or from a runner container.

`--executor auto` decides by a real reachability probe (windtunnel._engine.reach); `host` and
`container` choose outright. A process that already runs in a runner container is always `host`. In
container mode the host side builds every image first (timed: where the cold time goes), then hands the
run to windtunnel._pipeline.in_container.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from windtunnel._pipeline.config import CertifyConfig
from windtunnel._runtimes.abilities import ImagePlugin
from windtunnel.errors import RuntimeFault, WindTunnelError

if TYPE_CHECKING:
    from windtunnel._drivers.container_plugin import DriverSettings

MODES = ("auto", "host", "container")


def choose(
    requested: str,
    progress: Callable[[str], None],
    env: Mapping[str, str],
    settings: DriverSettings,
) -> str:
    """`host` or `container`, saying why when it was decided here; `env` is the environment as the CLI's
    Settings read it, `settings` the driver settings read from it (the probe runs on their base image)."""
    from windtunnel._engine.runner_peer import runner_name

    if runner_name(env) is not None:
        return "host"  # already the runner inside the engine
    if requested != "auto":
        return requested
    from windtunnel._engine.base_image import ensure_base_image
    from windtunnel._engine.docker_env import docker_client
    from windtunnel._engine.reach import probe_reach

    client = docker_client(env=env)
    started = time.perf_counter()
    base = ensure_base_image(
        client, settings.base_image, cache_dir=settings.cache_dir, lock_dir=settings.lock_dir
    )
    progress(f"cold time: base image {time.perf_counter() - started:.1f} s (the probe runs on it)")
    reach = probe_reach(client, base, env.get("DOCKER_HOST"))
    mode = "host" if reach.routable else "container"
    progress(f"executor {mode}: {reach.evidence}")
    return mode


def build_images(
    config: CertifyConfig, settings: DriverSettings, progress: Callable[[str], None]
) -> tuple[Any, dict[str, Any]]:
    """Every image-backed runtime's images (an ImagePlugin's), built in the engine here with the driver
    settings `settings`; the client and WT_PREBUILT_IMAGES' data.

    A runtime whose own image does not build is named with its failure, and one whose images fail
    otherwise is left out (the runner then tries them itself): either way its build stage fails as it
    would on a local engine. The reference control's images must build.
    """
    from windtunnel._engine.base_image import ensure_base_image
    from windtunnel._engine.docker_env import docker_client
    from windtunnel._engine.prebuilt import FAILED
    from windtunnel._pipeline.config import REFERENCE

    client = docker_client(env=config.env)
    started = time.perf_counter()
    ensure_base_image(client, settings.base_image, cache_dir=settings.cache_dir, lock_dir=settings.lock_dir)
    progress(f"cold time: base image {time.perf_counter() - started:.1f} s")
    images: dict[str, Any] = {}
    for description in config.descriptions():
        plugin = description.plugin
        if not isinstance(plugin, ImagePlugin):
            continue
        started = time.perf_counter()
        try:
            built = plugin.prepare_images(client, settings)
        except RuntimeFault as exc:  # its own image did not build (RuntimeBuildError): the runtime's failure
            if description.name == REFERENCE:
                raise
            progress(f"the image of {description.name} did not build; its build stage will say why")
            images[description.name] = {
                FAILED: exc.message,
                "hint": exc.hint,
                "log_tail": [str(line) for line in getattr(exc, "log_tail", [])],
            }
            continue
        except WindTunnelError as exc:  # not its image (e.g. an image ref that cannot be pulled): left out
            if description.name == REFERENCE:
                raise
            progress(f"images of {description.name} are not ready here; the runner tries them itself: {exc}")
            continue
        images[description.name] = {
            "windtunnel": built.windtunnel,
            "runtime": built.runtime,
            "netguard": built.netguard,
            "digests": dict(built.digests),
        }
        progress(f"cold time: images of {description.name} {time.perf_counter() - started:.1f} s")
    return client, images


def runner_flags(
    fail_fast: bool, tiers: Sequence[str] | None, *, no_cache: bool = False, json: bool = False
) -> list[str]:
    """The flags of this `wt certify` that the runner's must repeat (--out, --key and --runtime aside); the
    runner's output streams here as plain lines, or as JSON events with --json."""
    flags = ["--json" if json else "--plain"]
    flags += ["--fail-fast"] if fail_fast else []
    flags += ["--no-cache"] if no_cache else []
    return flags + [arg for tier in tiers or () for arg in ("--tier", tier)]


def in_container(
    config: CertifyConfig,
    settings: DriverSettings,
    *,
    runtimes: Sequence[str],
    flags: Sequence[str],
    progress: Callable[[str], None],
) -> int:
    """Build the images here (with the driver settings `settings`), then certify from a runner container
    inside the engine."""
    from windtunnel._pipeline.in_container import certify_in_container

    client, images = build_images(config, settings, progress)
    return certify_in_container(
        client, config, runtimes=runtimes, flags=flags, images=images, progress=progress
    )
