"""The one registry of driver kinds (windtunnel._runtimes.registry): every built-in kind is registered there,
a runtime.toml's `[driver] kind` is looked up in it (inferred as it always was when left out), the kinds
that read settings get the environment the caller's Settings read, and no module outside the drivers asks
which kind a runtime has: the verbs ask abilities (windtunnel._runtimes.abilities)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from windtunnel._config import Settings, load_settings
from windtunnel._drivers.container import ContainerRuntime
from windtunnel._drivers.container_plugin import ContainerRuntimePlugin
from windtunnel._drivers.http_inject import HttpInjectRuntime
from windtunnel._drivers.in_memory import InMemoryRuntime
from windtunnel._engine.stack import ContainerStack
from windtunnel._runtimes.abilities import FreshGatewayRuntime, ImagePlugin
from windtunnel._runtimes.manifest import load_manifest
from windtunnel._runtimes.registry import driver_kinds
from windtunnel._runtimes.resolve import resolve_runtime, runtime_manifests

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src" / "windtunnel"
BUILT_IN = {"container", "python", "in_memory", "http_inject"}


def kinded(where: Path, kind: str) -> Path:
    directory = where / kind
    directory.mkdir()
    (directory / "runtime.toml").write_text(f'name = "k-{kind}"\n[driver]\nkind = "{kind}"\n')
    return directory


def test_every_built_in_kind_is_in_the_one_registry() -> None:
    assert set(driver_kinds()) >= BUILT_IN


def test_a_runtime_toml_that_names_no_kind_gets_the_one_it_always_had() -> None:
    manifests = runtime_manifests(REPO)
    assert manifests  # the bundled runtimes and their poison variants
    for manifest in manifests:
        assert manifest.kind is None
        assert manifest.driver_kind == ("python" if manifest.plugin else "container")


def test_a_named_kind_makes_the_plugin_of_that_kind(tmp_path: Path) -> None:
    settings = Settings(root=tmp_path, source=None, env={"WT_INJECT_URL": "http://127.0.0.1:9/"})
    in_memory = resolve_runtime(str(kinded(tmp_path, "in_memory")), settings)
    assert in_memory.driver == "in_memory"
    assert isinstance(in_memory.plugin.build("k", "k", None), InMemoryRuntime)
    http = resolve_runtime(str(kinded(tmp_path, "http_inject")), settings)
    built = http.plugin.build("k", "k", None)  # its URL from the settings' environment, not the process's
    assert isinstance(built, HttpInjectRuntime) and built.url == "http://127.0.0.1:9/"
    assert not isinstance(in_memory.plugin, ImagePlugin) and not isinstance(http.plugin, ImagePlugin)


def test_the_container_kind_has_the_abilities_the_verbs_ask_for() -> None:
    manifest = load_manifest(REPO / "runtimes" / "reference")
    plugin = ContainerRuntimePlugin(manifest)
    assert isinstance(plugin, ImagePlugin) and plugin.prebuilt_ref() is None
    runtime = ContainerRuntime(manifest, ContainerStack(None, windtunnel_image="-"), "-")
    assert isinstance(runtime, FreshGatewayRuntime)  # the tapes stage and `wt tapes record` ask this


def test_an_unknown_kind_names_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(
        Exception, match=r"is not a registered driver kind \(known: .*container.*\)"
    ) as raised:
        resolve_runtime(str(kinded(tmp_path, "nope")), load_settings(tmp_path, env={}))
    assert "\n" not in raised.value.message  # type: ignore[attr-defined]


def _kind_branches(path: Path) -> list[str]:
    """Where a module compares a driver kind by name or tests for a driver's class."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Compare):
            names = {getattr(side, "attr", None) for side in (node.left, *node.comparators)}
            if names & {"driver", "driver_kind"}:
                found.append(f"{path.relative_to(SRC)}:{node.lineno} compares a kind")
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance":
            classes = ast.dump(node.args[1]) if len(node.args) > 1 else ""
            if any(name in classes for name in ("ContainerRuntime", "InMemory", "HttpInject")):
                found.append(f"{path.relative_to(SRC)}:{node.lineno} tests a driver's class")
    return found


def test_no_module_outside_the_drivers_branches_on_a_kind() -> None:
    outside = [
        path
        for path in sorted(SRC.rglob("*.py"))
        if not path.relative_to(SRC).as_posix().startswith(("_drivers/", "_runtimes/registry.py"))
    ]
    assert len(outside) > 100
    assert [where for path in outside for where in _kind_branches(path)] == []
