"""Every verb's summary (in `wt --help` order) and description, and the one way verbs and their commands get
a parser from such text: listing the verbs imports no verb module."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, NamedTuple

from windtunnel._core.vocabulary import Exit

if TYPE_CHECKING:
    from windtunnel._config import Settings

SUMMARIES: dict[str, str] = {
    "run": "run scenarios against a runtime and grade them",
    "selftest": "run golden/poison reference cases through the live stack",
    "prove": "re-prove scenarios: negative controls, no leaked answer, grounded sources, gates that bite",
    "doctor": "bring-up diagnostics and the reset canary for one runtime",
    "certify": "certify runtimes: conformance, canary, selftest, tapes, then a signed bundle",
    "merge": "merge the shards of one sharded certification into one signed bundle",
    "verify": "verify a signed certification bundle offline",
    "report": "render a bundle's report.html (checks, evidence and conversations) and optionally open it",
    "tapes": "list, verify, promote and re-record model-traffic tapes",
    "gateway": "serve the OpenAI-compatible model gateway",
    "mcp": "serve or list a pack's MCP mock servers",
    "images": "bootstrap the base image, build Wind Tunnel's images, sweep leftovers",
}
"""A verb lives in windtunnel._cli.cmd_<verb> (register(commands) builds its parser, its handler imports
what it runs); its summary and description live here, so `wt --help` and `wt --version` import none of docker, pydantic,
httpx or cryptography. A verb module without an entry here still works: listing it imports it."""

DESCRIPTIONS: dict[str, str] = {
    "run": "Run the selected scenarios against a runtime. Exit 0 when every run passed its gate, "
    "1 when any failed or errored (a pack that could not be set up, a provision(), pre_run() or "
    "post_run() that raised: those runs are ERROR, and the report and ledger are still written), "
    "2 on bad input.",
    "selftest": "Reference self-tests: only inference is scripted; the agent loop, tools, fixtures, "
    "evidence and scoring stay live. Exit 0 every case PASS; 1 any GOLDEN_FAILED, POISON_PASSED or "
    "ERROR; 2 unsupported runtime, bad usage, or no reference cases selected.",
    "prove": "Re-proves every selected scenario: its golden cases pass the gate, each negative "
    "control fails it, nothing the agent sees gives the answer away, and every cited source resolves "
    "(a scenario with no source is shown 'assumed by the author'). Each proof is written to the proofs "
    "file as it is made. Cases are played through a reference-capable runtime (default: the bundled "
    "'reference' runtime, in containers) with only inference scripted, or in this process with --local. "
    "Exit 0 every scenario proved (and, with --mutate, no weak gate); 1 any defect, a scenario not "
    "proved in time, or a weak gate; 2 bad usage, nothing selected, or no reference case in the selection.",
    "doctor": "Checks, in order: the engine (containerised runtimes), the build, that every MCP mock "
    "of the selected packs lists its tools and, for a reference-capable runtime, that the runtime "
    "really calls one tool of every mock (scripted); that reset_state() works; and the reset canary "
    "(seed a nonce through a tool, reset, ask a fresh session to recall it and repeat the seed prompt). Exit 0 when healthy, 1 when a step fails (a leak "
    "is named), 2 on bad input. Reference-capable runtimes get scripted model replies; others need a "
    "live model behind them.",
    "certify": "Runs the stage plan (build, conformance, canary, selftest, tapes) for each runtime, with "
    "the bundled reference runtime as the harness's known-good control, then publishes a bundle in --out "
    "(and DIR.tar.gz beside it), signed with --key or WT_SIGNING_KEY (an ECDSA P-256 PKCS#8 PEM), or with "
    "an ephemeral key marked 'unverified dev key'. Exit codes: 0 certified (PASSED); 1 not certified "
    "(FAILED: a runtime failed a scored check); 2 bad usage, HARNESS_INVALID (Wind Tunnel's own "
    "self-checks failed: nothing is signed) or a fault of this machine (no engine, the engine went away, "
    "a full or read-only disk); 130, 143, 129 stopped by SIGINT, SIGTERM, SIGHUP after removing this "
    "run's containers and networks (the evidence recorded so far stays in --out, unsigned; a second "
    "signal exits at once). A runtime whose image does not build or that never gets ready is FAILED at "
    "its build stage, and the others are still certified. Without --runtime: the runtimes of [tool.windtunnel], else "
    "the bundled reference runtime.",
    "merge": "Merge the shard bundles of one plan (`wt certify --shard I/N`, directories or .tar.gz) into "
    "one bundle in --out, signed with --key or WT_SIGNING_KEY (else an ephemeral 'unverified dev key'). "
    "Every shard is verified against the keys given with --trust (default: the signer's own public key), "
    "never a key found inside a shard; the shards must be one per index of one plan digest. The verdict is "
    "recomputed from the shards' checks; each shard's bundle is kept whole under shards/<index>/ and the "
    "merged statement signs each shard's statement digest. Gate on it with `wt verify --require-passed`. "
    "Exit 0 merged and PASSED; 1 merged and FAILED, or a shard refused (missing, duplicated, extra, "
    "foreign, invalid or not signed by a trusted key: each is named); 2 bad usage (a path that is not a "
    "bundle, an unreadable key).",
    "verify": "Verify a certification bundle (its directory or .tar.gz) against a key you trust: "
    "--key with the signer's public key from your own store, or --key-fingerprint with the signer's "
    "fingerprint (SHA256:<hex>, the SHA-256 of the key's DER SubjectPublicKeyInfo, as `wt certify` "
    "prints it; the bundle's keys/signer.pub.pem is then used only if it has that fingerprint). It "
    "checks one DSSE signature over an in-toto statement, every file digest, the MANIFEST, agreement "
    "between checks.json, junit.xml and verdict.json, tape ages at run time, no credentials, and no "
    "host path, user or host name of this machine. Exit 0 when valid, 1 when invalid (the first reason "
    "is printed), 2 when the bundle, key or fingerprint cannot be read. A key taken from the bundle "
    "itself only proves integrity: a warning says so.",
    "report": "Render report.html for a certification bundle (its directory or .tar.gz): every check "
    "with its evidence, and the conversation behind each check and selftest case (the model's, the "
    "mocks' and the runtime's view of every tool call, side by side, differences marked). A bundle "
    "directory gets its own report.html, unless the bundle is signed and the page would change (then "
    "pass --out: report.html is a signed file); an archive's report goes beside it as NAME.report.html. "
    "The page is self-contained and loads nothing from the network.",
    "tapes": "Tapes are fingerprinted recordings of model traffic that the gateway replays, fail "
    "closed. Committed (golden) tapes live in each pack's tapes/ directory. See docs/tapes.md.",
    "gateway": "The model gateway every model call of a containerised runtime goes through.",
    "mcp": "The MCP mocks a pack declares: tools over fixture state, served with the official mcp "
    "SDK over streamable HTTP; every tools/call is recorded.",
    "images": "Container images, built with no network from a base image and host-built wheels.",
}
"""Each verb's `wt VERB --help` description; add_verb() makes every verb's parser from the two tables."""


def add_verb(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], name: str
) -> argparse.ArgumentParser:
    """The parser of verb `name`, with its summary as help and its description."""
    return commands.add_parser(name, help=SUMMARIES[name], description=DESCRIPTIONS[name])


Handler = Callable[[argparse.Namespace, "Settings"], int]
"""What runs a parsed command: its exit code from the arguments and the settings."""


class Command(NamedTuple):
    """A command of a verb group (`wt tapes verify`): its line in `wt VERB --help` and its own description.

    A group's commands are one table in the verb's module, beside the flags: their text needs names
    that only the verb's module imports, and listing the verbs never reads it."""

    summary: str
    description: str | None = None


class VerbGroup:
    """A verb with commands of its own (`wt tapes verify`); alone it prints its help on stderr, exit 2."""

    def __init__(
        self,
        commands: argparse._SubParsersAction[argparse.ArgumentParser],
        name: str,
        table: Mapping[str, Command],
        *,
        title: str = "commands",
    ) -> None:
        parser = add_verb(commands, name)

        def show_help(_args: argparse.Namespace, _settings: Settings) -> int:
            parser.print_help(sys.stderr)
            return Exit.USAGE

        parser.set_defaults(handler=show_help)
        self._table = table
        self._commands = parser.add_subparsers(
            title=title, metavar=title.upper().removesuffix("S"), parser_class=type(parser)
        )

    def add(self, name: str, handler: Handler) -> argparse.ArgumentParser:
        """The parser of command `name`, with its text from the group's table; `handler` runs it."""
        text = self._table[name]
        parser = self._commands.add_parser(name, help=text.summary, description=text.description)
        parser.set_defaults(handler=handler)
        return parser
