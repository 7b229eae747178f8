"""Bad CLI values for verify, tapes, gateway and mcp: each a one-line usage error (exit 2) naming the flag,
before anything listens, reads or writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.badinput.runner import Case, run_case

REPO = Path(__file__).resolve().parents[2]
PACK = str(REPO / "scenarios" / "support_desk")


CASES = [
    # wt gateway serve
    Case(
        "gateway port too big",
        ["gateway", "serve", "--port", "99999"],
        2,
        "--port: 99999 is not a port number",
    ),
    Case(
        "gateway port 65536", ["gateway", "serve", "--port", "65536"], 2, "--port: 65536 is not a port number"
    ),
    Case("gateway port negative", ["gateway", "serve", "--port=-1"], 2, "--port: -1 is not a port number"),
    Case(
        "gateway port word",
        ["gateway", "serve", "--port", "eighty"],
        2,
        "--port: 'eighty' is not a port number",
    ),
    Case(
        "gateway port float", ["gateway", "serve", "--port", "80.5"], 2, "--port: '80.5' is not a port number"
    ),
    Case("gateway port empty", ["gateway", "serve", "--port", ""], 2, "--port: '' is not a port number"),
    Case(
        "gateway port hex", ["gateway", "serve", "--port", "0x50"], 2, "--port: '0x50' is not a port number"
    ),
    Case(
        "gateway mode", ["gateway", "serve", "--mode", "mock"], 2, "argument --mode: invalid choice: 'mock'"
    ),
    # --side-model: a model name, neither empty nor padded with spaces
    *(
        Case(
            f"gateway side model {name!r}",
            ["gateway", "serve", "--side-model", name],
            2,
            f"--side-model: {name!r} is not a model name",
        )
        for name in ("", " haiku")
    ),
    Case(
        "gateway upstream not a url",
        ["gateway", "serve", "--mode", "live", "--upstream", "not-a-url"],
        2,
        "--upstream: 'not-a-url' is not an http(s) URL with a host",
    ),
    Case(
        "gateway upstream ftp",
        ["gateway", "serve", "--mode", "live", "--upstream", "ftp://host/v1"],
        2,
        "is not an http(s) URL with a host",
    ),
    Case(
        "gateway upstream no host",
        ["gateway", "serve", "--mode", "record", "--upstream", "http://"],
        2,
        "is not an http(s) URL with a host",
    ),
    Case(
        "gateway upstream bad port",
        ["gateway", "serve", "--mode", "live", "--upstream", "http://host:99999/v1"],
        2,
        "--upstream: 'http://host:99999/v1' is not a URL",
    ),
    Case(
        "gateway live without upstream",
        ["gateway", "serve", "--mode", "live"],
        2,
        "live mode needs --upstream",
    ),
    Case(
        "gateway replay without tape", ["gateway", "serve", "--mode", "replay"], 2, "replay mode needs --tape"
    ),
    Case(
        "gateway tape in script mode",
        ["gateway", "serve", "--tape", "x.jsonl"],
        2,
        "--tape applies to replay mode only",
    ),
    Case(
        "gateway upstream in script mode",
        ["gateway", "serve", "--upstream", "http://127.0.0.1:9/v1"],
        2,
        "--upstream does not apply to script mode",
    ),
    Case(
        "gateway max body words",
        ["gateway", "serve", "--port", "0"],
        2,
        "WT_MAX_BODY_BYTES='lots' is not a size in bytes",
        env={"WT_MAX_BODY_BYTES": "lots"},
    ),
    Case(
        "gateway max body zero",
        ["gateway", "serve", "--port", "0"],
        2,
        "WT_MAX_BODY_BYTES='0' is not a size in bytes",
        env={"WT_MAX_BODY_BYTES": "0"},
    ),
    Case(
        "gateway max body negative",
        ["gateway", "serve", "--port", "0"],
        2,
        "WT_MAX_BODY_BYTES='-5' is not a size in bytes",
        env={"WT_MAX_BODY_BYTES": "-5"},
    ),
    Case(
        "gateway max body unit",
        ["gateway", "serve", "--port", "0"],
        2,
        "WT_MAX_BODY_BYTES='8 parsecs' is not a size in bytes",
        env={"WT_MAX_BODY_BYTES": "8 parsecs"},
    ),
    Case(
        "gateway unknown flag",
        ["gateway", "serve", "--colour", "blue"],
        2,
        "unrecognized arguments: --colour",
    ),
    # wt mcp serve
    Case(
        "mcp port too big",
        ["mcp", "serve", "--pack", PACK, "--server", "orders", "--port", "99999"],
        2,
        "--port: 99999 is not a port number",
    ),
    Case(
        "mcp port word",
        ["mcp", "serve", "--pack", PACK, "--server", "orders", "--port", "http"],
        2,
        "--port: 'http' is not a port number",
    ),
    Case(
        "mcp no server", ["mcp", "serve", "--pack", PACK], 2, "the following arguments are required: --server"
    ),
    Case(
        "mcp max body",
        ["mcp", "serve", "--pack", PACK, "--server", "orders", "--port", "0"],
        2,
        "WT_MAX_BODY_BYTES='1.5MB' is not a size in bytes",
        env={"WT_MAX_BODY_BYTES": "1.5MB"},
    ),
    # the runner's environment
    *[
        Case(
            f"inject timeout {value!r}",
            ["run", "--runtime", "reference", "--pack", PACK],
            2,
            f"WT_INJECT_TIMEOUT_S={value!r} is not a number of seconds",
            env={"WT_INJECT_TIMEOUT_S": value, "DOCKER_HOST": "unix:///nonexistent/docker.sock"},
        )
        for value in ("abc", "nan", "inf", "-1", "0", "1e999", "7s")
    ],
    # wt verify
    Case(
        "verify no trust", ["verify", "{tmp}"], 2, "one of the arguments --key --key-fingerprint is required"
    ),
    Case("verify no bundle", ["verify", "--key-fingerprint", "SHA256:" + "a" * 64], 2, "required: BUNDLE"),
    Case(
        "verify missing bundle",
        ["verify", "{tmp}/absent", "--key-fingerprint", "SHA256:" + "a" * 64],
        2,
        "does not exist",
    ),
    Case(
        "verify both keys",
        ["verify", "{tmp}", "--key", "k.pem", "--key-fingerprint", "SHA256:" + "a" * 64],
        2,
        "not allowed with argument",
    ),
    Case(
        "verify format",
        ["verify", "{tmp}", "--key-fingerprint", "SHA256:" + "a" * 64, "--format", "yaml"],
        2,
        "invalid choice: 'yaml'",
    ),
    Case(
        "verify fingerprint md5",
        ["verify", "{tmp}", "--key-fingerprint", "MD5:" + "a" * 32],
        2,
        "is not a SHA-256 key fingerprint",
    ),
    Case(
        "verify fingerprint bare hex",
        ["verify", "{tmp}", "--key-fingerprint", "a" * 64],
        2,
        "is not a SHA-256 key fingerprint",
    ),
    Case(
        "verify fingerprint short",
        ["verify", "{tmp}", "--key-fingerprint", "SHA256:abc"],
        2,
        "is not a SHA-256 key fingerprint",
    ),
    Case(
        "verify fingerprint empty",
        ["verify", "{tmp}", "--key-fingerprint", ""],
        2,
        "is not a SHA-256 key fingerprint",
    ),
    Case(
        "verify fingerprint not hex",
        ["verify", "{tmp}", "--key-fingerprint", "SHA256:" + "g" * 64],
        2,
        "is not a SHA-256 key fingerprint",
    ),
    Case(
        "verify fingerprint long b64",
        ["verify", "{tmp}", "--key-fingerprint", "SHA256:" + "QUFB" * 20],
        2,
        "is not a SHA-256 key fingerprint",
    ),
    # wt tapes
    Case("tapes no verb", ["tapes", "shuffle"], 2, "invalid choice: 'shuffle'"),
    Case(
        "tapes expiring words",
        ["tapes", "verify", "--expiring-within", "soon"],
        2,
        "'soon' is not a number of days",
    ),
    Case(
        "tapes expiring negative",
        ["tapes", "verify", "--expiring-within=-3"],
        2,
        "'-3' is not a number of days",
    ),
    Case("tapes verify format", ["tapes", "verify", "--format", "xml"], 2, "invalid choice: 'xml'"),
    Case(
        "tapes rerecord upstream",
        ["tapes", "rerecord", "--tape", "{tmp}/t.jsonl", "--upstream", "localhost:11434"],
        2,
        "'localhost:11434' is not an http(s) URL with a host",
    ),
    Case(
        "tapes record upstream",
        ["tapes", "record", "--runtime", "reference", "--upstream", "not a url"],
        2,
        "'not a url' is not an http(s) URL with a host",
    ),
    Case(
        "tapes record both sources",
        ["tapes", "record", "--runtime", "reference", "--upstream", "http://x/v1", "--scripted-upstream"],
        2,
        "not allowed with argument",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_a_bad_cli_value_is_one_clear_line(case: Case, tmp_path: Path) -> None:
    run_case(case, tmp_path).refused(case.code, case.expect)
