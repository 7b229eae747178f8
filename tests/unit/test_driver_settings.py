"""Driver settings: read once from the environment the caller's Settings read, image-build locks included."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from windtunnel._config import load_settings
from windtunnel._drivers.container_plugin import ContainerRuntimePlugin, DriverSettings, gateway_spec
from windtunnel._engine import base_image, fence, images
from windtunnel._runtimes.manifest import load_manifest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("given", [None, "custom-locks"])
def test_image_builds_lock_where_the_settings_lock_runtimes(tmp_path: Path, given: str | None) -> None:
    env = {"WT_LOCK_DIR": str(tmp_path / given)} if given else {}
    settings = load_settings(tmp_path, env=env)
    assert DriverSettings.from_env(settings.env).lock_dir == settings.lock_dir
    if given:
        assert settings.lock_dir == tmp_path / given


def test_the_engine_takes_its_lock_directory_from_the_caller_never_from_the_process() -> None:
    for module in (base_image, images, fence):
        assert "process_env" not in inspect.getsource(module), module.__name__
    for function in (base_image.ensure_base_image, images.build_image, fence.ensure_netguard_image):
        assert "lock_dir" in inspect.signature(function).parameters, function.__qualname__


def test_a_plugin_reads_its_settings_once_from_the_environment_it_was_handed(tmp_path: Path) -> None:
    manifest = load_manifest(REPO / "runtimes" / "reference")
    plugin = ContainerRuntimePlugin(manifest, env={"WT_LOCK_DIR": str(tmp_path), "WT_BASE_IMAGE": "b:1"})
    first = plugin.settings
    assert first is plugin.settings  # read once
    assert (first.lock_dir, first.base_image) == (tmp_path, "b:1")


def test_the_gateway_spec_is_the_driver_settings_gateway() -> None:
    env = {"WT_GATEWAY_MODE": "live", "WT_UPSTREAM_URL": "http://upstream.test/v1"}
    assert gateway_spec(env) == DriverSettings.from_env(env).gateway
    assert gateway_spec({}) == DriverSettings.from_env({}).gateway
    assert not gateway_spec({}).needs_egress and gateway_spec(env).needs_egress
