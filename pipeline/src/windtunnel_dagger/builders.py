"""Pure, synchronous builders: the engine service, the runner container and the checks as lazy Dagger objects.

Nothing here talks to an engine: every function only chains `dag.container()` calls, so the tests can
build the same objects offline and read them. The awaits live in main.py. What to wire (images, ports,
args, env, mounts, the command) comes from wiring.py, which noxfile.py's offline simulation reads too.
"""

from __future__ import annotations

from collections.abc import Sequence

import dagger
from dagger import dag

from . import wiring

RUNNER_IMAGE = "python:3.12-slim"
"""The runner's Python: `pip install .` of the source gives it `wt` (it downloads what it needs)."""
INJECT_LIBRARY = "packages/windtunnel-inject"
"""noxfile.py's INJECT_LIBRARY: the tests import it, so every test venv installs it."""
SOURCE_DIR = wiring.SOURCE_DIR


def engine(dind_image: str = wiring.DIND_IMAGE) -> dagger.Service:
    """A Docker engine as a service: docker:dind with insecure root capabilities (what dockerd needs to run
    containers), its state on a cache volume so a second run finds its images built."""
    ctr = dag.container().from_(dind_image)
    for name, value in wiring.ENGINE_ENV.items():
        ctr = ctr.with_env_variable(name, value)
    for path, volume in wiring.ENGINE_MOUNTS.items():
        ctr = ctr.with_mounted_cache(path, dag.cache_volume(volume))
    ctr = ctr.with_exposed_port(wiring.ENGINE_PORT)
    return ctr.as_service(args=list(wiring.ENGINE_ARGS), use_entrypoint=True, insecure_root_capabilities=True)


def runner(
    source: dagger.Directory,
    runtimes: Sequence[str],
    *,
    run: str,
    engine_service: dagger.Service | None,
    docker_host: dagger.Secret | None = None,
    signing_key: dagger.Secret | None = None,
    shard: str | None = None,
) -> dagger.Container:
    """The source installed with pip, bound to the engine (or pointed at `docker_host`), running the
    wiring's `wt certify` (of one part of the plan with `shard` I/N). Any exit code is accepted, so the
    bundle can be exported before the gate fails on it; the bundle directory exists even when wt stops
    before writing one."""
    ctr = installed(source)
    for path, volume in wiring.RUNNER_MOUNTS.items():
        ctr = ctr.with_mounted_cache(path, dag.cache_volume(volume))
    for name, value in wiring.runner_env(run).items():
        if name == "DOCKER_HOST" and docker_host is not None:
            ctr = ctr.with_secret_variable(name, docker_host)  # an existing engine instead of dind
        else:
            ctr = ctr.with_env_variable(name, value)
    if docker_host is None and engine_service is not None:
        ctr = ctr.with_service_binding(wiring.ENGINE_ALIAS, engine_service)
    if signing_key is not None:
        ctr = ctr.with_secret_variable(wiring.KEY_ENV, signing_key)
    ctr = ctr.with_exec(["mkdir", "-p", wiring.BUNDLE_DIR])
    return ctr.with_exec(wiring.certify_command(runtimes, shard), expect=dagger.ReturnType.ANY)


def installed(source: dagger.Directory) -> dagger.Container:
    """The runner's Python with the source installed by pip: `wt` on its PATH."""
    ctr = dag.container().from_(RUNNER_IMAGE).with_directory(SOURCE_DIR, source).with_workdir(SOURCE_DIR)
    return ctr.with_exec(["pip", "install", "--disable-pip-version-check", "-q", "."])


def merger(
    source: dagger.Directory,
    shards: Sequence[dagger.Directory],
    *,
    trust: Sequence[dagger.File] = (),
    signing_key: dagger.Secret | None = None,
) -> dagger.Container:
    """`wt merge` of the shard bundles (each as `shard` exported it) into one signed bundle: no engine is
    needed. Any exit code is accepted, so a refusal's message is in the log and the gate fails on it."""
    ctr = installed(source)
    for path, shard in zip(wiring.shard_dirs(len(shards)), shards, strict=True):
        ctr = ctr.with_directory(path, shard)
    for path, key in zip(wiring.trust_files(len(trust)), trust, strict=True):
        ctr = ctr.with_file(path, key)
    if signing_key is not None:
        ctr = ctr.with_secret_variable(wiring.KEY_ENV, signing_key)
    ctr = ctr.with_exec(["mkdir", "-p", wiring.BUNDLE_DIR])
    return ctr.with_exec(wiring.merge_command(len(shards), len(trust)), expect=dagger.ReturnType.ANY)


def test_container(source: dagger.Directory, python_image: str, extras: str) -> dagger.Container:
    """The repo installed with pip in a fresh Python (as `nox` installs it: with the Contract C server
    library beside it), for the @check functions."""
    ctr = dag.container().from_(python_image).with_directory(SOURCE_DIR, source).with_workdir(SOURCE_DIR)
    install = [
        "pip",
        "install",
        "--disable-pip-version-check",
        "-q",
        "-e",
        f".[{extras}]",
        "-e",
        INJECT_LIBRARY,
    ]
    return ctr.with_exec(install)


# -- the @check functions -------------------------------------------------------------------------------
PYTHON_IMAGE = "python:3.11-slim"
"""noxfile.py's Python."""


def unit_tests(source: dagger.Directory) -> dagger.Container:
    """The unit tests, as `nox -s tests` runs them minus those needing a Docker engine (marker docker)."""
    ctr = test_container(source, PYTHON_IMAGE, "test,dev")
    return ctr.with_exec(["pytest", "-p", "no:cacheprovider", "-q", "-m", "not docker", "tests/unit"])


def lint(source: dagger.Directory) -> dagger.Container:
    """`nox -s lint`: ruff check and ruff format --check over the repository."""
    ctr = dag.container().from_(PYTHON_IMAGE).with_directory(SOURCE_DIR, source).with_workdir(SOURCE_DIR)
    ctr = ctr.with_exec(["pip", "install", "--disable-pip-version-check", "-q", "ruff>=0.6"])
    return ctr.with_exec(["ruff", "check", "."]).with_exec(["ruff", "format", "--check", "."])


def typecheck(source: dagger.Directory) -> dagger.Container:
    """`nox -s typecheck`: mypy (strict) over src, tests, noxfile.py and pipeline."""
    return test_container(source, PYTHON_IMAGE, "test,dev").with_exec(["mypy"])
