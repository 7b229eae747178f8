"""runtime.toml through its model: strict types and ranges, unknown keys with a suggestion, `extends` cycles,
and a broken runtime.toml that affects only its own runtime. (The bad-value table is tests/badinput.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from windtunnel._config import Settings
from windtunnel._runtimes.manifest import lenient_name, load_manifest
from windtunnel._runtimes.resolve import resolve_runtime
from windtunnel.errors import ConfigFileError, UnknownRuntimeError


def runtime(root: Path, name: str, body: str) -> Path:
    directory = root / "runtimes" / name
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "runtime.toml").write_text(body, encoding="utf-8")
    (directory / "Dockerfile").write_text("ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\n", encoding="utf-8")
    return directory


def refusal(root: Path, tables: str) -> str:
    """The one-line message loading a runtime.toml of `tables` is refused with (never a traceback)."""
    with pytest.raises(ConfigFileError) as caught:
        load_manifest(runtime(root, "r", f'name = "r"\n{tables}\n'))
    message = str(caught.value)
    assert "runtime.toml" in message and "Traceback" not in message
    return message


def test_a_variant_inherits_what_it_leaves_out_and_overrides_what_it_sets(tmp_path: Path) -> None:
    base = runtime(
        tmp_path,
        "base",
        'name = "base"\n[image]\nbuild = "."\n[env]\nset = { A = "1" }\n'
        '[capabilities]\nreference = true\nport = 9000\nstate_route = "/s"\n',
    )
    variant = base / "poison" / "p"
    variant.mkdir(parents=True)
    (variant / "runtime.toml").write_text(
        'name = "base-p"\nextends = "../.."\n[env]\nset = { B = "2" }\n[capabilities]\nreference = false\n'
    )
    manifest = load_manifest(variant)
    assert (manifest.name, manifest.port, manifest.state_route, manifest.reference) == (
        "base-p",
        9000,
        "/s",
        False,
    )
    assert manifest.env_set == {"A": "1", "B": "2"} and manifest.build_dir == base.resolve()


def test_schema_version_1_is_the_only_one(tmp_path: Path) -> None:
    assert load_manifest(runtime(tmp_path, "a", 'schema_version = 1\nname = "a"\n')).name == "a"
    with pytest.raises(ConfigFileError, match=r"schema_version = 2: must be 1"):
        load_manifest(runtime(tmp_path, "b", 'schema_version = 2\nname = "b"\n'))


@pytest.mark.parametrize(
    ("files", "loop"),
    [
        ({"a": 'name = "a"\nextends = "."\n'}, "runtimes/a/runtime.toml -> runtimes/a/runtime.toml"),
        ({"a": 'name = "a"\nextends = "../b"\n', "b": 'name = "b"\nextends = "../a"\n'}, "-> runtimes/a/"),
        (
            {
                "a": 'name = "a"\nextends = "../b"\n',
                "b": 'name = "b"\nextends = "../c/runtime.toml"\n',
                "c": 'name = "c"\nextends = "../a"\n',
            },
            "runtimes/c/runtime.toml -> runtimes/a/runtime.toml",
        ),
    ],
)
def test_an_extends_cycle_is_one_error_naming_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str], loop: str
) -> None:
    monkeypatch.chdir(tmp_path)
    for name, body in files.items():
        runtime(tmp_path, name, body)
    with pytest.raises(ConfigFileError) as caught:
        load_manifest(tmp_path / "runtimes" / "a")
    assert "leads back to itself" in caught.value.message and loop in caught.value.message
    assert caught.value.field == "extends"  # type: ignore[attr-defined]


def test_a_broken_runtime_toml_does_not_stop_another_runtime_from_resolving(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    runtime(tmp_path, "good", 'name = "good"\n[image]\nbuild = "."\n')
    runtime(tmp_path, "broken", 'name = "broken"\n[capabilities]\nport = "eighty"\n')
    runtime(tmp_path, "garbled", "name = \n")
    settings = Settings(root=tmp_path, source=None)
    assert resolve_runtime("good", settings).name == "good"
    with pytest.raises(ConfigFileError, match=r'capabilities.port = "eighty": must be an integer 1-65535'):
        resolve_runtime("broken", settings)  # the broken one IS the one asked for: its own error


def test_an_unreadable_runtime_toml_is_named_when_the_name_is_not_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    runtime(tmp_path, "garbled", "name = \n")
    (tmp_path / "runtimes" / "latin1").mkdir()
    (tmp_path / "runtimes" / "latin1" / "runtime.toml").write_bytes(b'name = "caf\xe9"\n')
    with pytest.raises(UnknownRuntimeError) as caught:
        resolve_runtime("mine", Settings(root=tmp_path, source=None))
    message = caught.value.message
    assert (
        "the runtime.toml at runtimes/garbled/runtime.toml is broken and may be the one you mean" in message
    )
    assert "runtimes/latin1/runtime.toml: is not UTF-8 text (byte 0xe9 on line 1)" in message
    assert len(message.splitlines()) == 1


def test_lenient_name_reads_only_the_name(tmp_path: Path) -> None:
    assert lenient_name(runtime(tmp_path, "a", 'name = "a"\n[capabilities]\nport = "x"\n')) == "a"
    assert lenient_name(runtime(tmp_path, "b", "name = [\n")) is None
    assert lenient_name(runtime(tmp_path, "c", "name = 3\n")) is None


def test_config_unsupported_declares_fields_with_reasons_and_a_variant_inherits_them(tmp_path: Path) -> None:
    base = runtime(
        tmp_path,
        "base",
        'name = "base"\n[image]\nbuild = "."\n[config]\nsupported = ["system_prompt"]\n'
        '[config.unsupported]\n"sampling.top_p" = "its SDK sends no top_p"\n'
        '[mcp]\nresult_limit = { chars = 50000, reason = "longer results go to a file" }\n',
    )
    manifest = load_manifest(base)
    assert manifest.unsupported == {"sampling.top_p": "its SDK sends no top_p"}
    assert manifest.supported == frozenset({"system_prompt"})
    limit = manifest.mcp.result_limit
    assert limit is not None and (limit.chars, limit.reason) == (50000, "longer results go to a file")
    variant = base / "poison" / "p"
    variant.mkdir(parents=True)
    (variant / "runtime.toml").write_text('name = "p"\nextends = "../.."\n', encoding="utf-8")
    inherited = load_manifest(variant)
    assert inherited.unsupported == manifest.unsupported and inherited.mcp.result_limit == limit
    # a variant that supports a field its parent declared unsupported must say so in one place
    (variant / "runtime.toml").write_text(
        'name = "p"\nextends = "../.."\n[config]\nsupported = ["sampling.top_p"]\n', encoding="utf-8"
    )
    with pytest.raises(ConfigFileError, match=r"poison/p/runtime.toml: config.unsupported names sampling"):
        load_manifest(variant)
    assert (
        load_manifest(runtime(tmp_path, "plain", 'name = "plain"\n[image]\nbuild = "."\n')).unsupported == {}
    )


@pytest.mark.parametrize(
    ("tables", "expect"),
    [
        ('[config]\nunsupported = { "sampling.temprature" = "r" }', "did you mean 'sampling.temperature'?"),
        ('[config]\nunsupported = { "sampling.top_p" = " " }', "gives sampling.top_p no reason"),
        ('[config]\nunsupported = ["sampling.top_p"]', 'must be a table of AgentConfig field name = "why'),
        (
            '[config]\nsupported = ["sampling.top_p"]\nunsupported = { "sampling.top_p" = "r" }',
            "config.unsupported names sampling.top_p, which [config] supported names too",
        ),
        ('[mcp]\nresult_limit = { chars = 0, reason = "r" }', "mcp.result_limit.chars = 0: must be a whole"),
        ("[mcp]\nresult_limit = { chars = 10 }", "mcp.result_limit.reason is missing"),
        ('[mcp]\nresult_limit = { chars = 10, reason = "" }', 'mcp.result_limit.reason = "": must be why'),
        ("[mcp]\nresult_limit = 50000", "mcp.result_limit = 50000: must be a table of chars"),
    ],
)
def test_a_bad_declaration_is_one_line_naming_the_field_and_the_fix(
    tmp_path: Path, tables: str, expect: str
) -> None:
    assert expect in refusal(tmp_path, '[image]\nbuild = "."\n' + tables)
