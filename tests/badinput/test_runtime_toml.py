"""Bad runtime.toml files: each a one-line usage error (exit 2) naming the file, the key, the value and the
fix, before anything is built or started. A case's runtime is asked for by name (`x`) or by directory, in
the verbs that take a runtime, in turn; a broken runtime.toml beside it must not matter to another."""

from __future__ import annotations

from itertools import cycle
from pathlib import Path

import pytest

from tests.badinput.runner import Case, Setup, run_case, wt

HEAD = 'name = "x"\n[image]\nbuild = "."\n'
PORT = "must be an integer 1-65535"
VERBS = cycle(
    [
        ["certify", "--executor", "host", "--out", "{tmp}/o", "--runtime"],
        ["run", "--runtime"],
        ["selftest", "--runtime"],
        ["doctor", "--runtime"],
        ["prove", "--pack", "{pack}", "--runtime"],
        ["images", "build", "--runtime"],
    ]
)
PACK = str(Path(__file__).resolve().parents[2] / "scenarios" / "artifacts")


def runtime(files: dict[str, str | bytes]) -> Setup:
    """runtimes/<name>/runtime.toml (and a Dockerfile) for each entry; values are the file's bytes or text."""

    def setup(tmp: Path) -> None:
        for name, body in files.items():
            directory = tmp / "runtimes" / name
            directory.mkdir(parents=True, exist_ok=True)
            (directory / "Dockerfile").write_text("ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\n", encoding="utf-8")
            target = directory / "runtime.toml"
            if isinstance(body, bytes):
                target.write_bytes(body)
            else:
                target.write_text(body, encoding="utf-8")

    return setup


def case(
    id_: str, body: str | bytes, expect: str, *, by: str = "x", others: dict[str, str] | None = None
) -> Case:
    """`body` as runtimes/x/runtime.toml, asked for `by` name or directory, in the next verb."""
    verb = [arg.replace("{pack}", PACK) for arg in next(VERBS)]
    return Case(id_, [*verb, by], 2, expect, setup=runtime({"x": body, **(others or {})}))


BY_DIR = "runtimes/x"
CASES = [
    # capabilities.port: an integer 1-65535, never a string, a float, inf, nan or a list
    case("port word", HEAD + '[capabilities]\nport = "eighty"\n', f'capabilities.port = "eighty": {PORT}'),
    case("port empty", HEAD + '[capabilities]\nport = ""\n', f'capabilities.port = "": {PORT}'),
    case(
        "port numeric string", HEAD + '[capabilities]\nport = "8647"\n', f'capabilities.port = "8647": {PORT}'
    ),
    case("port inf", HEAD + "[capabilities]\nport = inf\n", f"capabilities.port = inf: {PORT}"),
    case("port minus inf", HEAD + "[capabilities]\nport = -inf\n", f"capabilities.port = -inf: {PORT}"),
    case("port nan", HEAD + "[capabilities]\nport = nan\n", f"capabilities.port = nan: {PORT}"),
    case("port list", HEAD + "[capabilities]\nport = [8647]\n", f"capabilities.port = [8647]: {PORT}"),
    case(
        "port table", HEAD + "[capabilities]\nport = { n = 1 }\n", f"capabilities.port = {{ n = 1 }}: {PORT}"
    ),
    case("port float", HEAD + "[capabilities]\nport = 8647.9\n", f"capabilities.port = 8647.9: {PORT}"),
    case("port whole float", HEAD + "[capabilities]\nport = 8647.0\n", f"capabilities.port = 8647.0: {PORT}"),
    case("port zero", HEAD + "[capabilities]\nport = 0\n", f"capabilities.port = 0: {PORT}"),
    case("port negative", HEAD + "[capabilities]\nport = -1\n", f"capabilities.port = -1: {PORT}"),
    case("port 65536", HEAD + "[capabilities]\nport = 65536\n", f"capabilities.port = 65536: {PORT}"),
    case("port 99999", HEAD + "[capabilities]\nport = 99999\n", f"capabilities.port = 99999: {PORT}"),
    case("port boolean", HEAD + "[capabilities]\nport = true\n", f"capabilities.port = true: {PORT}"),
    case(
        "port date", HEAD + "[capabilities]\nport = 1979-05-27\n", f"capabilities.port = 1979-05-27: {PORT}"
    ),
    # capabilities.reference: a TOML boolean, never a string that merely reads like one
    case(
        "reference string false",
        HEAD + '[capabilities]\nreference = "false"\n',
        'reference = "false": must be',
    ),
    case(
        "reference string true", HEAD + '[capabilities]\nreference = "true"\n', 'reference = "true": must be'
    ),
    case(
        "reference one",
        HEAD + "[capabilities]\nreference = 1\n",
        "capabilities.reference = 1: must be true or",
    ),
    case(
        "reference zero",
        HEAD + "[capabilities]\nreference = 0\n",
        "capabilities.reference = 0: must be true or",
    ),
    case(
        "reference yes",
        HEAD + '[capabilities]\nreference = "yes"\n',
        'reference = "yes": must be true or false',
    ),
    case(
        "reference list", HEAD + "[capabilities]\nreference = [true]\n", "reference = [true]: must be true or"
    ),
    # capabilities.state_route
    case("state route number", HEAD + "[capabilities]\nstate_route = 3\n", "state_route = 3: must be a path"),
    case(
        "state route relative", HEAD + '[capabilities]\nstate_route = "wt/state"\n', "must be a path starting"
    ),
    case(
        "state route empty", HEAD + '[capabilities]\nstate_route = ""\n', 'state_route = "": must be a path'
    ),
    case(
        "state route space",
        HEAD + '[capabilities]\nstate_route = "/a b"\n',
        '"/a b": must be a path starting',
    ),
    # name
    case("name empty", 'name = ""\n[image]\nbuild = "."\n', 'name = "": must be a name', by=BY_DIR),
    case("name number", 'name = 3\n[image]\nbuild = "."\n', "name = 3: must be a name", by=BY_DIR),
    case("name space", 'name = "my runtime"\n', 'name = "my runtime": must be a name', by=BY_DIR),
    case("name slash", 'name = "a/b"\n', 'name = "a/b": must be a name of letters', by=BY_DIR),
    case("name leading dash", 'name = "-x"\n', 'name = "-x": must be a name', by=BY_DIR),
    case("name too long", f'name = "{"x" * 64}"\n', "must be a name of letters, digits", by=BY_DIR),
    case("name list", 'name = ["x"]\n', 'name = ["x"]: must be a name', by=BY_DIR),
    case("name missing", '[image]\nbuild = "."\n', "runtimes/x/runtime.toml: name is missing", by=BY_DIR),
    case("empty file", "", "runtimes/x/runtime.toml: name is missing", by=BY_DIR),
    # extends: no cycles, an existing runtime, a string
    case("extends itself", 'name = "x"\nextends = "."\n', 'extends = ".": leads back to itself'),
    case("extends its own file", 'name = "x"\nextends = "runtime.toml"\n', "leads back to itself"),
    case(
        "extends cycle of two",
        'name = "x"\nextends = "../y"\n',
        "leads back to itself (runtimes/x/runtime.toml -> runtimes/y/runtime.toml -> runtimes/x/",
        others={"y": 'name = "y"\nextends = "../x"\n'},
    ),
    case(
        "extends cycle of three",
        'name = "x"\nextends = "../y"\n',
        "leads back to itself",
        others={"y": 'name = "y"\nextends = "../z"\n', "z": 'name = "z"\nextends = "../y"\n'},
    ),
    case(
        "extends nowhere",
        'name = "x"\nextends = "../nope"\n',
        'extends = "../nope": there is no runtime.toml',
    ),
    case("extends empty", 'name = "x"\nextends = ""\n', 'extends = "": must be the directory'),
    case("extends number", 'name = "x"\nextends = 3\n', "extends = 3: must be the directory"),
    case(
        "extends a broken one",
        'name = "x"\nextends = "../y"\n',
        'runtimes/y/runtime.toml: capabilities.port = "x": must be an integer',
        others={"y": 'name = "y"\n[capabilities]\nport = "x"\n'},
    ),
    # schema_version
    case("schema version 2", 'schema_version = 2\nname = "x"\n', "schema_version = 2: must be 1"),
    case("schema version string", 'schema_version = "1"\nname = "x"\n', 'schema_version = "1": must be 1'),
    case("schema version zero", 'schema_version = 0\nname = "x"\n', "schema_version = 0: must be 1"),
    # misspelled keys and tables: refused, with the closest known one
    case("top key typo", 'nmae = "x"\nname = "x"\n', "unknown key 'nmae'; did you mean 'name'?"),
    case(
        "top key unknown", 'name = "x"\ncolour = "red"\n', "unknown key 'colour'; known keys: schema_version"
    ),
    case(
        "table typo image", 'name = "x"\n[imag]\nbuild = "."\n', "unknown table [imag]; did you mean [image]?"
    ),
    case(
        "table typo capabilities",
        'name = "x"\n[capabilites]\nreference = true\n',
        "did you mean [capabilities]?",
    ),
    case("table unknown", 'name = "x"\n[network]\nmode = "host"\n', "unknown table [network]; known keys"),
    case(
        "image key typo", 'name = "x"\n[image]\nbiuld = "."\n', "unknown key 'biuld' in [image]; did you mean"
    ),
    case(
        "capabilities key typo", HEAD + "[capabilities]\nprot = 1\n", "unknown key 'prot' in [capabilities]"
    ),
    case(
        "env key typo", HEAD + "[env]\nrenam = {}\n", "unknown key 'renam' in [env]; did you mean 'rename'?"
    ),
    case(
        "config key typo",
        HEAD + "[config]\nsuported = []\n",
        "'suported' in [config]; did you mean 'supported'?",
    ),
    case(
        "driver key typo",
        'name = "x"\n[driver]\nplugn = "a:b"\n',
        "'plugn' in [driver]; did you mean 'plugin'?",
    ),
    # [image]
    case("image not a table", 'name = "x"\nimage = 3\n', "image = 3: must be a table"),
    case("image build number", 'name = "x"\n[image]\nbuild = 3\n', "image.build = 3: must be a directory"),
    case("image build empty", 'name = "x"\n[image]\nbuild = ""\n', 'image.build = "": must be a directory'),
    case("image dockerfile empty", HEAD + 'dockerfile = ""\n', 'image.dockerfile = "": must be a file'),
    case("image dockerfile number", HEAD + "dockerfile = 5\n", "image.dockerfile = 5: must be a file"),
    case(
        "image dockerfile unknown asset",
        HEAD + 'dockerfile = "windtunnel:nope"\n',
        "which Wind Tunnel does not",
    ),
    case(
        "image requirements list",
        HEAD + "requirements = []\n",
        "image.requirements = []: must be a requirements",
    ),
    case("image packages string", HEAD + 'packages = "lib"\n', 'image.packages = "lib": must be a list of'),
    case(
        "image packages numbers",
        HEAD + "packages = [1]\n",
        "image.packages[0] = 1: must be a list of directories",
    ),
    case(
        "image packages unknown asset", HEAD + 'packages = ["windtunnel:nope"]\n', "names 'windtunnel:nope'"
    ),
    case(
        "image args number value",
        HEAD + "args = { A = 1 }\n",
        'image.args.A = 1: must be a table of NAME = "value"',
    ),
    case("image args string", HEAD + 'args = "A=1"\n', 'image.args = "A=1": must be a table of NAME'),
    case("image args base image", HEAD + 'args = { BASE_IMAGE = "x" }\n', "BASE_IMAGE is set by Wind Tunnel"),
    case("image ref empty", 'name = "x"\n[image]\nref = ""\n', 'image.ref = "": must be an image reference'),
    case("image ref number", 'name = "x"\n[image]\nref = 1\n', "image.ref = 1: must be an image reference"),
    # [env]
    case("env not a table", 'name = "x"\nenv = []\n', "env = []: must be a table"),
    case(
        "env set number",
        HEAD + "[env]\nset = { A = 1 }\n",
        'env.set.A = 1: must be a table of NAME = "value"',
    ),
    case("env set string", HEAD + '[env]\nset = "A=1"\n', 'env.set = "A=1": must be a table'),
    case(
        "env set bad name",
        HEAD + '[env]\nset = { "A B" = "1" }\n',
        "'A B' is not an environment variable name",
    ),
    case(
        "env set name with =", HEAD + '[env]\nset = { "A=B" = "1" }\n', "'A=B' is not an environment variable"
    ),
    case("env set NUL", HEAD + '[env]\nset = { A = "x\\u0000y" }\n', "the value of A holds a NUL character"),
    case(
        "env rename to bad",
        HEAD + '[env]\nrename = { A = "has space" }\n',
        "'has space' is not an environment",
    ),
    case("env rename number", HEAD + "[env]\nrename = { A = 2 }\n", "env.rename.A = 2: must be a table of"),
    case(
        "env rename misspelt",
        HEAD + '[env]\nrename = { WT_MODLE_BASE_URL = "OPENAI_BASE_URL" }\n',
        "env.rename renames WT_MODLE_BASE_URL, which Contract C does not define; did you mean WT_MODEL_BASE_URL?",
    ),
    # [model]: the wire is one of three names; side model names are real names, each once
    case(
        "model wire unknown",
        HEAD + '[model]\nwire = "anthropic"\n',
        "model.wire = \"anthropic\": must be one of 'chat', 'messages', 'responses'",
    ),
    case("model wire number", HEAD + "[model]\nwire = 1\n", "model.wire = 1: must be one of 'chat'"),
    case(
        "model side empty",
        HEAD + '[model]\nside_models = [""]\n',
        "model.side_models = [\"\"]: '' is not a model name",
    ),
    case(
        "model side twice",
        HEAD + '[model]\nside_models = ["h", "h"]\n',
        "names 'h' twice; name each side model once",
    ),
    case(
        "model side not a list",
        HEAD + '[model]\nside_models = "h"\n',
        'model.side_models = "h": must be a list of model names',
    ),
    case("model key typo", HEAD + '[model]\nwires = "chat"\n', "did you mean 'wire'?"),
    case(
        "env rename not handed",
        HEAD + '[env]\nrename = { HOME = "MY_HOME" }\n',
        "env.rename renames HOME, which Contract C does not define",
    ),
    # [image] build and ref: one image source, never both
    case(
        "image build and ref",
        HEAD + 'ref = "registry/agent:1.2"\n',
        "image.ref names the prebuilt image 'registry/agent:1.2', but [image] build names a directory",
    ),
    # [config] supported
    case(
        "supported string", HEAD + '[config]\nsupported = "system_prompt"\n', "must be a list of AgentConfig"
    ),
    case(
        "supported typo", HEAD + '[config]\nsupported = ["sampling.temprature"]\n', "did you mean 'sampling"
    ),
    case("supported unknown", HEAD + '[config]\nsupported = ["colour"]\n', "names unknown field 'colour'"),
    case(
        "supported number", HEAD + "[config]\nsupported = [1]\n", "config.supported[0] = 1: must be a list of"
    ),
    # [config] unsupported: fields a runtime knowingly cannot honour, each with its reason
    case(
        "unsupported typo",
        HEAD + '[config]\nunsupported = { "sampling.temprature" = "no knob" }\n',
        'config.unsupported = { sampling.temprature = "no knob" }: names unknown field',
    ),
    case(
        "unsupported no reason",
        HEAD + '[config.unsupported]\n"sampling.top_p" = ""\n',
        "gives sampling.top_p no reason: say why the runtime cannot honour it",
    ),
    case(
        "unsupported and supported",
        HEAD + '[config]\nsupported = ["sampling.top_p"]\nunsupported = { "sampling.top_p" = "no knob" }\n',
        "runtimes/x/runtime.toml: config.unsupported names sampling.top_p, which [config] supported names too",
    ),
    case(
        "unsupported list",
        HEAD + '[config]\nunsupported = ["sampling.top_p"]\n',
        "must be a table of AgentConfig",
    ),
    # [mcp] result_limit: the most characters of one tool result that reach the model, and why
    case(
        "result_limit zero",
        HEAD + '[mcp]\nresult_limit = { chars = 0, reason = "r" }\n',
        "chars = 0: must be",
    ),
    case("result_limit no reason", HEAD + "[mcp]\nresult_limit = { chars = 50000 }\n", "reason is missing"),
    case(
        "result_limit empty reason",
        HEAD + '[mcp.result_limit]\nchars = 50000\nreason = " "\n',
        'mcp.result_limit.reason = " ": must be why longer results do not reach the model whole',
    ),
    case(
        "result_limit number", HEAD + "[mcp]\nresult_limit = 50000\n", "mcp.result_limit = 50000: must be a"
    ),
    # [driver] plugin
    case(
        "plugin no colon", 'name = "x"\n[driver]\nplugin = "driver"\n', 'driver.plugin = "driver": must be a'
    ),
    case("plugin number", 'name = "x"\n[driver]\nplugin = 3\n', "driver.plugin = 3: must be a module:attr"),
    case("plugin two colons", 'name = "x"\n[driver]\nplugin = "a:b:c"\n', 'driver.plugin = "a:b:c": must be'),
    # [driver] kind: a name the windtunnel.drivers registry knows
    case(
        "kind unknown",
        'name = "x"\n[driver]\nkind = "kontainer"\n',
        "runtimes/x/runtime.toml: [driver] kind = 'kontainer' is not a registered driver kind (known: "
        "container, http_inject, in_memory, python)",
    ),
    case("kind not a name", 'name = "x"\n[driver]\nkind = "Big Box"\n', 'driver.kind = "Big Box": must be'),
    case("kind number", 'name = "x"\n[driver]\nkind = 1\n', "driver.kind = 1: must be the name of a driver"),
    # not TOML, not UTF-8
    case("toml syntax", "name = \n", "runtimes/x/runtime.toml: is not valid TOML", by=BY_DIR),
    case("toml unclosed table", 'name = "x"\n[image\n', "is not valid TOML", by=BY_DIR),
    case("toml duplicate key", 'name = "x"\nname = "y"\n', "is not valid TOML", by=BY_DIR),
    case(
        "latin-1",
        b'name = "caf\xe9"\n',
        "runtimes/x/runtime.toml: is not UTF-8 text (byte 0xe9 on line 1)",
        by=BY_DIR,
    ),
    case("utf-16", 'name = "x"\n'.encode("utf-16"), "is not UTF-8 text (byte 0xff on line 1)", by=BY_DIR),
    case("binary", b"\x00\x01\x02\xff", "is not UTF-8 text", by=BY_DIR),
    # asked for by name: a broken runtime.toml whose name is unreadable is named as maybe the one meant
    case(
        "by name, unreadable", b"name = \xff", "runtimes/x/runtime.toml is broken and may be the one you mean"
    ),
    case("by name, no name at all", "[image]\n", "the runtime.toml at runtimes/x/runtime.toml is broken"),
    case(
        "by name, another is broken",
        'name = "other"\n',
        "no runtime named 'x'",
        others={"broken": 'name = "broken"\n[capabilities]\nport = "eighty"\n'},
    ),
    # a runtime directory without a runtime.toml, or with one that is a directory
    Case(
        "no runtime.toml",
        ["run", "--runtime", "runtimes/x"],
        2,
        "no runtime.toml at",
        setup=lambda tmp: (tmp / "runtimes" / "x").mkdir(parents=True),
    ),
    Case(
        "runtime.toml is a directory",
        ["certify", "--executor", "host", "--out", "{tmp}/o", "--runtime", "runtimes/x"],
        2,
        "no runtime.toml at runtimes/x/runtime.toml",
        setup=lambda tmp: (tmp / "runtimes" / "x" / "runtime.toml").mkdir(parents=True),
    ),
]


def test_the_corpus_has_a_case_for_every_table() -> None:
    tables = {"capabilities", "image", "env", "config", "driver", "extends", "name", "schema_version"}
    assert all(any(table in case.expect or table in case.id for case in CASES) for table in tables)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_a_bad_runtime_toml_is_one_clear_line(case: Case, tmp_path: Path) -> None:
    run_case(case, tmp_path).refused(case.code, case.expect)


def test_a_broken_runtime_toml_affects_only_its_own_runtime(tmp_path: Path) -> None:
    """Runtime `good` resolves beside runtime.tomls broken in every way: the run gets as far as the engine
    (none here), never stopping at another runtime's file."""
    runtime({"good": 'name = "good"\n[image]\nbuild = "."\n', "broken": b'name = "\xff'})(tmp_path)
    runtime({"typo": 'name = "typo"\n[imag]\n', "cycle": 'name = "cycle"\nextends = "."\n'})(tmp_path)
    engine = {"DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock"}
    done = wt(["run", "--runtime", "good", "--pack", PACK], cwd=tmp_path, env=engine)
    done.refused(2, "wt: EngineUnavailableError: no Docker engine answered")
