"""`nox -s mcp_conformance`: the official MCP conformance suite's server scenarios against a Wind Tunnel mock.

`python -m tests.mcp_conformance.session` installs Node 22 and the pinned suite from npm (toolchain.py),
serves this directory's pack with `wt mcp serve` on 127.0.0.1, runs every server scenario of the suite
against it and judges each one: a scenario passes, or is listed in skipped_by_design.toml with its reason.
It prints the table of scenarios and exits 0 when every one is as expected, 1 when one is not, and 2 with
one line when the suite could not run (npm missing or the registry unreachable, the mock not starting).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import subprocess
import sys
import time
import tomllib
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.mcp_conformance.toolchain import SessionError, ensure_suite
from windtunnel._engine.mcp_suite_image import SUITE_PACKAGE, SUITE_VERSION

HERE = Path(__file__).resolve().parent
SKIPPED_FILE = HERE / "skipped_by_design.toml"
SERVER = "everything"
NOT_PASSING = frozenset({"FAILURE", "WARNING"})  # what the suite's own baseline counts as failing
SERVE_TIMEOUT_S = 60.0
SERVING = re.compile(r"serving MCP mock .* at (?P<url>http://\S+/mcp)")


@dataclass(frozen=True, slots=True, kw_only=True)
class Skip:
    """A scenario the mocks do not pass by design, the reason, and the capability it needs if any."""

    scenario: str
    reason: str
    capability: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Row:
    """One scenario's line in the session's table."""

    scenario: str
    result: str
    ok: bool
    note: str = ""


def load_skipped(path: Path = SKIPPED_FILE) -> dict[str, Skip]:
    """The `[[skipped]]` entries of `path` by scenario; SessionError naming the entry and field if malformed."""
    try:
        entries = tomllib.loads(path.read_text()).get("skipped", [])
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SessionError(f"{path}: cannot read it: {exc}") from exc
    skipped: dict[str, Skip] = {}
    for index, entry in enumerate(entries if isinstance(entries, list) else [entries]):
        skip = _skip(path, index, entry)
        if skip.scenario in skipped:
            raise SessionError(f"{path}: [[skipped]] #{index + 1} lists {skip.scenario!r} a second time")
        skipped[skip.scenario] = skip
    return skipped


def _skip(path: Path, index: int, entry: Any) -> Skip:
    where = f"{path}: [[skipped]] #{index + 1}"
    if not isinstance(entry, dict):
        raise SessionError(f"{where} is not a table")
    unknown = set(entry) - {"scenario", "reason", "capability"}
    if unknown:
        raise SessionError(
            f"{where} has unknown field(s) {', '.join(sorted(unknown))}; fields: scenario, reason, capability"
        )
    for field in ("scenario", "reason"):
        if not isinstance(entry.get(field), str) or not entry[field].strip():
            raise SessionError(f'{where} needs {field} = "..." (a non-empty string)')
    capability = entry.get("capability")
    if capability is not None and not isinstance(capability, str):
        raise SessionError(f'{where}: capability must be a string, such as "prompts"')
    return Skip(scenario=entry["scenario"], reason=entry["reason"], capability=capability)


def failure_of(checks: Sequence[Mapping[str, Any]]) -> str | None:
    """Why a scenario did not pass (its first FAILURE or WARNING check), or None when it passed."""
    if not checks:
        return "the scenario recorded no checks"
    for check in checks:
        if check.get("status") in NOT_PASSING:
            message = (
                check.get("errorMessage")
                or (check.get("details") or {}).get("message")
                or check.get("description")
            )
            return f"{check.get('status')} {check.get('id')}: {message}"
    return None


def judge(
    suite: Sequence[str],
    results: Mapping[str, Sequence[Mapping[str, Any]]],
    skipped: Mapping[str, Skip],
    announced: Collection[str],
) -> list[Row]:
    """Each scenario of the suite against the skip list and what the mock announced; stale entries last."""
    rows = [_row(name, results.get(name), skipped.get(name), announced) for name in suite]
    rows += [
        Row(
            scenario=name,
            result="not in the suite",
            ok=False,
            note=f"{SUITE_PACKAGE} {SUITE_VERSION} has no such scenario: remove it from {SKIPPED_FILE.name}",
        )
        for name in skipped
        if name not in suite
    ]
    return rows


def _row(
    name: str, checks: Sequence[Mapping[str, Any]] | None, skip: Skip | None, announced: Collection[str]
) -> Row:
    if checks is None:
        return Row(
            scenario=name,
            result="no result",
            ok=False,
            note="the suite wrote no checks.json for it (see suite.log)",
        )
    failure = failure_of(checks)
    result = "passed" if failure is None else "failed"
    if skip is None:
        return Row(scenario=name, result=result, ok=failure is None, note=failure or "")
    if skip.capability is not None and skip.capability in announced:
        note = f"listed as skipped, but the mock announces {skip.capability!r}, so it must pass: {failure or 'it does'}"
        return Row(scenario=name, result=result, ok=False, note=note)
    if failure is None:
        return Row(
            scenario=name,
            result=result,
            ok=False,
            note=f"listed as skipped by design but passes: remove it from {SKIPPED_FILE.name}",
        )
    return Row(scenario=name, result=result, ok=True, note=f"skipped by design: {skip.reason}")


def table(rows: Sequence[Row]) -> str:
    width = max((len(row.scenario) for row in rows), default=8)
    lines = [f"{'scenario':<{width}}  {'suite':<16}  verdict"]
    for row in rows:
        verdict = "ok" if row.ok else "UNEXPECTED"
        lines.append(
            f"{row.scenario:<{width}}  {row.result:<16}  {verdict}{'  ' + row.note if row.note else ''}"
        )
    return "\n".join(lines)


def summary(rows: Sequence[Row]) -> str:
    passed = sum(row.ok and row.result == "passed" for row in rows)
    skipped = sum(row.ok and row.result != "passed" for row in rows)
    unexpected = sum(not row.ok for row in rows)
    return (
        f"mcp_conformance: {passed} passed, {skipped} skipped by design, {unexpected} unexpected "
        f"({SUITE_PACKAGE} {SUITE_VERSION}, every server scenario)"
    )


@contextlib.contextmanager
def serving(log: Path) -> Iterator[str]:
    """`wt mcp serve` of this directory's pack on a free loopback port; yields its MCP URL, stops it after."""
    wt = Path(sys.executable).with_name("wt")
    command = [str(wt)] if wt.is_file() else [sys.executable, "-m", "windtunnel._cli.main"]
    argv = [
        *command,
        "mcp",
        "serve",
        "--pack",
        str(HERE),
        "--server",
        SERVER,
        "--host",
        "127.0.0.1",
        "--port",
        "0",
    ]
    with log.open("wb") as sink:
        process = subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT)
    try:
        yield _served_url(process, log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _served_url(process: subprocess.Popen[bytes], log: Path) -> str:
    deadline = time.monotonic() + SERVE_TIMEOUT_S
    while time.monotonic() < deadline:
        match = SERVING.search(log.read_text(errors="replace"))
        if match:
            return match["url"]
        if process.poll() is not None:
            tail = " | ".join(log.read_text(errors="replace").strip().splitlines()[-3:])
            raise SessionError(f"`wt mcp serve` exited with {process.returncode} before serving: {tail}")
        time.sleep(0.1)
    raise SessionError(
        f"`wt mcp serve` did not say where it serves within {SERVE_TIMEOUT_S:g} s (log: {log})"
    )


INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "wt-session", "version": "1"},
    },
}
"""A 2025-11-25 initialize request, as the suite's client sends it."""
ACCEPT = {"Accept": "application/json, text/event-stream"}


def announced_capabilities(url: str) -> set[str]:
    """The capabilities the mock announces in its initialize result."""
    try:
        reply = httpx.post(url, json=INITIALIZE, headers=ACCEPT, timeout=10)
        return set(rpc_body(reply.headers.get("content-type", ""), reply.text)["result"]["capabilities"])
    except (httpx.HTTPError, ValueError, KeyError, TypeError, StopIteration) as exc:
        raise SessionError(f"the mock at {url} did not answer initialize with capabilities: {exc!r}") from exc


def rpc_body(content_type: str, text: str) -> Any:
    """The JSON-RPC message of an answer: the body, or the data of an SSE answer's message event (a mock
    with sessions answers on an SSE stream, whose first event is an empty priming one)."""
    if not content_type.startswith("text/event-stream"):
        return json.loads(text)
    data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
    return json.loads(next(item for item in data if item))


def run(node_dir: Path, out: Path) -> list[Row]:
    skipped = load_skipped()
    suite = ensure_suite(node_dir)
    out.mkdir(parents=True, exist_ok=True)
    with serving(out / "mock.log") as url:
        announced = announced_capabilities(url)
        results = suite.run_all(url, out / "results")
    return judge(suite.scenarios(), results, skipped, announced)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.mcp_conformance.session", description=__doc__)
    parser.add_argument(
        "--node-dir",
        type=Path,
        default=Path(".nox/mcp_conformance/node"),
        help="where npm installs Node and the suite",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("out/mcp-conformance"),
        help="results, the suite's log and the mock's log",
    )
    args = parser.parse_args(argv)
    try:
        rows = run(args.node_dir.resolve(), args.out.resolve())
    except SessionError as exc:
        print(f"mcp_conformance: {exc}", file=sys.stderr)
        return 2
    report = f"{table(rows)}\n\n{summary(rows)}"
    (args.out / "summary.txt").write_text(report + "\n")
    print(report)
    return 0 if all(row.ok for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
