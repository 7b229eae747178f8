"""`wt images`: bootstrap a base image offline, build Wind Tunnel's images, sweep leftovers of dead runs."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from windtunnel._cli.values import file_path
from windtunnel._cli.verbs import Command, VerbGroup
from windtunnel._config import Settings
from windtunnel._core.vocabulary import Exit
from windtunnel._engine.base_image import (
    DEFAULT_BASE_IMAGE,
    DEFAULT_SUITE,
    bootstrap_base_image,
    bootstrap_tag,
    ensure_base_image,
    require_bootstrap_tools,
)
from windtunnel._engine.cleanup import sweep_leftovers
from windtunnel._engine.docker_env import docker_client
from windtunnel._engine.images import (
    BuiltImage,
    build_windtunnel_image,
    windtunnel_source_root,
)
from windtunnel._runtimes.abilities import ImagePlugin
from windtunnel._runtimes.manifest import MANIFEST, RuntimeManifest, check_buildable, load_manifest
from windtunnel._runtimes.registry import load_driver
from windtunnel._runtimes.resolve import resolve_runtime
from windtunnel.errors import UsageError

COMMANDS = {
    "bootstrap": Command(
        "make a base image from Debian packages (debootstrap + docker import); needs root",
        "Build a minimal Debian root filesystem with python3, python3-venv and ca-certificates using "
        "debootstrap, and import it into the engine. Use it as BASE_IMAGE where the default base image "
        "cannot be pulled. Needs root and debootstrap.",
    ),
    "build": Command(
        "build the windtunnel image (gateway, mocks) and any runtime images, offline",
        "Ensure the base image (local, pulled, or bootstrapped), build a wheelhouse on this host and build "
        "the images with no network. Unchanged images are reused.",
    ),
    "sweep": Command(
        "remove containers and networks of runs whose owner process is gone",
        "Remove every container and network labelled windtunnel.run whose owner process (recorded in its "
        "labels) no longer runs on this host, and list what was removed.",
    ),
}
"""`wt images`' actions, in `wt images --help` order: each one's summary there and its own description."""


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    group = VerbGroup(commands, "images", COMMANDS, title="actions")
    _bootstrap(group.add("bootstrap", _run_bootstrap))
    _build(group.add("build", _run_build))
    group.add("sweep", _run_sweep)


def _bootstrap(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tag", metavar="T", help=f"image tag (default {bootstrap_tag(DEFAULT_SUITE)})")
    parser.add_argument("--suite", default=DEFAULT_SUITE, metavar="SUITE", help="Debian suite")
    parser.add_argument("--mirror", metavar="URL", help="Debian mirror (default: debootstrap's own)")


def _build(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--base-image",
        metavar="REF",
        help=f"BASE_IMAGE for every build (default: $WT_BASE_IMAGE or {DEFAULT_BASE_IMAGE})",
    )
    parser.add_argument(
        "--runtime",
        action="append",
        default=[],
        metavar="NAME|DIR",
        help="also build this runtime's image, as its runtime.toml says ([image] build, dockerfile, "
        "requirements): a runtime name or directory resolved as every verb resolves it; a directory without "
        "a runtime.toml builds DIR/Dockerfile with an optional DIR/requirements.txt",
    )
    parser.add_argument(
        "--cache-dir",
        type=file_path,
        metavar="DIR",
        help="wheelhouse cache (default ~/.cache/windtunnel/wheelhouse)",
    )


def _run_bootstrap(args: argparse.Namespace, settings: Settings) -> int:
    require_bootstrap_tools()  # before the engine: root and debootstrap are the likelier gaps
    client = docker_client(env=settings.env)
    started = time.monotonic()
    tag = bootstrap_base_image(client, tag=args.tag, suite=args.suite, mirror=args.mirror)
    _say(f"bootstrapped {tag} in {time.monotonic() - started:.0f} s; use it with --base-image {tag}")
    return Exit.OK


def _run_build(args: argparse.Namespace, settings: Settings) -> int:
    runtimes = [_runtime_build(ref, settings) for ref in args.runtime]
    client = docker_client(env=settings.env)
    requested = args.base_image or settings.env_value("WT_BASE_IMAGE") or DEFAULT_BASE_IMAGE
    base = ensure_base_image(client, requested, lock_dir=settings.lock_dir)
    _say(f"base image   {base}")
    built = [
        build_windtunnel_image(
            client,
            repo_root=windtunnel_source_root(),
            base_image=base,
            cache_dir=args.cache_dir,
            lock_dir=settings.lock_dir,
        )
    ]
    for name, plugin in runtimes:
        if (ref := plugin.prebuilt_ref()) is not None:
            _say(f"prebuilt     {name}: [image] ref = {ref} (nothing to build)")
            continue
        built.append(
            plugin.build_image(client, base_image=base, cache_dir=args.cache_dir, lock_dir=settings.lock_dir)
        )
    for image in built:
        _say(_line(image))
    return Exit.OK


def _runtime_build(ref: str, settings: Settings) -> tuple[str, ImagePlugin]:
    """What `--runtime REF` builds: the runtime it resolves to, when its plugin makes an image (the driver
    builds exactly that); a directory with a Dockerfile and no runtime.toml builds that Dockerfile, named
    after the directory."""
    directory = Path(ref)
    if directory.is_dir() and not (directory / MANIFEST).is_file():
        if not (directory / "Dockerfile").is_file():
            raise UsageError(
                f"--runtime {ref}: expected a directory with a {MANIFEST} or a Dockerfile, found neither",
                hint="point --runtime at runtimes/<name>/",
                field="--runtime",
            )
        bare = RuntimeManifest(
            name=directory.resolve().name, path=directory / MANIFEST, build_dir=directory.resolve()
        )
        plugin = load_driver(bare.driver_kind, bare)  # the kind a runtime.toml saying nothing more infers
        if not isinstance(plugin, ImagePlugin):
            raise _no_image(ref, f"the {bare.driver_kind!r} driver kind makes no image")
        return bare.name, plugin
    if directory.exists() and load_manifest(directory).plugin is not None:  # refused before its module loads
        raise _no_image(ref, f"its {MANIFEST} names a Python driver ([driver] plugin)")
    description = resolve_runtime(ref, settings)
    if not isinstance(description.plugin, ImagePlugin):
        raise _no_image(ref, f"{description.origin} is not a container runtime")
    if description.manifest is not None:
        check_buildable(description.manifest)  # before anything is built
    return description.name, description.plugin


def _no_image(ref: str, why: str) -> UsageError:
    return UsageError(
        f"--runtime {ref}: {why}, no image: a Python driver or plugin runs on the host",
        hint="build only container runtimes",
        field="--runtime",
    )


def _run_sweep(_args: argparse.Namespace, settings: Settings) -> int:
    removed = sweep_leftovers(docker_client(env=settings.env))
    _say("\n".join(f"removed {line}" for line in removed) if removed else "no leftovers")
    return Exit.OK


def _line(image: BuiltImage) -> str:
    how = "reused" if image.reused else "built"
    return f"{how:12} {image.tag}  {image.digest}"


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")
