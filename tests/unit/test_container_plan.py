"""The container plan: what the Docker executor runs, described as data for every executor."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from windtunnel._config import load_settings
from windtunnel._conformance.checks_config import kit_configs
from windtunnel._drivers.bound import load_bound_stacks
from windtunnel._drivers.topology import (
    GATEWAY_URL_FOR_AGENTS,
    MockEndpoint,
    gateway_args,
    mock_args,
    mock_service,
    mock_url,
    pack_mount,
    profile_key,
    runner_alias,
    runtime_env,
)
from windtunnel._drivers.wheelhouse import project_dependencies, read_requirements
from windtunnel._packs.loader import discover_packs, kit_pack
from windtunnel._packs.selection import Selection, select
from windtunnel._pipeline.config import CertifyConfig
from windtunnel._pipeline.container_plan import container_plan, provisions
from windtunnel._pipeline.plan import PLAN
from windtunnel._runtimes.manifest import RuntimeManifest, load_manifest
from windtunnel.errors import ConfigFileError
from windtunnel.spi.agent_runtime import AgentConfig, MockServerPlan, ModelSpec, SamplingConfig

REPO = Path(__file__).resolve().parents[2]
POISON = "reference-poison-reset_noop"
DNS = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")


def _config(*runtimes: str) -> CertifyConfig:
    return CertifyConfig.from_settings(load_settings(cwd=REPO), runtimes=runtimes, out_dir=REPO / "out")


@pytest.fixture(scope="module")
def plan_json() -> dict[str, object]:
    return container_plan(_config(POISON), base_image="wt/base:test").to_json()


def test_commands_are_the_documented_wt_invocations() -> None:
    assert gateway_args("script") == [
        "gateway",
        "serve",
        "--mode",
        "script",
        "--host",
        "0.0.0.0",
        "--port",
        "8000",
    ]
    assert gateway_args("replay", ("--tape", "/t.jsonl"))[-2:] == ["--tape", "/t.jsonl"]
    assert mock_args("support_desk", "billing") == [
        "mcp", "serve", "--pack", "/packs/support-desk", "--server", "billing", "--host", "0.0.0.0", "--port", "8000",
        "--allow-host", "mock-support-desk-billing",
    ]  # fmt: skip
    # The runner's own names for the mock (Dagger's service bindings) are accepted as Host too, once each.
    assert mock_args("support_desk", "billing", ["r-mock", "mock-support-desk-billing"])[-4:] == [
        "--allow-host", "mock-support-desk-billing", "--allow-host", "r-mock",
    ]  # fmt: skip
    assert pack_mount("support_desk") == "/packs/support-desk"
    assert mock_url("support_desk", "billing") == "http://mock-support-desk-billing:8000/mcp"


def test_runtime_env_follows_the_manifest_renames_and_fixed_values(tmp_path: Path) -> None:
    manifest = RuntimeManifest(
        name="m",
        path=tmp_path / "runtime.toml",
        env_rename={"WT_MODEL_BASE_URL": "OPENAI_BASE_URL"},
        env_set={"WT_FAULT": "reset_noop"},
        port=9000,
    )
    config = AgentConfig(
        system_prompt="Be brief.", model=ModelSpec("m-1"), sampling=SamplingConfig(temperature=0.0)
    )
    env = runtime_env(
        manifest, config, [MockEndpoint("notes", "http://mock-x:8000/mcp")], GATEWAY_URL_FOR_AGENTS
    )
    assert env == {
        "OPENAI_BASE_URL": "http://gateway:8000/v1",
        "WT_MODEL_NAME": "m-1",
        "WT_MCP_SERVERS": '[{"name": "notes", "url": "http://mock-x:8000/mcp"}]',
        "WT_INJECT_PORT": "9000",
        "WT_SYSTEM_PROMPT": "Be brief.",
        "WT_SAMPLING": '{"temperature": 0.0}',
        "WT_FAULT": "reset_noop",
    }
    assert profile_key(env) == profile_key(dict(reversed(env.items())))
    assert profile_key(env) != profile_key({**env, "WT_FAULT": "none"})


def test_stage_order_is_the_plan_then_publish(plan_json: dict[str, object]) -> None:
    assert plan_json["stages"] == [*(step.stage.value for step in PLAN), "publish"]


def test_images_name_the_repo_dockerfiles_build_args_and_wheelhouses(plan_json: dict[str, object]) -> None:
    images = {image["name"]: image for image in plan_json["images"]}  # type: ignore[attr-defined]
    assert set(images) == {"windtunnel", "runtime:reference", f"runtime:{POISON}"}
    harness = images["windtunnel"]
    assert (REPO / harness["dockerfile"]).is_file() and harness["context"] is None
    assert harness["build_args"] == {"BASE_IMAGE": "wt/base:test"}
    wheels, app = harness["wheelhouses"]
    assert (wheels["directory"], wheels["requirements"]) == ("wheels", list(project_dependencies(REPO)))
    assert app["directory"] == "app-wheels" and app["projects"] == [
        {"path": ".", "include": ["pyproject.toml", "README.md", "LICENSE", "src"]}
    ]
    library = REPO / "packages" / "windtunnel-inject"
    for name in ("runtime:reference", f"runtime:{POISON}"):  # the poison builds the reference image
        image = images[name]
        assert image["dockerfile"] == "containers/python-runtime.Dockerfile"
        assert image["context"] == "runtimes/reference"
        assert image["build_args"] == {"RUNTIME_PACKAGE": "reference_agent", "BASE_IMAGE": "wt/base:test"}
        wheels, packages = image["wheelhouses"]
        # The runtime's requirements and the library's dependencies; the library itself as a local project.
        own = read_requirements(REPO / "runtimes/reference/requirements.txt")
        assert set(wheels["requirements"]) == {*own, *project_dependencies(library)}
        assert packages == {
            "directory": "package-wheels",
            "requirements": [],
            "projects": [{"path": "packages/windtunnel-inject", "include": []}],
        }


def test_stacks_have_the_docker_aliases_and_commands_and_unique_runner_names(
    plan_json: dict[str, object],
) -> None:
    stacks = plan_json["stacks"]
    assert [stack["runtime"] for stack in stacks] == ["reference", POISON]  # type: ignore[attr-defined]
    names: list[str] = []
    for stack in stacks:  # type: ignore[attr-defined]
        assert stack["gateway"]["alias"] == "gateway" and stack["gateway"]["args"] == gateway_args("script")
        # Contract C defines no health route: a runtime is up when it answers HTTP at all, while the
        # gateway and the mocks must answer their /wt/health with 200.
        assert stack["gateway"]["ready_any_answer"] is False
        assert all(not mock["ready_any_answer"] for mock in stack["mocks"])
        assert all(runtime["ready_any_answer"] for runtime in stack["runtimes"])
        for mock in stack["mocks"]:
            assert mock["args"] == mock_args(mock["pack"], mock["server"], [mock["runner_alias"]])
            (mount,) = mock["mounts"]
            assert mount["target"] == pack_mount(mock["pack"])
            assert mount["origin"] == "source" and (REPO / mount["source"] / "pack.py").is_file()
        for runtime in stack["runtimes"]:
            assert runtime["args"] is None and runtime["image"] == f"runtime:{stack['runtime']}"
            assert runtime["profile"] == profile_key(runtime["env"])
            if stack["runtime"] == POISON:
                assert runtime["env"]["WT_FAULT"] == "reset_noop"
        names += [s["runner_alias"] for s in (stack["gateway"], *stack["mocks"], *stack["runtimes"])]
    assert len(names) == len(set(names)) and all(DNS.match(name) for name in names)
    assert runner_alias("reference", "gateway") == "reference-gateway"


def test_every_provision_of_the_stages_has_a_profile() -> None:
    """The kit's mocks, no mocks, every config the kit provisions with, every pack's reference-case setup."""
    manifest = load_manifest(REPO / "runtimes" / "reference")
    selected = select(
        discover_packs(("scenarios/support_desk", "scenarios/artifacts"), base=REPO), Selection()
    )
    calls = provisions(manifest, selected)
    kit = [(p.pack, p.server) for p in kit_pack().plans()]
    assert [(c, [(p.pack, p.server) for p in plans]) for c, plans in calls[:2]] == [
        (AgentConfig(), []),
        (AgentConfig(), kit),
    ]
    configs = kit_configs(manifest.supported)
    assert len(configs) >= 2  # the sampling check's two configs, at least
    assert [(c, [(p.pack, p.server) for p in plans]) for c, plans in calls[2 : 2 + len(configs)]] == [
        (config, kit) for config in configs
    ]
    packs = {item.pack.name for item in selected if item.scenario.reference_cases}
    assert {plans[0].pack for _, plans in calls[2 + len(configs) :]} == packs
    plan = container_plan(_config(), base_image="b").stacks[0]
    keys = {runtime.profile for runtime in plan.runtimes}
    for config, plans in calls:
        mcps = [MockEndpoint(p.server, mock_url(p.pack, p.server)) for p in plans]
        assert profile_key(runtime_env(manifest, config, mcps, GATEWAY_URL_FOR_AGENTS)) in keys


def test_the_bound_document_is_what_the_bound_driver_reads() -> None:
    plan = container_plan(_config(), base_image="b")
    text = json.dumps(plan.bound_document({"reference": {"windtunnel": "sha256:aa"}}))
    stacks = load_bound_stacks(text)
    stack = stacks["reference"]
    assert stack.gateway == "http://reference-gateway:8000" and stack.images == {"windtunnel": "sha256:aa"}
    assert set(stack.runtimes) == {runtime.profile for runtime in plan.stacks[0].runtimes}
    billing = stack.mocks["support_desk/billing"]
    assert (billing.url, billing.admin) == (
        mock_url("support_desk", "billing"),
        "http://reference-mock-support-desk-billing:8000",
    )


def test_a_pack_outside_the_repository_cannot_be_planned(tmp_path: Path) -> None:
    plan = MockServerPlan(pack="elsewhere", server="s", factory=lambda: None, pack_root=tmp_path)  # type: ignore[arg-type,return-value]
    with pytest.raises(ConfigFileError, match="outside the repository"):
        mock_service("reference", plan, REPO)


def test_a_pack_shipped_inside_windtunnel_mounts_from_the_image(tmp_path: Path) -> None:
    """Run from an installed wheel (the Dagger runner), the kit's pack is in the image, not the repo."""
    (plan,) = kit_pack().plans()
    (mount,) = mock_service("reference", plan, tmp_path).mounts
    assert mount.origin == "image" and Path(mount.source) == plan.pack_root
