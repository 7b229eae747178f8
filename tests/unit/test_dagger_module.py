"""The Dagger module (pipeline/), offline: it imports and registers without an engine, and the containers it
would build and start are the container plan's, which is what the Docker executor runs.

No engine is faked: the module's builders only chain lazy SDK calls, and these tests read the chains
(`_ctx.selections`, the query each object would send) without ever sending one. Skipped where dagger-io
is not installed (pipeline/requirements-test.txt).
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
# The engine names the main object in this variable before the SDK is imported; so do the tests.
os.environ.setdefault("DAGGER_MAIN_OBJECT", "Windtunnel")
dagger: Any = pytest.importorskip(
    "dagger", reason="dagger-io is not installed (pipeline/requirements-test.txt)"
)

from dagger.client.base import Type  # noqa: E402
from dagger.mod import default_module  # noqa: E402

from windtunnel._config import load_settings  # noqa: E402
from windtunnel._drivers.bound import load_bound_stacks  # noqa: E402
from windtunnel._drivers.topology import (  # noqa: E402
    GATEWAY_ALIAS,
    GATEWAY_URL_FOR_AGENTS,
    MockEndpoint,
    gateway_args,
    mock_alias,
    mock_args,
    mock_url,
    pack_mount,
    profile_key,
    runtime_env,
)
from windtunnel._drivers.wheelhouse import project_dependencies  # noqa: E402
from windtunnel._packs.loader import discover_packs  # noqa: E402
from windtunnel._packs.selection import Selection, select  # noqa: E402
from windtunnel._pipeline.config import CertifyConfig  # noqa: E402
from windtunnel._pipeline.container_plan import container_plan, provisions  # noqa: E402
from windtunnel._pipeline.plan import PLAN  # noqa: E402
from windtunnel._runtimes.manifest import load_manifest  # noqa: E402
from windtunnel._runtimes.resolve import find_runtime_dir  # noqa: E402

POISON = "reference-poison-reset_noop"
BASE = "python:3.12-slim"
Calls = list[tuple[str, dict[str, Any]]]


def calls(obj: Any) -> Calls:
    """The lazy query chain of a Dagger object: (field, arguments), nested objects as their own chains."""

    def value(item: Any) -> Any:
        if isinstance(item, Type):
            return calls(item)
        if isinstance(item, list):
            return [value(x) for x in item]
        return item

    return [(f.name, {k: value(v) for k, v in f.args.items()}) for f in obj._ctx.selections]


def args_of(chain: Calls, name: str) -> list[dict[str, Any]]:
    return [args for field, args in chain if field == name]


@pytest.fixture(scope="module")
def module() -> Iterator[Any]:
    sys.path.insert(0, str(REPO / "pipeline" / "src"))
    try:
        yield importlib.import_module("windtunnel_dagger")
    finally:
        sys.path.remove(str(REPO / "pipeline" / "src"))


@pytest.fixture(scope="module")
def builders(module: Any) -> Any:
    return importlib.import_module("windtunnel_dagger.builders")


@pytest.fixture(scope="module")
def plan() -> dict[str, Any]:
    """What the module reads: `wt certify --print-plan`, as the windtunnel image prints it."""
    done = subprocess.run(
        [sys.executable, "-m", "windtunnel._cli.main", "certify", "--print-plan", "--runtime", POISON],
        cwd=REPO,
        env={**os.environ, "WT_BASE_IMAGE": BASE},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    printed: dict[str, Any] = json.loads(done.stdout)
    return printed


def _config() -> CertifyConfig:
    return CertifyConfig.from_settings(load_settings(cwd=REPO), runtimes=(POISON,), out_dir=REPO / "out")


def test_the_printed_plan_is_the_container_plan(plan: dict[str, Any]) -> None:
    assert plan == container_plan(_config(), base_image=BASE).to_json()


# -- registration ---------------------------------------------------------------------------------------
def test_the_module_registers_certify_and_the_checks_with_their_arguments(module: Any) -> None:
    main = default_module()._objects["Windtunnel"]
    assert main.cls is module.Windtunnel
    functions = main.functions
    assert {"certify", "certification", "unit_tests", "lint", "typecheck"} <= set(functions)
    certify = functions["certify"]
    assert certify.return_type is dagger.Directory and not certify.check
    params = certify.parameters
    assert list(params) == ["source", "runtime", "signing_key", "base_image"]
    source = params["source"]
    assert source.resolved_type is dagger.Directory and source.default_path == "."
    assert {".git", "**/.venv", "runs", "out"} <= set(source.ignore)
    assert (
        params["runtime"].resolved_type is str and json.loads(params["runtime"].default_value) == "reference"
    )
    signing = params["signing_key"]
    assert signing.is_nullable and signing.is_optional and json.loads(signing.default_value) is None
    assert functions["certification"].return_type is module.Certification
    for name in ("unit_tests", "lint", "typecheck"):
        check = functions[name]
        assert check.check and check.return_type is str
        assert all(p.is_optional for p in check.parameters.values())  # dagger check passes no arguments


def test_the_registration_the_engine_would_send(module: Any) -> None:
    """The module's type definitions, built as the engine asks for them, stopped before they are sent."""
    import anyio

    async def typedefs() -> Any:
        original = dagger.Module.id

        async def unsent(self: Any) -> Any:
            return self

        dagger.Module.id = unsent
        try:
            return await default_module()._typedefs()
        finally:
            dagger.Module.id = original

    chain = calls(anyio.run(typedefs))
    objects = {args["object"][1][1]["name"]: args["object"] for args in args_of(chain, "withObject")}
    assert set(objects) == {"Windtunnel", "Certification"}
    functions = {
        f["function"][0][1]["name"]: f["function"] for f in args_of(objects["Windtunnel"], "withFunction")
    }
    assert args_of(functions["certify"], "withCachePolicy") == [{"policy": "Never"}]
    assert args_of(functions["certification"], "withCachePolicy") == [{"policy": "Never"}]
    assert {name for name, fn in functions.items() if args_of(fn, "withCheck")} == {
        "unit_tests",
        "lint",
        "typecheck",
    }
    source = next(a for a in args_of(functions["certify"], "withArg") if a["name"] == "source")
    assert source["defaultPath"] == "." and ".git" in source["ignore"]
    fields = {f["name"] for f in args_of(objects["Certification"], "withField")}
    assert fields == {"bundle", "exit_code", "result"}


# -- images ---------------------------------------------------------------------------------------------
def test_the_windtunnel_image_built_before_the_plan_is_the_plans(builders: Any, plan: dict[str, Any]) -> None:
    requirements = builders.project_dependencies((REPO / "pyproject.toml").read_text())
    assert requirements == list(project_dependencies(REPO))
    spec = builders.windtunnel_image_plan(BASE, requirements)
    assert builders.same_windtunnel_image(plan, spec)
    planned = next(image for image in plan["images"] if image["name"] == "windtunnel")
    source = dagger.dag.directory()
    assert calls(builders.image(source, spec, BASE)) == calls(builders.image(source, planned, BASE))


def test_images_build_the_plans_dockerfiles_with_its_build_args_and_wheelhouses(
    builders: Any, plan: dict[str, Any]
) -> None:
    source = dagger.dag.directory()
    for spec in plan["images"]:
        chain = calls(builders.image(source, spec, BASE))
        expected = sorted({**spec["build_args"], "BASE_IMAGE": BASE}.items())
        assert chain[-1] == ("dockerBuild", {"buildArgs": [{"name": k, "value": v} for k, v in expected]})
        (dockerfile,) = args_of(chain, "withFile")
        assert dockerfile["path"] == "Dockerfile"
        assert dockerfile["source"] == [("directory", {}), ("file", {"path": spec["dockerfile"]})]
        context = (
            [("directory", {}), ("directory", {"path": spec["context"]})]
            if spec["context"]
            else [("directory", {})]
        )
        assert chain[: len(context)] == context
        houses = {args["path"]: args["source"] for args in args_of(chain, "withDirectory")}
        assert list(houses) == [house["directory"] for house in spec["wheelhouses"]]
        for house in spec["wheelhouses"]:
            built = houses[house["directory"]]
            assert ("from", {"address": BASE}) in built  # wheels made by the image's own Python
            (listing,) = args_of(built, "withNewFile")
            assert listing["contents"] == "".join(f"{line}\n" for line in house["requirements"])
            wheels = [a["args"] for a in args_of(built, "withExec") if "wheel" in a["args"]]
            assert len(wheels) == len(house["projects"]) + (1 if house["requirements"] else 0)


def test_the_check_containers_install_the_contract_c_library_as_nox_does(builders: Any) -> None:
    # The unit tests import windtunnel_inject: without it the unit-tests check could not even collect.
    assert (REPO / builders.INJECT_LIBRARY / "pyproject.toml").is_file()
    assert f'INJECT_LIBRARY = "{builders.INJECT_LIBRARY}"' in (REPO / "noxfile.py").read_text()
    for container in (
        builders.unit_tests(dagger.dag.directory()),
        builders.typecheck(dagger.dag.directory()),
    ):
        (install, *_) = [a["args"] for a in args_of(calls(container), "withExec") if "install" in a["args"]]
        assert install[-2:] == ["-e", builders.INJECT_LIBRARY]


# -- services -------------------------------------------------------------------------------------------
def _images(plan: dict[str, Any]) -> dict[str, Any]:
    """Stand-ins for the built images (lazy `from` chains), so a service's chain is its own calls only."""
    return {spec["name"]: dagger.dag.container().from_(f"image-of:{spec['name']}") for spec in plan["images"]}


def _env(chain: Calls) -> dict[str, str]:
    return {args["name"]: args["value"] for args in args_of(chain, "withEnvVariable")}


def test_gateway_and_mocks_run_what_the_docker_executor_runs(builders: Any, plan: dict[str, Any]) -> None:
    source, built = dagger.dag.directory(), _images(plan)
    for stack in plan["stacks"]:
        gateway = calls(builders.service(stack["gateway"], built, source))
        assert gateway[:2] == [("container", {}), ("from", {"address": "image-of:windtunnel"})]
        assert gateway[-2:] == [
            ("withExposedPort", {"port": 8000}),
            ("asService", {"args": gateway_args("script"), "useEntrypoint": True}),
        ]
        assert args_of(gateway, "withLabel") == [
            {"name": "windtunnel.role", "value": "gateway"},
            {"name": "windtunnel.stack", "value": stack["runtime"]},
        ]
        for spec in stack["mocks"]:
            mock = calls(builders.service(spec, built, source))
            assert spec["alias"] == mock_alias(spec["pack"], spec["server"])
            assert args_of(mock, "asService") == [
                {
                    "args": mock_args(spec["pack"], spec["server"], [spec["runner_alias"]]),
                    "useEntrypoint": True,
                }
            ]
            (mount,) = args_of(mock, "withMountedDirectory")
            assert mount["path"] == pack_mount(spec["pack"])
            assert mount["source"] == [
                ("directory", {}),
                ("directory", {"path": spec["mounts"][0]["source"]}),
            ]


def test_runtimes_run_with_the_env_the_docker_driver_gives_each_provision(
    builders: Any, plan: dict[str, Any]
) -> None:
    source, built = dagger.dag.directory(), _images(plan)
    selected = select(discover_packs(_config().pack_refs, base=REPO), Selection())
    for stack in plan["stacks"]:
        directory = find_runtime_dir(stack["runtime"], [REPO])
        assert directory is not None
        manifest = load_manifest(directory)
        expected = {}
        for config, mocks in provisions(manifest, selected):
            mcps = [MockEndpoint(m.server, mock_url(m.pack, m.server)) for m in mocks]
            env = runtime_env(manifest, config, mcps, GATEWAY_URL_FOR_AGENTS)  # what ContainerRuntime passes
            expected[profile_key(env)] = env
        services = builders.stack_services(stack, built, source)
        runtimes = {spec["profile"]: calls(services[spec["runner_alias"]]) for spec in stack["runtimes"]}
        assert {key: _env(chain) for key, chain in runtimes.items()} == expected
        aliases = {GATEWAY_ALIAS, *(m["alias"] for m in stack["mocks"])}
        for chain in runtimes.values():
            assert chain[1] == ("from", {"address": f"image-of:runtime:{stack['runtime']}"})
            assert {b["alias"] for b in args_of(chain, "withServiceBinding")} == aliases
            assert chain[-1] == (
                "asService",
                {"useEntrypoint": True},
            )  # the image's own CMD, as Docker runs it
            assert ("withExposedPort", {"port": manifest.port}) in chain


# -- the runner and the stage order ---------------------------------------------------------------------
def test_the_runner_runs_the_stage_plan_against_every_service(builders: Any, plan: dict[str, Any]) -> None:
    assert plan["stages"] == [*(step.stage.value for step in PLAN), "publish"]
    source, built = dagger.dag.directory(), _images(plan)
    services = {
        a: s for stack in plan["stacks"] for a, s in builders.stack_services(stack, built, source).items()
    }
    digests = {"reference": {"windtunnel": "sha256:1", "runtime:reference": "sha256:2"}}
    bound = builders.bound_document(plan, digests)
    assert json.loads(bound) == container_plan(_config(), base_image=BASE).bound_document(digests)
    assert set(load_bound_stacks(bound)) == {"reference", POISON}
    key = dagger.dag.set_secret("signing-key", "not a real key")
    chain = calls(
        builders.runner(
            built["windtunnel"], source, services, bound=bound, runtime=POISON, run="r1", signing_key=key
        )
    )
    assert chain[-1] == (
        "withExec",
        {
            "args": ["wt", "certify", "--stack", "bound", "--runtime", POISON, "--out", "/wt/bundle"],
            "expect": "ANY",
        },
    )
    assert {b["alias"] for b in args_of(chain, "withServiceBinding")} == set(services)
    assert _env(chain) == {"WT_BOUND_STACKS": bound, "WT_DAGGER_RUN": "r1"}
    (secret,) = args_of(chain, "withSecretVariable")
    assert secret["name"] == "WT_SIGNING_KEY"
    unsigned = calls(
        builders.runner(built["windtunnel"], source, services, bound=bound, runtime=POISON, run="r2")
    )
    assert not args_of(unsigned, "withSecretVariable")


def test_wt_certify_accepts_the_runners_command(builders: Any, tmp_path: Path) -> None:
    """The real CLI parses it and asks for the bound services (it would start them itself otherwise)."""
    command = builders.certify_args("reference")
    env = {k: v for k, v in os.environ.items() if k != "WT_BOUND_STACKS"}
    done = subprocess.run(
        [sys.executable, "-m", "windtunnel._cli.main", *command[1:-1], str(tmp_path / "bundle")],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2 and "--stack bound needs WT_BOUND_STACKS" in done.stderr, done.stderr
