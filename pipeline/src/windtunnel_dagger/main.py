"""Wind Tunnel's Dagger module: `dagger call certify` runs the stage plan with its containers as services.

The flow (every step but the awaits is a pure builder in builders.py):
1. build the windtunnel image (gateway, mocks, runner) from the repo's Dockerfile and wheels;
2. run `wt certify --print-plan` in it: the container plan the Docker executor runs too;
3. build the plan's images, start the gateway, the mocks and one runtime service per env profile,
   bound by hostname;
4. run `wt certify --stack bound` in a runner container bound to every service: the same stage plan;
5. return the bundle, whatever the verdict: export it, then let the gate read verdict.json.

See docs/dagger.md for running it, and what differs from the Docker executor (NOT_MEASURED checks).
"""

import asyncio
import json
import uuid
from typing import Annotated

import dagger
from dagger import DefaultPath, Doc, Ignore

from . import builders
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
Runtime = Annotated[str, Doc("The runtime to certify (runtimes/**/runtime.toml name); reference always runs")]
SigningKey = Annotated[
    dagger.Secret | None,
    Doc(
        "ECDSA P-256 PKCS#8 PEM signing the bundle (e.g. env:WT_SIGNING_KEY); without it an ephemeral dev key"
    ),
]
BaseImage = Annotated[str, Doc("BASE_IMAGE of every image (a python3 image)")]


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
    """Wind Tunnel: certify agent runtimes with their model gateway and MCP mocks as Dagger services."""

    @function(cache="never")
    async def certify(
        self,
        source: Source,
        runtime: Runtime = "reference",
        signing_key: SigningKey = None,
        base_image: BaseImage = builders.BASE_IMAGE,
    ) -> dagger.Directory:
        """Certify a runtime and return the bundle (kept when checks fail: export it, then gate on
        verdict.json, or use `certification` for the exit code)."""
        done = await self.certification(source, runtime, signing_key, base_image)
        bundle: dagger.Directory = done.bundle
        return bundle

    @function(cache="never")
    async def certification(
        self,
        source: Source,
        runtime: Runtime = "reference",
        signing_key: SigningKey = None,
        base_image: BaseImage = builders.BASE_IMAGE,
    ) -> Certification:
        """Certify a runtime: the bundle, `wt certify`'s exit code and the verdict's result."""
        requirements = builders.project_dependencies(await source.file("pyproject.toml").contents())
        spec = builders.windtunnel_image_plan(base_image, requirements)
        printer = builders.plan_container(
            builders.image(source, spec, base_image), source, runtime, base_image
        )
        plan = json.loads(await printer.stdout())
        if not builders.same_windtunnel_image(plan, spec):
            raise ValueError(
                "the container plan's windtunnel image differs from the one this module builds; "
                "update builders.windtunnel_image_plan() to windtunnel._drivers.topology's"
            )
        built = builders.images(source, plan)
        services = {
            alias: service
            for stack in plan["stacks"]
            for alias, service in builders.stack_services(stack, built, source).items()
        }
        bound = builders.bound_document(plan, await _digests(plan, built))
        ctr = builders.runner(
            built[builders.WINDTUNNEL],
            source,
            services,
            bound=bound,
            runtime=runtime,
            run=uuid.uuid4().hex,
            signing_key=signing_key,
        )
        exit_code = await ctr.exit_code()
        bundle = ctr.directory(builders.BUNDLE_DIR)
        return Certification(bundle=bundle, exit_code=exit_code, result=await _result(bundle))

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


async def _digests(plan: builders.Plan, built: dict[str, dagger.Container]) -> dict[str, dict[str, str]]:
    """Each stack's image digests, as the Docker executor records them ("windtunnel", "runtime:<name>")."""
    names = list(built)
    windtunnel = built[builders.WINDTUNNEL]
    found = await asyncio.gather(*(builders.digest(windtunnel, built[name]).stdout() for name in names))
    digests = {name: value.strip() for name, value in zip(names, found, strict=True)}
    return {
        stack["runtime"]: {
            name: digests[name]
            for name in (builders.WINDTUNNEL, f"runtime:{stack['runtime']}")
            if name in digests
        }
        for stack in plan["stacks"]
    }


async def _result(bundle: dagger.Directory) -> str:
    if "verdict.json" not in await bundle.entries():
        return "ERROR"  # wt certify stopped before publishing; its output is in the Dagger log
    verdict = json.loads(await bundle.file("verdict.json").contents())
    return str(verdict.get("result", "ERROR"))
