"""The Dagger module (pipeline/), offline: it imports and registers without an engine, and the engine service
and runner container it would start are wiring.py's, which the offline simulation (noxfile.py's
`certify_in_container`, tests/dind/simulation.py) starts with docker-py.

No engine is faked: the module's builders only chain lazy SDK calls, and these tests read the chains
(`_ctx.selections`, the query each object would send) without ever sending one. Skipped where dagger-io
is not installed (pipeline/requirements-test.txt).
"""

from __future__ import annotations

import importlib
import json
import os
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


# -- registration ---------------------------------------------------------------------------------------
def test_the_module_registers_certify_and_the_checks_with_their_arguments(module: Any) -> None:
    main = default_module()._objects["Windtunnel"]
    assert main.cls is module.Windtunnel
    functions = main.functions
    assert {"certify", "certification", "gate", "unit_tests", "lint", "typecheck"} <= set(functions)
    certify = functions["certify"]
    assert certify.return_type is dagger.Directory and not certify.check
    params = certify.parameters
    assert list(params) == ["source", "runtime", "signing_key", "dind_image", "docker_host"]
    source = params["source"]
    assert source.resolved_type is dagger.Directory and source.default_path == "."
    assert {".git", "**/.venv", "runs", "out"} <= set(source.ignore)
    assert params["runtime"].is_optional and json.loads(params["runtime"].default_value) is None
    for secret in ("signing_key", "docker_host"):
        assert params[secret].is_nullable and params[secret].is_optional
        assert json.loads(params[secret].default_value) is None
    assert json.loads(params["dind_image"].default_value) == module.wiring.DIND_IMAGE
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


# -- the wiring -----------------------------------------------------------------------------------------
def _env(chain: Calls) -> dict[str, str]:
    return {args["name"]: args["value"] for args in args_of(chain, "withEnvVariable")}


def _caches(chain: Calls) -> dict[str, str]:
    return {a["path"]: a["cache"][0][1]["key"] for a in args_of(chain, "withMountedCache")}


def test_the_engine_is_dind_with_root_capabilities_its_args_env_and_state_cache(
    module: Any, builders: Any
) -> None:
    wiring = module.wiring
    chain = calls(builders.engine())
    assert chain[1] == ("from", {"address": wiring.DIND_IMAGE})
    assert _env(chain) == wiring.ENGINE_ENV and _caches(chain) == wiring.ENGINE_MOUNTS
    assert args_of(chain, "withExposedPort") == [{"port": wiring.ENGINE_PORT}]
    (service,) = args_of(chain, "asService")
    assert service == {
        "args": list(wiring.ENGINE_ARGS),
        "useEntrypoint": True,
        "insecureRootCapabilities": True,
    }
    assert calls(builders.engine("mirror.example/docker:dind"))[1][1] == {
        "address": "mirror.example/docker:dind"
    }


def _runner(builders: Any, **kwargs: Any) -> Calls:
    return calls(builders.runner(dagger.dag.directory(), ["reference", "runtimes/x"], run="r1", **kwargs))


def test_the_runner_is_bound_to_the_engine_and_runs_the_wirings_command(module: Any, builders: Any) -> None:
    wiring = module.wiring
    chain = _runner(builders, engine_service=builders.engine())
    assert _env(chain) == wiring.runner_env("r1") and _caches(chain) == wiring.RUNNER_MOUNTS
    (binding,) = args_of(chain, "withServiceBinding")
    assert binding["alias"] == wiring.ENGINE_ALIAS
    assert calls_of(binding["service"]) == calls(builders.engine())
    *_, last = args_of(chain, "withExec")
    assert last == {"args": wiring.certify_command(["reference", "runtimes/x"]), "expect": "ANY"}
    assert last["args"][:2] == ["wt", "certify"] and last["args"][-2:] == ["--out", wiring.BUNDLE_DIR]
    assert ("withWorkdir", {"path": wiring.SOURCE_DIR}) in chain
    assert not args_of(chain, "withSecretVariable")  # no key given: wt signs with a dev key


def calls_of(service: Any) -> Calls:
    return service if isinstance(service, list) else calls(service)


def test_an_existing_engine_and_the_key_are_secrets_and_no_dind_is_started(builders: Any) -> None:
    host, key = dagger.dag.set_secret("h", "tcp://x:2375"), dagger.dag.set_secret("k", "pem")
    chain = _runner(builders, engine_service=None, docker_host=host, signing_key=key)
    assert not args_of(chain, "withServiceBinding")
    assert [a["name"] for a in args_of(chain, "withSecretVariable")] == ["DOCKER_HOST", "WT_SIGNING_KEY"]
    assert "DOCKER_HOST" not in _env(chain)  # the secret, never a plain variable


def test_the_offline_simulation_starts_what_the_module_wires(
    module: Any, builders: Any, tmp_path: Path
) -> None:
    """One wiring: the simulation's docker-py containers carry the module's args, env, mounts and command."""
    from tests.dind import simulation

    wiring = module.wiring
    assert simulation.wiring().__dict__.keys() >= {"ENGINE_ARGS", "runner_env", "certify_command"}
    for privileged in (True, False):
        engine = simulation.engine_spec("img", "net", "state", privileged=privileged)
        chain = calls(builders.engine())
        (service,) = args_of(chain, "asService")
        assert engine["command"] == service["args"] == list(wiring.ENGINE_ARGS)
        assert engine["environment"] == _env(chain) == wiring.ENGINE_ENV
        assert engine["networking_config_aliases"] == [wiring.ENGINE_ALIAS]
        assert f"{wiring.ENGINE_PORT}/tcp" in engine["ports"]
        state = {v["bind"]: k for k, v in engine["volumes"].items() if v["bind"] != "/sys/fs/cgroup"}
        assert set(state) == set(_caches(chain)) == set(wiring.ENGINE_MOUNTS)
        assert engine.get("privileged", False) is privileged
    runner = simulation.runner_spec(
        "img", "net", run="r1", runtimes=["reference", "runtimes/x"], cache_dir=tmp_path, key_pem="pem"
    )
    chain = _runner(builders, engine_service=builders.engine(), signing_key=dagger.dag.set_secret("k", "pem"))
    *_, last = args_of(chain, "withExec")
    assert runner["command"] == last["args"]
    assert (
        runner["working_dir"] == wiring.SOURCE_DIR and ("withWorkdir", {"path": wiring.SOURCE_DIR}) in chain
    )
    secrets = [a["name"] for a in args_of(chain, "withSecretVariable")]
    assert runner["environment"] == {**_env(chain), **dict.fromkeys(secrets, "pem")}
    assert {v["bind"] for v in runner["volumes"].values()} == set(_caches(chain)) == set(wiring.RUNNER_MOUNTS)


# -- sharded certification: `shard` on many engines, then `merge` -----------------------------------------
def test_shard_and_merge_are_registered_with_their_arguments(module: Any) -> None:
    functions = default_module()._objects["Windtunnel"].functions
    shard, merge = functions["shard"], functions["merge"]
    assert shard.return_type is dagger.Directory and not shard.check
    assert list(shard.parameters) == [
        "source",
        "shard",
        "runtime",
        "signing_key",
        "dind_image",
        "docker_host",
    ]
    assert not shard.parameters["shard"].is_optional  # every part names itself: I/N
    assert merge.return_type is module.Certification and not merge.check
    assert list(merge.parameters) == ["source", "shards", "trust", "signing_key"]
    assert not merge.parameters["shards"].is_optional
    assert (
        merge.parameters["trust"].is_optional and json.loads(merge.parameters["trust"].default_value) is None
    )


def test_a_shard_runs_certify_of_its_part_on_its_engine(module: Any, builders: Any) -> None:
    wiring = module.wiring
    chain = calls(
        builders.runner(
            dagger.dag.directory(),
            ["minimal", "reference"],
            run="r1",
            engine_service=builders.engine(),
            shard="2/3",
        )
    )
    *_, last = args_of(chain, "withExec")
    assert last == {"args": wiring.certify_command(["minimal", "reference"], "2/3"), "expect": "ANY"}
    assert last["args"][-4:] == ["--shard", "2/3", "--out", wiring.BUNDLE_DIR]
    assert args_of(chain, "withServiceBinding")  # each shard certifies against its own engine


def test_merge_mounts_each_shard_and_trusted_key_and_needs_no_engine(module: Any, builders: Any) -> None:
    wiring = module.wiring
    shards = [dagger.dag.directory(), dagger.dag.directory()]
    trust = [dagger.dag.directory().file("signer.pub.pem")]
    chain = calls(
        builders.merger(
            dagger.dag.directory(), shards, trust=trust, signing_key=dagger.dag.set_secret("k", "p")
        )
    )
    mounted = [a["path"] for a in args_of(chain, "withDirectory")]
    assert mounted == [wiring.SOURCE_DIR, *wiring.shard_dirs(2)]
    assert [a["path"] for a in args_of(chain, "withFile")] == wiring.trust_files(1)
    assert [a["name"] for a in args_of(chain, "withSecretVariable")] == [wiring.KEY_ENV]
    assert not args_of(chain, "withServiceBinding")
    *_, last = args_of(chain, "withExec")
    assert last == {"args": wiring.merge_command(2, 1), "expect": "ANY"}


def test_the_merge_command_merges_real_shards(module: Any, tmp_path: Path) -> None:
    """The wiring's `wt merge` line, run here with its container paths under tmp_path, on synthetic shards
    signed by the key it trusts: a bundle that `wt verify --require-passed` accepts."""
    import shutil
    import subprocess

    from tests.unit.shard_bundles import make_shards, private_key_pem, provided_signer

    wiring = module.wiring
    pem = private_key_pem()
    signer = provided_signer(pem)
    for index, shard in enumerate(make_shards(tmp_path / "made", 2, signer), start=1):
        shutil.copytree(shard, f"{tmp_path}{wiring.SHARDS_DIR}/{index}")
    (trusted,) = (Path(f"{tmp_path}{path}") for path in wiring.trust_files(1))
    trusted.parent.mkdir(parents=True)
    trusted.write_bytes(signer.public_pem)
    key = tmp_path / "signing.pem"
    key.write_bytes(pem)
    command = [arg.replace("/wt/", f"{tmp_path}/wt/") for arg in wiring.merge_command(2, 1)]
    wt = [sys.executable, "-m", "windtunnel._cli.main", *command[1:], "--key", str(key)]
    done = subprocess.run(wt, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    gate = [sys.executable, "-m", "windtunnel._cli.main", "verify", f"{tmp_path}{wiring.BUNDLE_DIR}"]
    verified = subprocess.run(
        [*gate, "--key", str(trusted), "--require-passed"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert verified.returncode == 0, verified.stdout
