"""Entry-point discovery, proven with a real third-party package installed by the test.

The package (tests/fixtures/fake_plugin_pkg) is copied out of the source tree and pip-installed
into a temporary target, so the build leaves nothing behind in the repository. It registers a good
runtime and pack, a plugin class whose constructor raises and a pack whose module fails to import.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fake_package import PACKAGE, install_fake_package

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fake package, built from a copy and installed into its own target directory."""
    return install_fake_package(tmp_path_factory.mktemp("fake_pkg"))


def wt(site: Path | None, tmp: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": str(site) if site else "",
        "WT_RUNS_DIR": str(tmp / "runs"),
        "WT_LOCK_DIR": str(tmp / "locks"),
    }
    return subprocess.run(
        [sys.executable, "-m", "windtunnel._cli.main", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_building_the_package_leaves_the_source_tree_clean(site: Path) -> None:
    assert (site / "fake_wt_runtime" / "__init__.py").is_file()
    leftovers = [p.name for p in PACKAGE.iterdir() if p.name == "build" or p.name.endswith(".egg-info")]
    leftovers += [p.name for p in (PACKAGE / "src").iterdir() if p.name.endswith(".egg-info")]
    assert leftovers == []


def test_installed_package_registers_runtime_and_pack(site: Path, tmp_path: Path) -> None:
    done = wt(site, tmp_path, "run", "--runtime", "fake_echo", "--pack", "fake_pack", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "fake_pack/echo_hello[0]" in done.stdout
    # the broken pack of the same package is not selected: a warning naming it, never a crash
    assert "skipping installed pack 'broken_pack' (not selected)" in done.stderr
    assert "Traceback" not in done.stderr
    missing = wt(None, tmp_path, "run", "--runtime", "fake_echo", "--pack", "fake_pack", cwd=tmp_path)
    assert missing.returncode == 2 and "no runtime named 'fake_echo'" in missing.stderr
    assert "registered runtimes: http_inject, in_memory" in missing.stderr


def test_an_installed_pack_is_selected_by_name_where_packs_are_configured(site: Path, tmp_path: Path) -> None:
    done = wt(site, tmp_path, "run", "--runtime", "fake_echo", "--pack", "fake_pack", cwd=REPO)
    assert done.returncode == 0, done.stderr  # the repository configures its own packs
    assert "fake_pack/echo_hello[0]" in done.stdout and "support_desk" not in done.stdout


def _project(root: Path, pack_name: str) -> Path:
    pack = root / "packs" / "mine"
    pack.mkdir(parents=True)
    (pack / "pack.py").write_text(
        "from windtunnel.api import Pack, Scenario\n"
        f"PACK = Pack(name={pack_name!r}, scenarios=[Scenario(name='project_hello', prompt='hello', "
        "target_facts=[['echo: hello']])])\n"
    )
    (root / "pyproject.toml").write_text('[tool.windtunnel]\npacks = ["packs/mine"]\n')
    return root


def test_configured_and_installed_packs_are_both_candidates_for_pack(site: Path, tmp_path: Path) -> None:
    project = _project(tmp_path / "project", "mine")
    both = wt(
        site, tmp_path, "run", "--runtime", "fake_echo", "--pack", "mine", "--pack", "fake_pack", cwd=project
    )
    assert both.returncode == 0, both.stderr
    assert "mine/project_hello[0]" in both.stdout and "fake_pack/echo_hello[0]" in both.stdout
    default = wt(site, tmp_path, "run", "--runtime", "fake_echo", cwd=project)
    assert default.returncode == 0, default.stderr  # no --pack: the configured packs only
    assert "mine/project_hello[0]" in default.stdout and "fake_pack" not in default.stdout


def test_a_configured_pack_wins_a_name_over_an_installed_one(site: Path, tmp_path: Path) -> None:
    project = _project(tmp_path / "project", "fake_pack")
    done = wt(site, tmp_path, "run", "--runtime", "fake_echo", "--pack", "fake_pack", cwd=project)
    assert done.returncode == 0, done.stderr
    assert "fake_pack/project_hello[0]" in done.stdout and "echo_hello" not in done.stdout


def test_a_selected_broken_pack_is_one_error_naming_its_entry_point(site: Path, tmp_path: Path) -> None:
    for cwd in (tmp_path, REPO):  # with no packs configured, and with the repository's own
        done = wt(site, tmp_path, "run", "--runtime", "fake_echo", "--pack", "broken_pack", cwd=cwd)
        assert done.returncode == 2, done.stderr
        assert "installed pack 'broken_pack'" in done.stderr
        assert "fake_wt_runtime.broken_pack:PACK" in done.stderr and "package fake-wt-runtime" in done.stderr
        assert "ImportError" in done.stderr and "how to fix" in done.stderr
        assert "Traceback" not in done.stderr


def test_with_no_pack_flag_every_installed_pack_is_selected_so_a_broken_one_is_an_error(
    site: Path, tmp_path: Path
) -> None:
    done = wt(site, tmp_path, "prove", "--local", cwd=tmp_path)
    assert done.returncode == 2 and "installed pack 'broken_pack'" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_plugin_whose_constructor_raises_is_a_plugin_error(site: Path, tmp_path: Path) -> None:
    done = wt(site, tmp_path, "run", "--runtime", "fake_raising", "--pack", "fake_pack", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "runtime plugin 'fake_raising': constructing RaisingPlugin() raised RuntimeError" in done.stderr
    assert "FAKE_BACKEND_URL is not set" in done.stderr
    assert "entry point fake_raising = fake_wt_runtime:RaisingPlugin" in done.stderr
    assert "how to fix" in done.stderr and "Traceback" not in done.stderr


def runtime_of_kind(where: Path, kind: str) -> Path:
    """A runtime directory whose runtime.toml names the driver kind `kind` (built from a Dockerfile)."""
    directory = where / "kinded"
    directory.mkdir()
    (directory / "Dockerfile").write_text("FROM scratch\n")
    (directory / "runtime.toml").write_text(
        f'name = "kinded"\n[image]\nbuild = "."\n[driver]\nkind = "{kind}"\n'
    )
    return directory


def test_a_driver_kind_of_an_installed_package_is_looked_up_by_name(site: Path, tmp_path: Path) -> None:
    """The kind is data: the resolver finds the package's kind in the one registry, and the verbs see its
    plugin's abilities (here the container driver's, which it wraps), with no change to Wind Tunnel."""
    directory = runtime_of_kind(tmp_path, "fake_container")
    probe = (
        "import sys; from pathlib import Path; from windtunnel._config import load_settings; "
        "from windtunnel._runtimes.abilities import ImagePlugin; "
        "from windtunnel._runtimes.resolve import resolve_runtime; "
        "d = resolve_runtime(sys.argv[1], load_settings(Path.cwd())); "
        "print(d.driver, isinstance(d.plugin, ImagePlugin), type(d.plugin).__name__)"
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run(
        [sys.executable, "-c", probe, str(directory)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["fake_container", "True", "LoggedContainerKind"]


def test_an_unknown_driver_kind_is_one_line_naming_the_known_ones(site: Path, tmp_path: Path) -> None:
    directory = runtime_of_kind(tmp_path, "fake_contianer")
    done = wt(site, tmp_path, "run", "--runtime", str(directory), "--pack", "fake_pack", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    first = done.stderr.splitlines()[0]
    assert "runtime.toml: [driver] kind = 'fake_contianer' is not a registered driver kind" in first
    assert "(known: container, fake_container, http_inject, in_memory, python)" in first
    assert "Traceback" not in done.stderr
