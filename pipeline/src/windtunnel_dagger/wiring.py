"""The wiring of `dagger call certify`, as plain data: a Docker engine, a runner bound to it, one command.

The Dagger module (main.py, builders.py) builds its engine service and runner container from this, and so
does noxfile.py's `certify_in_container` session (tests/dind/simulation.py), which reproduces the same wiring offline with docker-py
(an engine container, a runner container on a shared network). tests/unit/test_dagger_module.py asserts
that the two agree. Standard library only: the nox session imports it without dagger-io.
"""

from __future__ import annotations

from collections.abc import Sequence

DIND_IMAGE = "docker:29.10.1-dind"
"""The official Docker-in-Docker image, pinned by tag (docs/dagger.md says why not by digest yet)."""
ENGINE_ALIAS = "docker"
"""The engine's host name for the runner (a Dagger service binding; a network alias in the simulation)."""
ENGINE_PORT = 2375
DOCKER_HOST = f"tcp://{ENGINE_ALIAS}:{ENGINE_PORT}"
ENGINE_ARGS = (
    "dockerd",
    "--host=unix:///var/run/docker.sock",
    f"--host=tcp://0.0.0.0:{ENGINE_PORT}",
    "--tls=false",
)
"""The engine listens on its own unix socket too: the runner container Wind Tunnel starts inside it (when
container addresses are not routable from the runner) reaches the engine through that socket."""
ENGINE_ENV = {"DOCKER_TLS_CERTDIR": ""}
"""No TLS: the engine is reached only on the private link between the two (docker:dind reads this)."""
ENGINE_STATE = "/var/lib/docker"
ENGINE_STATE_CACHE = "windtunnel-dind-state"
"""A cache volume on the engine's state: images built by one run are there for the next (warm runs)."""

SOURCE_DIR = "/src"
CACHE_DIR = "/wt/cache"
CACHE_VOLUME = "windtunnel-cache"
"""WT_CACHE_DIR of the runner: wheelhouses and the saved base and netguard images, kept between runs."""
BUNDLE_DIR = "/wt/bundle"
KEY_ENV = "WT_SIGNING_KEY"
"""The signing key, as a secret variable of the runner (never a file of the source, never in the bundle)."""
SHARDS_DIR = "/wt/shards"
"""Where `merge` mounts the shard bundles, one directory per shard: /wt/shards/1, /wt/shards/2, ..."""
TRUST_DIR = "/wt/trust"
"""Where `merge` mounts the public keys a shard may be signed by (never a key found inside a shard)."""
RUN_ENV = "WT_DAGGER_RUN"
"""Unique per call: a certification must run, not replay a cached one."""


def runner_env(run: str) -> dict[str, str]:
    """The runner's environment (the signing key aside, which is a secret). PYTHONPATH runs windtunnel from
    the source it was installed from: the source is the checkout that builds the images."""
    return {
        "DOCKER_HOST": DOCKER_HOST,
        "WT_CACHE_DIR": CACHE_DIR,
        RUN_ENV: run,
        "PYTHONPATH": f"{SOURCE_DIR}/src",
    }


def certify_command(runtimes: Sequence[str], shard: str | None = None) -> list[str]:
    """The command users run, in the runner: `wt certify` with the runtimes (and, for one part of a sharded
    certification, `--shard I/N`), into BUNDLE_DIR."""
    part = ["--shard", shard] if shard is not None else []
    return [
        "wt",
        "certify",
        *(arg for name in runtimes for arg in ("--runtime", name)),
        *part,
        "--out",
        BUNDLE_DIR,
    ]


def shard_dirs(count: int) -> list[str]:
    """Where `merge` mounts each of `count` shard bundles."""
    return [f"{SHARDS_DIR}/{index}" for index in range(1, count + 1)]


def trust_files(count: int) -> list[str]:
    """Where `merge` mounts each of `count` trusted public keys."""
    return [f"{TRUST_DIR}/{index}.pub.pem" for index in range(1, count + 1)]


def merge_command(shards: int, trusted: int) -> list[str]:
    """`wt merge` of the mounted shards into BUNDLE_DIR, trusting the mounted keys (with none: the signing
    key's own public key, as `wt merge` does)."""
    trust = [arg for path in trust_files(trusted) for arg in ("--trust", path)]
    return ["wt", "merge", *shard_dirs(shards), "--out", BUNDLE_DIR, *trust]


RUNNER_MOUNTS = {CACHE_DIR: CACHE_VOLUME}
"""Container path -> cache volume, in the runner."""
ENGINE_MOUNTS = {ENGINE_STATE: ENGINE_STATE_CACHE}
"""Container path -> cache volume, in the engine."""
