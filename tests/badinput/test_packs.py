"""Bad packs: a pack.py that raises, exits, loops, or builds a broken pack or scenario. Each is a one-line
usage error (exit 2) naming the file and what is wrong, in every verb that loads packs; never a traceback,
and never `wt` ending silently with the exit code a pack asked for."""

from __future__ import annotations

from itertools import cycle
from pathlib import Path

import pytest

from tests.badinput.runner import Case, run_case

VERBS = cycle(
    [
        ["prove", "--local"],
        ["run", "--runtime", "in_memory"],
        ["selftest", "--runtime", "in_memory"],
        ["tapes", "list"],
    ]
)
HEAD = "from windtunnel.api import *\n"
DONE = "ReferenceDecision(content='done')"
GOLDEN = f"ReferenceCase(name='g', kind='golden', decisions=[{DONE}])"
CALL = "ReferenceDecision(tool_calls=[ReferenceToolCall('t', {})])"


def scenario(**fields: str) -> str:
    given = {"name": "'s'", "prompt": "'do it'", **fields}
    return "Scenario(" + ", ".join(f"{key}={value}" for key, value in given.items()) + ")"


def pack_of(*scenarios: str, **fields: str) -> str:
    given = {"name": "'p'", "scenarios": "[" + ", ".join(scenarios) + "]", **fields}
    return "PACK = Pack(" + ", ".join(f"{key}={value}" for key, value in given.items()) + ")\n"


def case(id_: str, body: str, expect: str) -> Case:
    def setup(tmp: Path) -> None:
        (tmp / "pk").mkdir()
        (tmp / "pk" / "pack.py").write_text(HEAD + body, encoding="utf-8")

    return Case(id_, [*next(VERBS), "--pack", "{tmp}/pk"], 2, expect, setup=setup)


EXITED = "called sys.exit({}) while being imported; a pack must not exit the process"
CASES = [
    # the module itself
    case("sys.exit 3", "import sys\nsys.exit(3)\n", EXITED.format(3)),
    case("sys.exit 0", "import sys\nsys.exit(0)\n", EXITED.format(0)),
    case("sys.exit message", "import sys\nsys.exit('bye')\n", EXITED.format("'bye'")),
    case("raise SystemExit", "raise SystemExit(7)\n", EXITED.format(7)),
    case("exit()", "exit(4)\n", EXITED.format(4)),
    case("raises", "raise RuntimeError('boom')\n", "pack.py failed to import: RuntimeError: boom"),
    case(
        "raises ours",
        "from windtunnel.errors import PackError\nraise PackError('mine')\n",
        "pk/pack.py: mine",
    ),
    case("syntax error", "def (:\n", "pack.py failed to import: SyntaxError: invalid syntax"),
    case(
        "missing import",
        "import no_such_module_xyz\n",
        "ModuleNotFoundError: No module named 'no_such_module_xyz'",
    ),
    case("infinite recursion", "def f():\n    return f()\nf()\n", "failed to import: RecursionError"),
    case("empty", "", "pack.py defines neither PACK nor make_pack()"),
    case("no PACK", "X = 1\n", "pack.py defines neither PACK nor make_pack()"),
    case("PACK a number", "PACK = 3\n", "pack.py gave a int, not a windtunnel.api.Pack"),
    case("PACK a dict", "PACK = {'name': 'p'}\n", "pack.py gave a dict, not a windtunnel.api.Pack"),
    case(
        "make_pack raises", "def make_pack():\n    raise ValueError('no')\n", "failed to load: ValueError: no"
    ),
    case(
        "make_pack exits",
        "import sys\ndef make_pack():\n    sys.exit(5)\n",
        "called sys.exit(5) while loading",
    ),
    case("make_pack returns None", "def make_pack():\n    return None\n", "make_pack() returned None, not a"),
    case(
        "make_pack returns a list",
        "def make_pack():\n    return []\n",
        "gave a list, not a windtunnel.api.Pack",
    ),
    # the Pack
    case("pack name empty", pack_of(name="''"), "a pack has name ''"),
    case("pack name number", pack_of(name="3"), "a pack has name 3"),
    case("scenarios a number", pack_of(scenarios="3"), "pack 'p': scenarios is a int; expected a list"),
    case("scenarios a string", pack_of(scenarios="'s'"), "pack 'p': scenarios is the string 's'"),
    case("scenarios hold a string", pack_of("'s'"), "pack 'p': scenarios holds a str, not a Scenario"),
    case("two scenarios one name", pack_of(scenario(), scenario()), "pack 'p' has two scenarios named 's'"),
    case(
        "mcp server not callable",
        pack_of(mcp_servers="{'x': 3}"),
        "mcp_servers['x'] is a int, not a function",
    ),
    case("mcp servers a list", pack_of(mcp_servers="[]"), "pack 'p': mcp_servers is a list"),
    case("unknown profile", pack_of(profiles="['nightly']"), "pack 'p' declares profile 'nightly'"),
    case("agent not AgentSetup", pack_of(agent="'x'"), "pack 'p': agent is a str"),
    # its MCP mocks' declarations beyond JSON tools (docs/design.md, "MCP mocks")
    case(
        "mock steps on a stateless server",
        "MockServer('m', [Tool(name='t', description='d', input_schema={}, handler=print, steps=[Log(data='x')])])\n",
        "pk/pack.py: MockServer 'm': tool 't' declares steps, which a stateless server cannot send",
    ),
    case("mock log level", "Log(data='x', level='loud')\n", "pk/pack.py: Log.level: is 'loud'"),
    case(
        "mock image not base64",
        "Image(data='not base64!', mime_type='image/png')\n",
        "pk/pack.py: Image: data is a string that is not base64",
    ),
    # its scenarios
    case("scenario name empty", pack_of(scenario(name="''")), "a scenario has name ''"),
    case("prompt empty", pack_of(scenario(prompt="''")), "scenario 's': prompt must be a non-empty string"),
    case("prompt a number", pack_of(scenario(prompt="3")), "scenario 's': prompt must be a non-empty string"),
    case("prompt with an empty turn", pack_of(scenario(prompt="['a', '']")), "prompt must be a non-empty"),
    case(
        "target facts a string", pack_of(scenario(target_facts="'abc'")), "target_facts is the string 'abc'"
    ),
    case("target facts empty group", pack_of(scenario(target_facts="[[]]")), "target_facts[0] is []"),
    case("tags a string", pack_of(scenario(tags="'urgent'")), "tags is the string 'urgent'"),
    case(
        "case kind gold",
        pack_of(scenario(reference_cases=f"[ReferenceCase(name='g', kind='gold', decisions=[{DONE}])]")),
        "scenario 's', reference case 'g': kind is 'gold'",
    ),
    case(
        "case without decisions",
        pack_of(scenario(reference_cases="[ReferenceCase(name='g', kind='golden', decisions=[])]")),
        "reference case 'g': has no decisions",
    ),
    case(
        "non-final decision without a call",
        pack_of(
            scenario(reference_cases=f"[ReferenceCase(name='g', kind='golden', decisions=[{DONE}, {DONE}])]")
        ),
        "decision 0: a non-final decision has no tool call",
    ),
    case(
        "final decision with a call",
        pack_of(scenario(reference_cases=f"[ReferenceCase(name='g', kind='golden', decisions=[{CALL}])]")),
        "decision 0: the final decision has tool calls",
    ),
    case(
        "arguments not JSON",
        pack_of(
            scenario(
                reference_cases="[ReferenceCase(name='g', kind='golden', decisions=[ReferenceDecision("
                "tool_calls=[ReferenceToolCall('t', {'a': float('nan')})]), ReferenceDecision(content='d')])]"
            )
        ),
        "tool call 't' has arguments that are not JSON-serialisable",
    ),
    case(
        "two cases one name",
        pack_of(scenario(reference_cases=f"[{GOLDEN}, {GOLDEN}]")),
        "case name 'g' is used",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_a_bad_pack_is_one_clear_line(case: Case, tmp_path: Path) -> None:
    run_case(case, tmp_path).refused(case.code, case.expect)
