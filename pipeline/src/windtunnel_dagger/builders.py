"""Pure, synchronous builders: the container plan (`wt certify --print-plan`, JSON) as lazy Dagger objects.

Nothing here talks to an engine: every function only chains `dag.container()` / `Directory` calls, so
the tests can build the same objects offline and compare them with the plan. The awaits live in main.py.

The plan is Wind Tunnel's own (windtunnel._pipeline.container_plan over windtunnel._drivers.topology,
read through its JSON, since this module imports nothing of windtunnel): the Docker executor runs the
same images, commands, env and aliases, and `wt certify --stack bound` in the runner runs the same stage plan.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping, Sequence
from typing import Any

import dagger
from dagger import dag

BASE_IMAGE = "python:3.12-slim"
"""DESIGN.md's default BASE_IMAGE; Dagger can pull it, where the Docker executor may bootstrap one."""
SOURCE_DIR = "/src"
BUNDLE_DIR = "/wt/bundle"
PIP_VENV = "/opt/wt-pip"
INJECT_LIBRARY = "packages/windtunnel-inject"
"""noxfile.py's INJECT_LIBRARY: the tests import it, so every test venv installs it."""
WHEELHOUSE_DIR = "/wt/wheelhouse"
REQUIREMENTS_FILE = "requirements.txt"
BOUND_ENV = "WT_BOUND_STACKS"
KEY_ENV = "WT_SIGNING_KEY"
RUN_ENV = "WT_DAGGER_RUN"
WINDTUNNEL = "windtunnel"
IMAGE_TAR = "/wt/image.tar"
DIGEST_SCRIPT = (
    "import json, sys, tarfile; "
    "print(json.load(tarfile.open(sys.argv[1]).extractfile('index.json'))['manifests'][0]['digest'])"
)
"""The OCI manifest digest of an exported image: the content address the bundle records for it."""

Plan = Mapping[str, Any]


# -- images ---------------------------------------------------------------------------------------------
def project_dependencies(pyproject: str) -> list[str]:
    """[project].dependencies of pyproject.toml text, normalised as windtunnel's wheelhouse does it
    (comments, blanks and repeats dropped, sorted): the windtunnel image's dependency wheelhouse."""
    dependencies = tomllib.loads(pyproject).get("project", {}).get("dependencies", [])
    kept = {line.split(" #", 1)[0].strip() for line in dependencies if not line.strip().startswith("#")}
    return sorted(line for line in kept if line)


def windtunnel_image_plan(base_image: str, requirements: Sequence[str]) -> dict[str, Any]:
    """The gateway/mocks image, needed before the plan exists (the plan is printed by it): the plan's own
    "windtunnel" entry, without its tag (the offline tests hold the two equal, and certify checks it)."""
    return {
        "name": WINDTUNNEL,
        "dockerfile": "containers/windtunnel.Dockerfile",
        "context": None,
        "build_args": {"BASE_IMAGE": base_image},
        "wheelhouses": [
            {"directory": "wheels", "requirements": list(requirements), "projects": []},
            {
                "directory": "app-wheels",
                "requirements": [],
                "projects": [{"path": ".", "include": ["pyproject.toml", "README.md", "LICENSE", "src"]}],
            },
        ],
        "ref": None,
    }


def wheelhouse(source: dagger.Directory, spec: Plan, base_image: str) -> dagger.Directory:
    """A wheelhouse built with pip in the image's own base image, so every wheel fits its Python: local
    projects first (`pip wheel --no-deps`), then the requirements, and requirements.txt beside the wheels,
    as the Docker executor's wheelhouses are laid out (the Dockerfiles install `-r wheels/requirements.txt`).
    """
    ctr = dag.container().from_(base_image).with_exec(["python3", "-m", "venv", PIP_VENV])
    pip = [f"{PIP_VENV}/bin/pip", "--disable-pip-version-check"]
    listing = f"{WHEELHOUSE_DIR}/{REQUIREMENTS_FILE}"
    ctr = ctr.with_new_file(listing, "".join(f"{line}\n" for line in spec["requirements"]))
    for index, project in enumerate(spec["projects"]):
        where = f"/wt/projects/{index}"
        ctr = ctr.with_directory(where, project_files(source, project)).with_exec(
            [*pip, "wheel", "--no-deps", "--wheel-dir", WHEELHOUSE_DIR, where]
        )
    if spec["requirements"]:
        ctr = ctr.with_exec(
            [*pip, "wheel", "--wheel-dir", WHEELHOUSE_DIR, "--find-links", WHEELHOUSE_DIR, "-r", listing]
        )
    return ctr.directory(WHEELHOUSE_DIR)


def project_files(source: dagger.Directory, project: Plan) -> dagger.Directory:
    """The files of a local project that feed its wheel (LocalProject.include), nothing else."""
    directory = source.directory(project["path"])
    include = [pattern for entry in project["include"] for pattern in (entry, f"{entry}/**")]
    return directory.filter(include=include) if include else directory


def image(source: dagger.Directory, spec: Plan, base_image: str) -> dagger.Container:
    """An image as the Docker executor builds it: Dockerfile at the context root, wheelhouses beside it,
    BASE_IMAGE as a build arg; or, for an image reference, that image."""
    if spec.get("ref"):
        return dag.container().from_(spec["ref"])
    context = source.directory(spec["context"]) if spec["context"] else dag.directory()
    context = context.with_file("Dockerfile", source.file(spec["dockerfile"]))
    for house in spec["wheelhouses"]:
        context = context.with_directory(house["directory"], wheelhouse(source, house, base_image))
    build_args = [dagger.BuildArg(name=key, value=value) for key, value in sorted(spec["build_args"].items())]
    return context.docker_build(dockerfile="Dockerfile", build_args=build_args)


def images(source: dagger.Directory, plan: Plan) -> dict[str, dagger.Container]:
    """Every image of the plan, by name (a build that repeats another is the same build to the engine)."""
    return {spec["name"]: image(source, spec, plan["base_image"]) for spec in plan["images"]}


def digest(windtunnel: dagger.Container, container: dagger.Container) -> dagger.Container:
    """A container whose stdout is `container`'s OCI manifest digest (sha256:...)."""
    tarball = container.as_tarball(forced_compression=dagger.ImageLayerCompression.Gzip)
    return windtunnel.with_mounted_file(IMAGE_TAR, tarball).with_exec(
        ["python3", "-c", DIGEST_SCRIPT, IMAGE_TAR]
    )


# -- services -------------------------------------------------------------------------------------------
def service(
    spec: Plan,
    built: Mapping[str, dagger.Container],
    source: dagger.Directory,
    bindings: Sequence[tuple[str, dagger.Service]] = (),
) -> dagger.Service:
    """One planned service: labels, env, mounts, the aliases it reaches, its port; run as Docker runs it
    (the image's entrypoint, then the plan's args, or the image's CMD when the plan has none)."""
    ctr = built[spec["image"]]
    for key, value in sorted(spec["labels"].items()):
        ctr = ctr.with_label(key, value)
    for key, value in spec["env"].items():
        ctr = ctr.with_env_variable(key, value)
    for mount in spec["mounts"]:
        origin = source if mount["origin"] == "source" else built[WINDTUNNEL].rootfs()
        ctr = ctr.with_mounted_directory(mount["target"], origin.directory(mount["source"]))
    for alias, bound in bindings:
        ctr = ctr.with_service_binding(alias, bound)
    ctr = ctr.with_exposed_port(spec["port"])
    args = None if spec["args"] is None else list(spec["args"])
    return ctr.as_service(args=args, use_entrypoint=True)


def stack_services(
    stack: Plan, built: Mapping[str, dagger.Container], source: dagger.Directory
) -> dict[str, dagger.Service]:
    """A runtime's stack by runner alias: its gateway, its mocks, and one runtime service per profile, each
    runtime bound to the gateway and the mocks under the aliases its env names."""
    gateway = service(stack["gateway"], built, source)
    mocks = [(spec, service(spec, built, source)) for spec in stack["mocks"]]
    reached = [(stack["gateway"]["alias"], gateway), *((spec["alias"], svc) for spec, svc in mocks)]
    services = {
        stack["gateway"]["runner_alias"]: gateway,
        **{spec["runner_alias"]: svc for spec, svc in mocks},
    }
    for spec in stack["runtimes"]:
        services[spec["runner_alias"]] = service(spec, built, source, reached)
    return services


# -- the runner -----------------------------------------------------------------------------------------
def with_source(windtunnel: dagger.Container, source: dagger.Directory) -> dagger.Container:
    return windtunnel.with_directory(SOURCE_DIR, source).with_workdir(SOURCE_DIR)


def plan_container(
    windtunnel: dagger.Container, source: dagger.Directory, runtime: str, base_image: str
) -> dagger.Container:
    """`wt certify --print-plan` in the windtunnel image: its stdout is the container plan."""
    ctr = with_source(windtunnel, source).with_env_variable("WT_BASE_IMAGE", base_image)
    return ctr.with_exec(["wt", "certify", "--print-plan", "--runtime", runtime])


def certify_args(runtime: str) -> list[str]:
    """The stage plan, in the runner, against the bound services: the command `wt certify` users run."""
    return ["wt", "certify", "--stack", "bound", "--runtime", runtime, "--out", BUNDLE_DIR]


def bound_document(plan: Plan, digests: Mapping[str, Mapping[str, str]]) -> str:
    """WT_BOUND_STACKS: the URLs the runner reaches each stack's services at, and its image digests."""
    stacks = {}
    for stack in plan["stacks"]:
        stacks[stack["runtime"]] = {
            "gateway": _url(stack["gateway"]),
            "mocks": {
                f"{m['pack']}/{m['server']}": {"url": m["url"], "admin": _url(m)} for m in stack["mocks"]
            },
            "runtimes": {r["profile"]: _url(r) for r in stack["runtimes"]},
            "images": dict(digests.get(stack["runtime"], {})),
        }
    return json.dumps({"schema": plan["schema"], "stacks": stacks}, sort_keys=True)


def _url(spec: Plan) -> str:
    return f"http://{spec['runner_alias']}:{spec['port']}"


def runner(
    windtunnel: dagger.Container,
    source: dagger.Directory,
    services: Mapping[str, dagger.Service],
    *,
    bound: str,
    runtime: str,
    run: str,
    signing_key: dagger.Secret | None = None,
) -> dagger.Container:
    """The windtunnel image with the repo, every service bound by its runner alias, WT_BOUND_STACKS, the
    signing key as a secret variable (never a file, never in the bundle), running `wt certify --stack
    bound`. Any exit code is accepted, so the bundle can be exported before the gate fails on it.

    `run` is unique per call: an exec whose inputs repeat would otherwise be served from the cache,
    and a certification must run, not replay an old bundle.
    """
    ctr = with_source(windtunnel, source).with_exec(
        ["mkdir", "-p", BUNDLE_DIR]
    )  # exported even if wt fails early
    for alias, bound_service in sorted(services.items()):
        ctr = ctr.with_service_binding(alias, bound_service)
    ctr = ctr.with_env_variable(BOUND_ENV, bound).with_env_variable(RUN_ENV, run)
    if signing_key is not None:
        ctr = ctr.with_secret_variable(KEY_ENV, signing_key)
    return ctr.with_exec(certify_args(runtime), expect=dagger.ReturnType.ANY)


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


def same_windtunnel_image(plan: Plan, spec: Plan) -> bool:
    """Whether the plan's windtunnel image is the one built to print the plan (its tag aside)."""
    planned = next((image for image in plan["images"] if image["name"] == WINDTUNNEL), None)
    return planned is not None and {k: v for k, v in planned.items() if k != "tag"} == spec


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
