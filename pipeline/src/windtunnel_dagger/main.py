"""Wind Tunnel's Dagger module: `dagger call certify` runs `wt certify` against a Docker engine service.

Dagger provides two things: a Docker engine (the official docker:dind image as a service with insecure
root capabilities, its state on a cache volume), and a runner container built from the source, bound to
that engine with DOCKER_HOST pointing at it. The runner runs the same `wt certify` users run; Wind Tunnel
finds that the engine's container addresses are not routable from the runner and certifies from a runner
container inside the engine, so every check is measured as on a local engine (docs/dagger.md). The wiring
is data in wiring.py, which noxfile.py's offline `certify_in_container` session reproduces with docker-py.
"""

import json
import uuid
from typing import Annotated

import dagger
from dagger import DefaultPath, Doc, Ignore

from . import builders, wiring
from ._sdk import check, field, function, object_type

IGNORE = [
    ".git",
    "**/.venv",
    "**/.nox",
    "**/__pycache__",
    "**/.mypy_cache",
    "**/.ruff_cache",
    "**/.pytest_cache",
    "**/*.egg-info",
    "**/node_modules",
    "runs",
    "out",
    "build",
    "dist",
    "wheelhouse",
    ".wt-cache",
    "pipeline/sdk",
]
"""Never part of a certification's input: VCS, virtualenvs, caches, run output (as .gitignore has it)."""

Source = Annotated[dagger.Directory, DefaultPath("."), Ignore(IGNORE), Doc("The repository to certify from")]
Repo = Annotated[dagger.Directory, DefaultPath("."), Ignore(IGNORE), Doc("The repository")]
Runtimes = Annotated[
    list[str] | None,
    Doc("The runtimes to certify (names or directories of the source); none: the project's, else reference"),
]
SigningKey = Annotated[
    dagger.Secret | None,
    Doc(
        "ECDSA P-256 PKCS#8 PEM signing the bundle (e.g. env:WT_SIGNING_KEY); without it an ephemeral dev key"
    ),
]
DindImage = Annotated[str, Doc("The Docker engine's image (default: the pinned official docker:dind)")]
Shard = Annotated[str, Doc("The part of the plan to certify, I/N (`wt certify --shard`; docs/ci.md)")]
Shards = Annotated[
    list[dagger.Directory], Doc("The shard bundles `shard` returned, one per part of the plan")
]
Trust = Annotated[
    list[dagger.File] | None,
    Doc("PEM public keys a shard may be signed by; none: the signing key's own public key"),
]
DockerHost = Annotated[
    dagger.Secret | None,
    Doc("DOCKER_HOST of an existing engine to use instead of starting docker:dind (e.g. tcp://host:2375)"),
]


@object_type
class Certification:
    """A certify run: the bundle, the exit code of `wt certify` (0 PASSED, 1 FAILED, 2 HARNESS_INVALID or
    usage) and the verdict's result."""

    bundle: Annotated[dagger.Directory, Doc("The bundle directory (export it)")] = field()
    exit_code: Annotated[int, Doc("wt certify's exit code")] = field()
    result: Annotated[
        str, Doc("PASSED, FAILED or HARNESS_INVALID (ERROR if wt certify published nothing)")
    ] = field()


@object_type
class Windtunnel:
    """Wind Tunnel: certify agent runtimes against a Docker engine (docker:dind, or one you name)."""

    @function(cache="never")
    async def certify(
        self,
        source: Source,
        runtime: Runtimes = None,
        signing_key: SigningKey = None,
        dind_image: DindImage = wiring.DIND_IMAGE,
        docker_host: DockerHost = None,
    ) -> dagger.Directory:
        """Certify and return the bundle, whatever the verdict (export it, then run `gate` on it)."""
        bundle: dagger.Directory = self._runner(
            source, runtime, signing_key, dind_image, docker_host
        ).directory(wiring.BUNDLE_DIR)
        return bundle

    @function(cache="never")
    async def certification(
        self,
        source: Source,
        runtime: Runtimes = None,
        signing_key: SigningKey = None,
        dind_image: DindImage = wiring.DIND_IMAGE,
        docker_host: DockerHost = None,
    ) -> Certification:
        """Certify: the bundle, `wt certify`'s exit code and the verdict's result."""
        ctr = self._runner(source, runtime, signing_key, dind_image, docker_host)
        exit_code = await ctr.exit_code()
        bundle = ctr.directory(wiring.BUNDLE_DIR)
        return Certification(bundle=bundle, exit_code=exit_code, result=await _result(bundle))

    @function(cache="never")
    async def shard(
        self,
        source: Source,
        shard: Shard,
        runtime: Runtimes = None,
        signing_key: SigningKey = None,
        dind_image: DindImage = wiring.DIND_IMAGE,
        docker_host: DockerHost = None,
    ) -> dagger.Directory:
        """Certify one part of the plan (the reference control runs in every part) and return its bundle;
        call it once per part, on as many engines as you like, then `merge` the bundles."""
        bundle: dagger.Directory = self._runner(
            source, runtime, signing_key, dind_image, docker_host, shard=shard
        ).directory(wiring.BUNDLE_DIR)
        return bundle

    @function(cache="never")
    async def merge(
        self,
        source: Source,
        shards: Shards,
        trust: Trust = None,
        signing_key: SigningKey = None,
    ) -> Certification:
        """Merge the shards of one plan into one signed bundle (`wt merge`): the bundle, the exit code (1 when
        a shard is refused: missing, duplicated, extra, foreign or untrusted) and the verdict's result."""
        ctr = builders.merger(source, shards, trust=trust or [], signing_key=signing_key)
        exit_code = await ctr.exit_code()
        bundle = ctr.directory(wiring.BUNDLE_DIR)
        return Certification(bundle=bundle, exit_code=exit_code, result=await _result(bundle))

    @function()
    async def gate(self, bundle: Annotated[dagger.Directory, Doc("A bundle certify returned")]) -> str:
        """Fail unless the bundle's verdict is PASSED: the step after exporting that fails the pipeline."""
        result = await _result(bundle)
        if result != "PASSED":
            raise ValueError(f"certification {result}: see verdict.json and checks.json in the bundle")
        return "PASSED"

    def _runner(
        self,
        source: dagger.Directory,
        runtimes: list[str] | None,
        signing_key: dagger.Secret | None,
        dind_image: str,
        docker_host: dagger.Secret | None,
        *,
        shard: str | None = None,
    ) -> dagger.Container:
        engine = None if docker_host is not None else builders.engine(dind_image)
        return builders.runner(
            source,
            runtimes or [],
            run=uuid.uuid4().hex,
            engine_service=engine,
            docker_host=docker_host,
            signing_key=signing_key,
            shard=shard,
        )

    @function()
    @check
    async def unit_tests(self, source: Repo) -> str:
        """The unit tests (tests/unit, no Docker engine needed)."""
        output: str = await builders.unit_tests(source).stdout()
        return output

    @function()
    @check
    async def lint(self, source: Repo) -> str:
        """ruff check and ruff format --check."""
        output: str = await builders.lint(source).stdout()
        return output

    @function()
    @check
    async def typecheck(self, source: Repo) -> str:
        """mypy --strict over src, tests, noxfile.py and pipeline."""
        output: str = await builders.typecheck(source).stdout()
        return output


async def _result(bundle: dagger.Directory) -> str:
    if "verdict.json" not in await bundle.entries():
        return "ERROR"  # wt certify stopped before publishing; its output is in the Dagger log
    verdict = json.loads(await bundle.file("verdict.json").contents())
    return str(verdict.get("result", "ERROR"))
