"""The one reader of configuration files: TOML errors, encodings, and a pydantic error as one line."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from windtunnel._configfile import Strict, dotted_name, read_toml, spec, toml_value, validated
from windtunnel.errors import ConfigFileError


class Inner(Strict):
    port: int | None = spec(expect="an integer 1-65535", example="port = 8647 under [inner]", ge=1, le=65535)


class Outer(Strict):
    name: str = spec(..., expect="a name", example='name = "x"')
    inner: Inner = spec(Inner(), expect="a table", example="[inner]")
    items: list[Inner] = spec([], expect="a list of tables", example="items = [{port = 1}]")


@pytest.mark.parametrize(
    ("data", "message", "hint"),
    [
        ({}, "f.toml: name is missing", 'write name = "x"'),
        ({"name": 3}, "f.toml: name = 3: must be a name", 'write name = "x"'),
        (
            {"name": "x", "inner": {"port": "80"}},
            'inner.port = "80": must be an integer 1-65535',
            "port = 8647",
        ),
        ({"name": "x", "inner": {"port": 0}}, "inner.port = 0: must be an integer 1-65535", "port = 8647"),
        ({"name": "x", "inner": {"port": math.inf}}, "inner.port = inf: must be", "port = 8647"),
        ({"name": "x", "inner": 5}, "inner = 5: must be a table", "write [inner]"),
        ({"name": "x", "innr": {}}, "unknown table [innr]; did you mean [inner]?", "rename it to [inner]"),
        (
            {"name": "x", "inner": {"prot": 1}},
            "unknown key 'prot' in [inner]; did you mean 'port'?",
            "'port'",
        ),
        ({"name": "x", "zzz": 1}, "unknown key 'zzz'; known keys: name, inner, items", "fix the spelling"),
        (
            {"name": "x", "items": [{"port": 1}, {"port": True}]},
            "items[1].port = true: must be",
            "port = 8647",
        ),
    ],
)
def test_the_first_problem_is_one_line_with_its_fix(data: dict[str, object], message: str, hint: str) -> None:
    with pytest.raises(ConfigFileError) as caught:
        validated(Outer, data, Path("f.toml"), where="f.toml")
    assert message in caught.value.message and len(caught.value.message.splitlines()) == 1
    assert hint in (caught.value.hint or "")


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (b"a = \xff\n", "is not UTF-8 text (byte 0xff on line 1)"),
        (b"a = 1\nb = \xc3(\n", "is not UTF-8 text (byte 0xc3 on line 2)"),
        (b"a = [\n", "is not valid TOML"),
        (b"a = 1\na = 2\n", "is not valid TOML"),
    ],
)
def test_unreadable_files_are_one_error_naming_the_file(tmp_path: Path, raw: bytes, problem: str) -> None:
    path = tmp_path / "x.toml"
    path.write_bytes(raw)
    with pytest.raises(ConfigFileError) as caught:
        read_toml(path)
    assert problem in caught.value.message and str(path) in caught.value.message


def test_a_directory_in_place_of_the_file_is_one_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigFileError, match="cannot be read"):
        read_toml(tmp_path)


def test_values_are_shown_as_toml_writes_them() -> None:
    assert [toml_value(v) for v in ("a", 1, True, math.nan, -math.inf, [1, "b"], {"k": 1})] == [
        '"a"',
        "1",
        "true",
        "nan",
        "-inf",
        '[1, "b"]',
        "{ k = 1 }",
    ]
    assert len(toml_value("x" * 500)) == 60
    assert dotted_name(("runtimes", 0, "build")) == "runtimes[0].build"
