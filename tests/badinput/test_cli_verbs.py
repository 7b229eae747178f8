"""Bad CLI values for the verbs that run things (certify, run, prove, selftest, doctor, images, report): each a
one-line usage error (exit 2) naming the flag or the path and the fix, before anything starts. Output paths
that cannot be written (a file in the way, a foreign directory) are refused the same way; no engine is
needed for any of them (DOCKER_HOST points nowhere, so a case that reached the engine would say so)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.badinput.runner import Case, run_case

REPO = Path(__file__).resolve().parents[2]
PACK = str(REPO / "scenarios" / "artifacts")
NO_ENGINE = {"DOCKER_HOST": "unix:///nonexistent/wt-no-engine.sock"}
COUNT = "is not a whole number (1 or more)"
RANGE = "is out of range: give 1 to 100000"
EMPTY = "an empty path names nothing"


def files(tmp: Path) -> None:
    (tmp / "afile").write_text("x", encoding="utf-8")
    (tmp / "foreign").mkdir()
    (tmp / "foreign" / "mine.txt").write_text("mine", encoding="utf-8")


def case(id_: str, argv: list[str], expect: str) -> Case:
    return Case(id_, [arg.replace("{pack}", PACK) for arg in argv], 2, expect, setup=files, env=NO_ENGINE)


RUN = ["run", "--runtime", "in_memory", "--pack", "{pack}"]
CASES = [
    # wt run: counts, choices, paths, runtimes, selection
    case("run runs zero", [*RUN, "--runs", "0"], f"--runs: 0 {RANGE}"),
    case("run runs negative", [*RUN, "--runs=-2"], f"--runs: -2 {RANGE}"),
    case("run runs word", [*RUN, "--runs", "many"], f"--runs: 'many' {COUNT}"),
    case("run runs float", [*RUN, "--runs", "1.5"], f"--runs: '1.5' {COUNT}"),
    case("run runs huge", [*RUN, "--runs", "1000000"], f"--runs: 1000000 {RANGE}"),
    case("run runs empty", [*RUN, "--runs", ""], f"--runs: '' {COUNT}"),
    case("run concurrency zero", [*RUN, "--max-concurrency", "0"], f"--max-concurrency: 0 {RANGE}"),
    case("run concurrency word", [*RUN, "--max-concurrency", "all"], f"--max-concurrency: 'all' {COUNT}"),
    case("run flaky retries negative", [*RUN, "--flaky-retries=-1"], "--flaky-retries: -1 is out of range"),
    case("run flaky retries word", [*RUN, "--flaky-retries", "x"], "--flaky-retries: 'x' is not a whole"),
    case("run flaky retries huge", [*RUN, "--flaky-retries", "101"], "give 0 to 100"),
    case(
        "run scheduler", [*RUN, "--scheduler", "parallel"], "argument --scheduler: invalid choice: 'parallel'"
    ),
    case("run format", [*RUN, "--format", "xml"], "argument --format: invalid choice: 'xml'"),
    case("run runs-dir empty", [*RUN, "--runs-dir", ""], f"--runs-dir: {EMPTY}"),
    case("run out empty", [*RUN, "--out", ""], f"--out: {EMPTY}"),
    case(
        "run out a directory",
        [*RUN, "--out", "{tmp}"],
        "is a directory; --out names the report file to write",
    ),
    case("run no runtime", ["run"], "the following arguments are required: --runtime"),
    case("run runtime empty", ["run", "--runtime", ""], "the runtime is named by an empty string"),
    case("run runtime unknown", ["run", "--runtime", "no-such"], "no runtime named 'no-such'"),
    case(
        "run runtime path",
        ["run", "--runtime", "./nowhere/x"],
        "there is no runtime directory or runtime.toml",
    ),
    case(
        "run runtime module",
        ["run", "--runtime", "no_such_mod:thing"],
        "cannot be loaded: ModuleNotFoundError",
    ),
    case("run runtime attr", ["run", "--runtime", "windtunnel:nothing"], "cannot be loaded: AttributeError"),
    case(
        "run pack path",
        ["run", "--runtime", "in_memory", "--pack", "./no/pack"],
        "there is no pack directory",
    ),
    case("run pack name", ["run", "--runtime", "in_memory", "--pack", "nosuchpack"], "no packs were loaded"),
    case("run scenario", [*RUN, "--scenario", "nope*"], "--scenario 'nope*' matches nothing"),
    case("run tag", [*RUN, "--tag", "nope"], "--tag 'nope' matches nothing"),
    case("run owner", [*RUN, "--owner", "nobody"], "--owner 'nobody' matches nothing"),
    # wt selftest and wt doctor
    case("selftest no runtime", ["selftest"], "the following arguments are required: --runtime"),
    case("selftest runtime unknown", ["selftest", "--runtime", "no-such"], "no runtime named 'no-such'"),
    case(
        "selftest format",
        ["selftest", "--runtime", "in_memory", "--format", "yaml"],
        "invalid choice: 'yaml'",
    ),
    case("selftest runs-dir empty", ["selftest", "--runtime", "in_memory", "--runs-dir", ""], EMPTY),
    case("doctor no runtime", ["doctor"], "the following arguments are required: --runtime"),
    case("doctor runtime unknown", ["doctor", "--runtime", "no-such"], "no runtime named 'no-such'"),
    case("doctor runtime empty", ["doctor", "--runtime", ""], "the runtime is named by an empty string"),
    # wt prove
    case("prove deadline word", ["prove", "--deadline-at", "tomorrow"], "'tomorrow' is not an ISO 8601 time"),
    case("prove deadline no zone", ["prove", "--deadline-at", "2026-01-01T00:00:00"], "has no time zone"),
    case(
        "prove local and runtime", ["prove", "--local", "--runtime", "reference"], "not allowed with argument"
    ),
    case("prove both modes", ["prove", "--certification", "--development"], "not allowed with argument"),
    case("prove format", ["prove", "--format", "junit"], "argument --format: invalid choice: 'junit'"),
    case(
        "prove proofs empty", ["prove", "--local", "--pack", "{pack}", "--proofs", ""], f"--proofs: {EMPTY}"
    ),
    case("prove runtime unknown", ["prove", "--pack", "{pack}", "--runtime", "no-such"], "no runtime named"),
    # wt certify
    case("certify out empty", ["certify", "--out", ""], f"--out: {EMPTY}"),
    case("certify out a file", ["certify", "--out", "{tmp}/afile"], "afile is a file, not a directory"),
    case(
        "certify out under a file",
        ["certify", "--out", "{tmp}/afile/sub"],
        "which is a file, not a directory",
    ),
    case("certify out foreign", ["certify", "--out", "{tmp}/foreign"], "holds no Wind Tunnel bundle"),
    case(
        "certify executor",
        ["certify", "--executor", "kubernetes"],
        "argument --executor: invalid choice: 'kubernetes'",
    ),
    case(
        "certify unknown runtime", ["certify", "--runtime", "no-such", "--out", "{tmp}/o"], "no runtime named"
    ),
    case(
        "certify empty runtime",
        ["certify", "--executor", "host", "--runtime", "", "--out", "{tmp}/o"],
        "named by an empty string",
    ),
    case(
        "certify key missing",
        ["certify", "--key", "{tmp}/no.pem", "--out", "{tmp}/o"],
        "cannot read the signing",
    ),
    case("certify key a directory", ["certify", "--key", "{tmp}", "--out", "{tmp}/o"], "Is a directory"),
    case("certify key not a key", ["certify", "--key", "{tmp}/afile", "--out", "{tmp}/o"], "signing key"),
    case("certify key empty", ["certify", "--key", "", "--out", "{tmp}/o"], f"--key: {EMPTY}"),
    # wt certify --shard / --print-plan, wt merge
    *(
        case(
            f"certify shard {spec}",
            ["certify", "--shard", spec, "--out", "{tmp}/o"],
            "expected I/N with 1 <= I <= N",
        )
        for spec in ("0/2", "3/2", "x/y", "1/0")
    ),
    case("certify print-plan zero", ["certify", "--print-plan", "0"], f"--print-plan: 0 {RANGE}"),
    case("merge no shard", ["merge", "--out", "{tmp}/o"], "the following arguments are required: SHARD"),
    case("merge missing", ["merge", "{tmp}/nothing", "--out", "{tmp}/o"], "nothing does not exist"),
    case("merge not a bundle", ["merge", "{tmp}/foreign", "--out", "{tmp}/o"], "is not a bundle"),
    case("merge not an archive", ["merge", "{tmp}/afile", "--out", "{tmp}/o"], "is not a bundle archive"),
    case(
        "merge trust missing",
        ["merge", "{tmp}/afile", "--trust", "{tmp}/no.pem", "--out", "{tmp}/o"],
        "no.pem",
    ),
    case("merge no out", ["merge", "{tmp}/afile"], "the following arguments are required: --out"),
    # wt images and wt report
    case("images action", ["images", "frobnicate"], "argument ACTION: invalid choice: 'frobnicate'"),
    case(
        "images build runtime dir", ["images", "build", "--runtime", "{tmp}/nothing"], "no runtime directory"
    ),
    case(
        "images build runtime name", ["images", "build", "--runtime", "no-such"], "no runtime named 'no-such'"
    ),
    case("images build cache empty", ["images", "build", "--cache-dir", ""], f"--cache-dir: {EMPTY}"),
    case("report missing", ["report", "{tmp}/nothing"], "does not exist"),
    case("report out empty", ["report", "{tmp}", "--out", ""], f"--out: {EMPTY}"),
    # wt itself
    case("unknown verb", ["nonsense"], "argument VERB: invalid choice: 'nonsense'"),
    case("unknown flag", ["--debugx"], "unrecognized arguments: --debugx"),
    case("NUL in a path", [*RUN, "--runs-dir", "a\0b"], "holds a NUL character"),
]


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_a_bad_value_for_a_verb_that_runs_things_is_one_clear_line(case: Case, tmp_path: Path) -> None:
    run_case(case, tmp_path).refused(case.code, case.expect)
