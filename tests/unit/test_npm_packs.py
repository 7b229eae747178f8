"""npm tarballs for offline image builds: runtime.toml's [image] npm takes exact pins only, `npm pack` (the
real npm) fills a cache entry once, and the build context carries the tarballs under npm/."""

from __future__ import annotations

import json
import shutil
import tarfile
from pathlib import Path

import pytest

from tests.unit.test_runtimes_manifest import runtime
from windtunnel._engine.images import stage_context
from windtunnel._engine.npm_packs import CONTEXT_DIR, NpmPackError, fetch_npm_packs
from windtunnel._runtimes.manifest import load_manifest
from windtunnel.errors import ConfigFileError

needs_npm = pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed on this host")


def test_exact_pins_are_kept_in_order(tmp_path: Path) -> None:
    pins = '["@openai/codex@0.171.0-linux-x64", "left-pad@1.3.0"]'
    manifest = load_manifest(runtime(tmp_path, "a", f'name = "a"\n[image]\nbuild = "."\nnpm = {pins}\n'))
    assert manifest.npm == ("@openai/codex@0.171.0-linux-x64", "left-pad@1.3.0")


@pytest.mark.parametrize(
    "entry", ["@openai/codex", "@openai/codex@latest", "left-pad@^1.3.0", "left-pad@1.x"]
)
def test_a_range_a_tag_or_no_version_is_refused_naming_the_key(tmp_path: Path, entry: str) -> None:
    path = runtime(tmp_path, "a", f'name = "a"\n[image]\nbuild = "."\nnpm = ["{entry}"]\n')
    with pytest.raises(ConfigFileError, match=r"image\.npm.*is not pinned") as caught:
        load_manifest(path)
    assert entry in caught.value.message


def local_package(root: Path) -> Path:
    """A package directory npm packs without the registry."""
    root.mkdir()
    (root / "package.json").write_text(json.dumps({"name": "wt-probe", "version": "1.0.0"}), encoding="utf-8")
    (root / "cli.sh").write_text("#!/bin/sh\necho probe\n", encoding="utf-8")
    return root


@needs_npm
def test_npm_pack_fills_the_cache_once_and_the_context_carries_the_tarball(tmp_path: Path) -> None:
    package = local_package(tmp_path / "pkg")
    cache = tmp_path / "cache"
    first = fetch_npm_packs([str(package)], cache_dir=cache)
    again = fetch_npm_packs([str(package)], cache_dir=cache)
    assert (first.reused, again.reused, again.path) == (False, True, first.path)
    [tarball] = first.tarballs()
    with tarfile.open(tarball) as archive:
        assert "package/cli.sh" in archive.getnames()

    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text("FROM scratch\n", encoding="utf-8")
    context = tmp_path / "context"
    stage_context(context, context_dir=None, dockerfile=dockerfile, wheel_dirs={CONTEXT_DIR: first.path})
    assert sorted(p.name for p in (context / CONTEXT_DIR).iterdir()) == [tarball.name]


@needs_npm
def test_a_package_npm_cannot_pack_is_one_error_with_npms_words(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-package"
    with pytest.raises(NpmPackError, match=r"`npm pack .*no-such-package` failed with exit") as caught:
        fetch_npm_packs([str(missing)], cache_dir=tmp_path / "cache")
    assert caught.value.hint and "npm view" in caught.value.hint
    assert not list((tmp_path / "cache").glob("[0-9a-f]*"))  # nothing half-made is left as a cache entry


def test_without_npm_on_the_host_the_error_says_to_install_it(tmp_path: Path) -> None:
    with pytest.raises(NpmPackError, match=r"could not run") as caught:
        fetch_npm_packs(["left-pad@1.3.0"], cache_dir=tmp_path / "cache", npm=str(tmp_path / "no-npm"))
    assert caught.value.hint and "install Node.js" in caught.value.hint
