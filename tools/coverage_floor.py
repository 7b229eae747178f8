"""The coverage floor: every package of src/windtunnel at 70% or more, except the integration surface.

Reads coverage.py's JSON report (`coverage json`), adds the files up per package (windtunnel._bundle,
windtunnel._gateway, ...; modules directly under windtunnel/ count as `windtunnel`), prints a table, and
exits 1 when a package that is not exempt is below the floor. The exemptions, each with its reason, are
the table in CONTRIBUTING.md's "Integration-surface exemption" section: the one list, read from there.

    python tools/coverage_floor.py out/coverage.json [--floor 70] [--contributing CONTRIBUTING.md] [--report-only]

An exempt package that meets the floor is shown so, and its exemption should go; an exemption naming no
package that exists, or giving no reason, is an error.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

FLOOR = 70.0
SECTION = "## Integration-surface exemption"
ROW = re.compile(r"^\|\s*`(?P<package>windtunnel[\w.]*)`\s*\|\s*(?P<reason>[^|]*?)\s*\|\s*$")


@dataclass
class Tally:
    statements: int = 0
    covered: int = 0

    @property
    def percent(self) -> float:
        return 100.0 * self.covered / self.statements if self.statements else 100.0


def package_of(path: str) -> str | None:
    """`.../src/windtunnel/_bundle/models.py` -> `windtunnel._bundle`; top-level modules -> `windtunnel`."""
    parts = PurePosixPath(path.replace("\\", "/")).parts
    if "windtunnel" not in parts:
        return None
    inner = parts[len(parts) - 1 - parts[::-1].index("windtunnel") :]
    return "windtunnel" if len(inner) <= 2 else f"windtunnel.{inner[1]}"


def tally(report: dict[str, object]) -> dict[str, Tally]:
    files = report.get("files")
    if not isinstance(files, dict) or not files:
        raise SystemExit("coverage_floor: the report has no files; run `coverage json` after a measured run")
    totals: dict[str, Tally] = defaultdict(Tally)
    for path, data in files.items():
        package = package_of(path)
        if package is None:
            continue
        summary = data["summary"]
        totals[package].statements += int(summary["num_statements"])
        totals[package].covered += int(summary["covered_lines"])
    return dict(sorted(totals.items()))


def exemptions(contributing: Path) -> dict[str, str]:
    """package -> reason, from the table under the exemption heading (up to the next `## ` heading)."""
    lines = contributing.read_text(encoding="utf-8").splitlines()
    if SECTION not in lines:
        raise SystemExit(f"coverage_floor: {contributing} has no '{SECTION}' section")
    found: dict[str, str] = {}
    for line in lines[lines.index(SECTION) + 1 :]:
        if line.startswith("## "):
            break
        match = ROW.match(line.strip())
        if match:
            found[match["package"]] = match["reason"]
    return found


def check(totals: dict[str, Tally], exempt: dict[str, str], floor: float) -> tuple[list[str], list[str]]:
    """The table's lines and the problems that fail the floor."""
    lines = [f"{'package':28} {'stmts':>6} {'covered':>7} {'cover':>7}  status", "-" * 72]
    problems = [f"{p}: the exemption gives no reason" for p, reason in exempt.items() if not reason]
    problems += [f"{p}: exempt, but no such package was measured" for p in exempt if p not in totals]
    for package, count in totals.items():
        below = count.percent < floor
        if package in exempt:
            status = "exempt: " + (exempt[package] if below else "meets the floor; the exemption can go")
        elif below:
            status = f"BELOW the {floor:.0f}% floor"
            problems.append(f"{package}: {count.percent:.1f}% is below the {floor:.0f}% floor")
        else:
            status = "ok"
        lines.append(
            f"{package:28} {count.statements:6} {count.covered:7} {count.percent:6.1f}%  {status[:80]}"
        )
    every = Tally(sum(t.statements for t in totals.values()), sum(t.covered for t in totals.values()))
    lines.append(f"{'total':28} {every.statements:6} {every.covered:7} {every.percent:6.1f}%")
    return lines, problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path, help="coverage.py JSON report")
    parser.add_argument("--floor", type=float, default=FLOOR)
    parser.add_argument("--contributing", type=Path, default=Path("CONTRIBUTING.md"))
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="print the table, never fail (a run of a subset of the tests)",
    )
    args = parser.parse_args(argv)
    totals = tally(json.loads(args.report.read_text(encoding="utf-8")))
    lines, problems = check(totals, exemptions(args.contributing), args.floor)
    out = sys.stdout
    out.write("\n".join(lines) + "\n")
    for problem in problems:
        out.write(f"coverage floor: {problem}\n")
    if problems and args.report_only:
        out.write("coverage floor: not enforced (--report-only: a subset of the tests ran)\n")
        return 0
    if problems:
        out.write(
            "coverage floor: FAILED. Add tests for the package, or, for code that only runs inside "
            "containers, list it with its reason in CONTRIBUTING.md's integration-surface exemption\n"
        )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
