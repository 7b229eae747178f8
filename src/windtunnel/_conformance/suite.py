"""The conformance suite's data: versioned requirement sets, the poison map, and expected failures.

`Suite.judge(runtime, check, status)` states what the suite expects, so pytest, `wt certify` and the tests
of the suite itself agree on one rule:
- a poison runtime must fail exactly the check named for it and pass every other check; one of
  poisons.toml's [catches_only] runs only the checks named for it (its class is proven precise elsewhere);
- a listed expected failure must not pass (a listed check that starts passing fails the suite);
- every other scored check must pass; an error is Wind Tunnel's fault, never the runtime's;
- INFO (the required part held, an optional part is absent) is never a failure and never a pass: it
  meets "must pass" and does not count as a poison caught.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from windtunnel._config import SUITE_VERSION
from windtunnel._conformance.kit import CHECK_IDS
from windtunnel._core.vocabulary import CheckStatus
from windtunnel.errors import ConfigFileError

_HOLDS = frozenset({CheckStatus.PASSED, CheckStatus.INFO})
"""The statuses that meet a requirement: passed, or info (what the contract calls optional is absent)."""


@dataclass(frozen=True, slots=True)
class RequirementSet:
    version: str
    scored: tuple[str, ...]
    stages: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Judgement:
    ok: bool
    expected: str
    message: str


def _read(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigFileError(
            f"{path} is missing", hint="restore it from the repository", path=str(path)
        ) from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigFileError(
            f"{path} is not valid TOML: {exc}", hint="fix the syntax", path=str(path)
        ) from exc


def load_requirement_set(directory: Path, version: str) -> RequirementSet:
    path = directory / "requirements" / f"v{version}.toml"
    data = _read(path)
    scored = tuple(data.get("scored", []))
    unknown = sorted(set(scored) - set(CHECK_IDS))
    if unknown:
        raise ConfigFileError(
            f"{path}: scored names unknown checks {unknown}",
            hint=f"use ids from {list(CHECK_IDS)}",
            path=str(path),
            field="scored",
        )
    return RequirementSet(
        version=str(data.get("version", version)), scored=scored, stages=tuple(data.get("stages", []))
    )


def known_runtimes(directory: Path) -> frozenset[str]:
    """Runtimes a suite may name: every runtime.toml under the project's runtimes/ (the directory next to
    the suite's), the runtimes its config lists, and every runtime registered under the
    `windtunnel.runtimes` entry-point group."""
    from windtunnel._config import load_settings
    from windtunnel._runtimes.registry import available_runtimes
    from windtunnel._runtimes.resolve import runtime_manifests

    manifests = runtime_manifests(directory.resolve().parent)
    configured = load_settings(directory.resolve()).runtimes
    return (
        frozenset(m.name for m in manifests)
        | frozenset(entry.name for entry in configured)
        | frozenset(available_runtimes())
    )


def _named(path: Path, where: str, runtime: str, check: str, runtimes: frozenset[str]) -> None:
    """Refuse an entry that names a check or a runtime that does not exist: it could never match."""
    if check not in CHECK_IDS:
        _unknown(path, where, "check", check, hint=f"use ids from {list(CHECK_IDS)}")
    if runtime not in runtimes:
        _unknown(
            path,
            where,
            "runtime",
            runtime,
            hint=f"use a runtime under runtimes/ or a registered one: {sorted(runtimes)}",
        )


def _unknown(path: Path, where: str, kind: str, name: str, *, hint: str) -> NoReturn:
    raise ConfigFileError(
        f"{path}: {where} names unknown {kind} {name!r}", hint=hint, path=str(path), field=where
    )


def _expected_failures(path: Path, runtimes: frozenset[str]) -> dict[tuple[str, str], str]:
    expected: dict[tuple[str, str], str] = {}
    for index, entry in enumerate(_read(path).get("expected", [])):
        runtime, check = str(entry.get("runtime", "")), str(entry.get("check", ""))
        reason = str(entry.get("reason", "")).strip()
        if not reason:
            raise ConfigFileError(
                f"{path}: the entry for {runtime}/{check} has no reason",
                hint="every expected failure says why",
                path=str(path),
                field="reason",
            )
        _named(path, f"expected[{index}]", runtime, check, runtimes)
        expected[(runtime, check)] = reason
    return expected


def _poisons(path: Path, runtimes: frozenset[str], table: str = "catches") -> dict[str, tuple[str, ...]]:
    """poisons.toml's [catches] (or another table of its form, [catches_only]): each poison runtime -> the
    check it must fail, or a list of them."""
    caught_by: dict[str, tuple[str, ...]] = {}
    for runtime, value in _read(path).get(table, {}).items():
        checks = tuple(str(v) for v in value) if isinstance(value, list) else (str(value),)
        if not checks:
            raise ConfigFileError(
                f"{path}: {runtime} names no check",
                hint="name the check it must fail",
                path=str(path),
                field=runtime,
            )
        for check in checks:
            _named(path, str(runtime), str(runtime), check, runtimes)
        caught_by[str(runtime)] = checks
    return caught_by


def _only_named(
    path: Path, runtimes: frozenset[str], caught_by: Mapping[str, Any]
) -> dict[str, tuple[str, ...]]:
    """poisons.toml's [catches_only]: poisons that run only the checks named for them (their class's
    precision over every other check is proven elsewhere, e.g. by the reference's poison of that class);
    a poison listed in [catches] too is refused, as it could not be both."""
    only = _poisons(path, runtimes, "catches_only")
    both = sorted(set(only) & set(caught_by))
    if both:
        raise ConfigFileError(
            f"{path}: {both[0]} is listed in [catches] and in [catches_only]",
            hint="keep it in one table: [catches_only] when it runs only the checks named for it",
            path=str(path),
            field=both[0],
        )
    return only


@dataclass(frozen=True, slots=True)
class Suite:
    """`poisons` maps each poison to the check it is named for; `caught_by` to every check it must fail
    (that one first; more when its fault breaks another check's requirement too, as hiding calls does)."""

    requirements: RequirementSet
    poisons: Mapping[str, str] = field(default_factory=dict)
    expected_failures: Mapping[tuple[str, str], str] = field(default_factory=dict)
    caught_by: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    only_named: frozenset[str] = frozenset()
    """Poisons of [catches_only]: they run only the checks named for them (proves_nothing)."""

    @classmethod
    def load(
        cls,
        directory: Path,
        version: str = SUITE_VERSION,
        *,
        runtimes: frozenset[str] | None = None,
    ) -> Suite:
        """The suite in `directory`; poisons and expected failures must name existing checks and runtimes
        (`runtimes`, by default `known_runtimes(directory)`)."""
        requirements = load_requirement_set(directory, version)
        known = known_runtimes(directory) if runtimes is None else runtimes
        caught_by = _poisons(directory / "poisons.toml", known)
        only = _only_named(directory / "poisons.toml", known, caught_by)
        caught_by |= only
        expected = _expected_failures(directory / "expected_failures.toml", known)
        return cls(
            requirements=requirements,
            poisons={runtime: checks[0] for runtime, checks in caught_by.items()},
            expected_failures=expected,
            caught_by=caught_by,
            only_named=frozenset(only),
        )

    def is_poison(self, runtime: str) -> bool:
        return runtime in self.poisons

    def proves_nothing(self, runtime: str, check: str) -> bool:
        """A check a poison's run would prove nothing by, which the suite leaves out:
        - a poison on an unscored check it is not named for: that check decides no verdict, so the poison
          passing it proves nothing about the poison's precision (these are the fault checks, each a fresh
          container and scripted waits, and were most of the suite's time);
        - a poison of [catches_only] on any check it is not named for: its class's precision is proven
          elsewhere (poisons.toml says where), so it runs only the checks that must catch it."""
        if not self.is_poison(runtime):
            return False
        named = self.caught_by.get(runtime) or (self.poisons[runtime],)
        if runtime in self.only_named:
            return check not in named
        return check not in self.requirements.scored and check not in named

    def judge(self, runtime: str, check: str, status: CheckStatus) -> Judgement:
        if status is CheckStatus.ERROR:
            return Judgement(
                False, "no harness error", f"Wind Tunnel itself failed while checking {check} on {runtime}"
            )
        caught_by = self.caught_by.get(runtime) or (
            (self.poisons[runtime],) if runtime in self.poisons else None
        )
        if caught_by is not None:
            return self._judge_poison(runtime, check, status, caught_by)
        reason = self.expected_failures.get((runtime, check))
        if reason is not None:
            ok = status is not CheckStatus.PASSED
            return Judgement(
                ok,
                f"expected failure ({reason})",
                ""
                if ok
                else f"{runtime}/{check} is listed as an expected failure but now passes: remove it from "
                "conformance/expected_failures.toml",
            )
        if check not in self.requirements.scored:
            return Judgement(True, "observation", "unscored")
        ok = status in _HOLDS
        return Judgement(
            ok,
            CheckStatus.PASSED.value,
            "" if ok else f"{runtime} does not pass the scored check {check} ({status})",
        )

    def _judge_poison(
        self, runtime: str, check: str, status: CheckStatus, caught_by: tuple[str, ...]
    ) -> Judgement:
        """A poison must fail each check named for it and hold every other scored one it runs (a
        [catches_only] poison's other checks are observations: its precision is proven elsewhere)."""
        if check in caught_by:
            ok = status is CheckStatus.FAILED
            return Judgement(
                ok,
                CheckStatus.FAILED.value,
                "poison caught"
                if ok
                else f"poison {runtime} was not caught by {check} (status {status}): the check does not bite",
            )
        if self.proves_nothing(runtime, check):  # the one rule the suite also skips such checks by
            only = runtime in self.only_named
            why = (
                f"not named for [catches_only] poison {runtime}"
                if only
                else f"unscored, not named for {runtime}"
            )
            return Judgement(True, "observation", why)
        ok = status in _HOLDS
        named = " and ".join(caught_by)
        return Judgement(
            ok,
            CheckStatus.PASSED.value,
            "" if ok else f"poison {runtime} broke {check} too ({status}): it must fail exactly {named}",
        )
