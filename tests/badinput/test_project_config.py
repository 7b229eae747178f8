"""Bad project configuration (windtunnel.toml, pyproject.toml's [tool.windtunnel]) and bad WT_* environment
values: each a one-line usage error (exit 2) naming the file or variable, the key, the value and the fix.
Every verb reads the project's config first, so the cases go through the verbs in turn."""

from __future__ import annotations

from itertools import cycle
from pathlib import Path

import pytest

from tests.badinput.runner import Case, Setup, run_case

PACK = str(Path(__file__).resolve().parents[2] / "scenarios" / "artifacts")
VERBS = cycle(
    [
        ["certify", "--executor", "host", "--out", "{tmp}/o"],
        ["run", "--runtime", "in_memory", "--pack", PACK],
        ["selftest", "--runtime", "in_memory", "--pack", PACK],
        ["doctor", "--runtime", "in_memory", "--pack", PACK],
        ["prove", "--local", "--pack", PACK],
        ["tapes", "list"],
        ["images", "sweep"],
    ]
)


def written(name: str, body: str | bytes) -> Setup:
    def setup(tmp: Path) -> None:
        target = tmp / name
        if isinstance(body, bytes):
            target.write_bytes(body)
        else:
            target.write_text(body, encoding="utf-8")

    return setup


def toml(id_: str, body: str | bytes, expect: str) -> Case:
    return Case(f"windtunnel.toml {id_}", next(VERBS), 2, expect, setup=written("windtunnel.toml", body))


def pyproject(id_: str, body: str | bytes, expect: str) -> Case:
    return Case(f"pyproject {id_}", next(VERBS), 2, expect, setup=written("pyproject.toml", body))


TOOL = "[tool.windtunnel]\n"
ENTRY_FIX = "runtimes = ["
CASES = [
    toml(
        "pack path missing",
        'packs = ["scenarios/suport_desk"]\n',
        'windtunnel.toml: packs[0] = "scenarios/suport_desk": there is no pack at scenarios/suport_desk',
    ),
    pyproject(
        "pack path missing",
        TOOL + 'packs = ["./packs/mine"]\n',
        'pyproject.toml [tool.windtunnel]: packs[0] = "./packs/mine": there is no pack at packs/mine',
    ),
    toml("key typo packs", "pakcs = []\n", "windtunnel.toml: unknown key 'pakcs'; did you mean 'packs'?"),
    toml("key typo runtimes", 'runtime = ["x"]\n', "unknown key 'runtime'; did you mean 'runtimes'?"),
    toml("key typo requirement_set", 'requirements = "3"\n', "did you mean 'requirement_set'?"),
    toml("key typo runs_dir", 'run_dir = "runs"\n', "unknown key 'run_dir'; did you mean 'runs_dir'?"),
    toml(
        "unknown key",
        'colour = "red"\n',
        "unknown key 'colour'; known keys: runtimes, packs, requirement_set",
    ),
    toml("unknown table", "[tool]\nx = 1\n", "windtunnel.toml: unknown table [tool]"),
    toml(
        "requirement set list", "requirement_set = [1]\n", "requirement_set = [1]: must be a requirement set"
    ),
    toml("requirement set word", 'requirement_set = "latest"\n', 'requirement_set = "latest": must be'),
    toml("requirement set zero", "requirement_set = 0\n", 'requirement_set = "0": must be a requirement set'),
    toml("requirement set negative", "requirement_set = -3\n", 'requirement_set = "-3": must be'),
    toml(
        "requirement set bool",
        "requirement_set = true\n",
        "requirement_set = true: must be a requirement set",
    ),
    toml(
        "requirement set float", "requirement_set = 1.5\n", "requirement_set = 1.5: must be a requirement set"
    ),
    toml(
        "requirement set empty", 'requirement_set = ""\n', 'requirement_set = "": must be a requirement set'
    ),
    toml("runs_dir number", "runs_dir = 3\n", "runs_dir = 3: must be a directory"),
    toml("runs_dir empty", 'runs_dir = ""\n', 'runs_dir = "": must be a directory'),
    toml("runs_dir list", 'runs_dir = ["runs"]\n', 'runs_dir = ["runs"]: must be a directory'),
    toml("packs string", 'packs = "scenarios/a"\n', 'packs = "scenarios/a": must be a list of strings'),
    toml("packs numbers", "packs = [1, 2]\n", "packs[0] = 1: must be a list of strings"),
    toml("packs table", "packs = { a = 1 }\n", "packs = { a = 1 }: must be a list of strings"),
    toml("runtimes number", "runtimes = 3\n", "runtimes = 3: must be a list of runtime names"),
    toml("runtimes string", 'runtimes = "reference"\n', 'runtimes = "reference": must be a list'),
    toml("runtimes entry number", "runtimes = [3]\n", "runtimes[0] = 3: must be a list of runtime names"),
    toml("runtimes entry without name", 'runtimes = [{ build = "a" }]\n', "runtimes[0].name is missing"),
    toml(
        "runtimes entry empty name",
        'runtimes = [{ name = "" }]\n',
        'runtimes[0].name = "": must be a runtime',
    ),
    toml(
        "runtimes entry key typo",
        'runtimes = [{ name = "x", buld = "a" }]\n',
        "'buld' in [runtimes[0]]; did you",
    ),
    toml(
        "runtimes entry unknown key",
        'runtimes = [{ name = "x", tag = "1" }]\n',
        "unknown key 'tag' in [runtimes[0]]",
    ),
    toml(
        "runtimes entry image number",
        'runtimes = [{ name = "x", image = 3 }]\n',
        "runtimes[0].image = 3: must be",
    ),
    toml(
        "runtimes entry build empty",
        'runtimes = [{ name = "x", build = "" }]\n',
        'runtimes[0].build = "": must',
    ),
    toml(
        "runtimes entry both", 'runtimes = [{ name = "x", build = "a", image = "b:1" }]\n', "has both build="
    ),
    toml(
        "runtimes entry manifest alone",
        'runtimes = [{ name = "x", build = "a", manifest = "m" }]\n',
        "manifest=",
    ),
    toml("runtimes repeated", 'runtimes = ["a", "a"]\n', 'runtimes = ["a", "a"]: names \'a\' more than once'),
    toml(
        "runtimes repeated tables", 'runtimes = ["a", { name = "a", image = "r:1" }]\n', "names 'a' more than"
    ),
    toml("not toml", "runtimes = [\n", "windtunnel.toml: is not valid TOML"),
    toml("duplicate key", "packs = []\npacks = []\n", "windtunnel.toml: is not valid TOML"),
    toml(
        "latin-1", b'runs_dir = "r\xe9sultats"\n', "windtunnel.toml: is not UTF-8 text (byte 0xe9 on line 1)"
    ),
    toml(
        "utf-16", "packs = []\n".encode("utf-16"), "windtunnel.toml: is not UTF-8 text (byte 0xff on line 1)"
    ),
    pyproject("tool.windtunnel a number", "[tool]\nwindtunnel = 3\n", "tool.windtunnel = 3: must be a table"),
    pyproject("tool.windtunnel a list", "[tool]\nwindtunnel = []\n", "tool.windtunnel = []: must be a table"),
    pyproject("key typo", TOOL + "pakcs = []\n", "pyproject.toml [tool.windtunnel]: unknown key 'pakcs'"),
    pyproject("nested table", TOOL + "[tool.windtunnel.extra]\nx = 1\n", "unknown table [extra]; known keys"),
    pyproject(
        "packs string", TOOL + 'packs = "a"\n', 'pyproject.toml [tool.windtunnel]: packs = "a": must be'
    ),
    pyproject(
        "runtimes entry", TOOL + 'runtimes = [{ name = "x", image = "r:1", build = "b" }]\n', "has both"
    ),
    pyproject("requirement set", TOOL + "requirement_set = [3]\n", "requirement_set = [3]: must be"),
    pyproject("not toml", TOOL + "packs = [\n", "pyproject.toml: is not valid TOML"),
    pyproject(
        "latin-1", b'[project]\nname = "caf\xe9"\n', "pyproject.toml: is not UTF-8 text (byte 0xe9 on line 2)"
    ),
]

ENV_CASES = (
    [
        # WT_* numbers: read when a container runtime is built, before the engine is asked anything
        Case(
            f"WT_INJECT_TIMEOUT_S {value!r}",
            ["run", "--runtime", "reference", "--pack", PACK],
            2,
            f"WT_INJECT_TIMEOUT_S={value!r} is not a number of seconds",
            env={"WT_INJECT_TIMEOUT_S": value},
        )
        for value in ("abc", "nan", "inf", "-1", "0", "1e999", "7s")
    ]
    + [
        Case(
            f"WT_MAX_BODY_BYTES {value!r}",
            ["gateway", "serve", "--port", "0"],
            2,
            f"WT_MAX_BODY_BYTES={value!r} is not a size in bytes",
            env={"WT_MAX_BODY_BYTES": value},
        )
        for value in ("lots", "-5", "0", "1.5MB", "8 parsecs")
    ]
    + [
        Case(
            "live mode without an upstream",
            ["run", "--runtime", "reference", "--pack", PACK],
            2,
            "WT_GATEWAY_MODE=live needs WT_UPSTREAM_URL",
            env={"WT_GATEWAY_MODE": "live"},
        ),
        Case(
            "live mode with a missing key file",
            ["selftest", "--runtime", "reference", "--pack", PACK],
            2,
            "cannot read the upstream key file",
            env={
                "WT_GATEWAY_MODE": "live",
                "WT_UPSTREAM_URL": "http://x/v1",
                "WT_UPSTREAM_KEY_FILE": "/nonexistent",
            },
        ),
        Case(
            "record mode with an empty key file",
            ["run", "--runtime", "reference", "--pack", PACK],
            2,
            "the upstream key file",
            setup=written("key", ""),
            env={
                "WT_GATEWAY_MODE": "record",
                "WT_UPSTREAM_URL": "http://x/v1",
                "WT_UPSTREAM_KEY_FILE": "key",
            },
        ),
    ]
)


@pytest.mark.parametrize("case", CASES + ENV_CASES, ids=[case.id for case in CASES + ENV_CASES])
def test_a_bad_project_config_or_environment_value_is_one_clear_line(case: Case, tmp_path: Path) -> None:
    run_case(case, tmp_path).refused(case.code, case.expect)
