"""The conformance suite's data: versioned requirement sets, the poison map, and expected failures.

`Suite.judge(runtime, check, status)` states what the suite expects, so pytest, `wt certify` and the tests
of the suite itself agree on one rule:
- a poison runtime must fail exactly the check named for it and pass every other check;
- a listed expected failure must not pass (a listed check that starts passing fails the suite);
- every other scored check must succeed; HARNESS_ERROR is Wind Tunnel's fault, never the runtime's.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from windtunnel._conformance.kit import CHECK_IDS
from windtunnel._conformance.model import CheckStatus
from windtunnel.errors import ConfigFileError


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


@dataclass(frozen=True, slots=True)
class Suite:
    requirements: RequirementSet
    poisons: Mapping[str, str] = field(default_factory=dict)
    expected_failures: Mapping[tuple[str, str], str] = field(default_factory=dict)

    @classmethod
    def load(cls, directory: Path, version: str = "1") -> Suite:
        requirements = load_requirement_set(directory, version)
        poisons = dict(_read(directory / "poisons.toml").get("catches", {}))
        for runtime, check in poisons.items():
            if check not in CHECK_IDS:
                raise ConfigFileError(
                    f"{directory / 'poisons.toml'}: {runtime} names unknown check {check!r}",
                    hint=f"use ids from {list(CHECK_IDS)}",
                    field=runtime,
                )
        expected: dict[tuple[str, str], str] = {}
        for entry in _read(directory / "expected_failures.toml").get("expected", []):
            reason = str(entry.get("reason", "")).strip()
            if not reason:
                raise ConfigFileError(
                    f"{directory / 'expected_failures.toml'}: the entry for {entry.get('runtime')}/{entry.get('check')} "
                    "has no reason",
                    hint="every expected failure says why",
                    field="reason",
                )
            expected[(str(entry["runtime"]), str(entry["check"]))] = reason
        return cls(requirements=requirements, poisons=poisons, expected_failures=expected)

    def is_poison(self, runtime: str) -> bool:
        return runtime in self.poisons

    def judge(self, runtime: str, check: str, status: CheckStatus) -> Judgement:
        if status is CheckStatus.HARNESS_ERROR:
            return Judgement(
                False, "no harness error", f"Wind Tunnel itself failed while checking {check} on {runtime}"
            )
        named = self.poisons.get(runtime)
        if named is not None:
            if check == named:
                ok = status is CheckStatus.FAILURE
                return Judgement(
                    ok,
                    "FAILURE",
                    "poison caught"
                    if ok
                    else f"poison {runtime} was not caught by {check} (status {status}): the check does not bite",
                )
            ok = status is CheckStatus.SUCCESS
            return Judgement(
                ok,
                "SUCCESS",
                "" if ok else f"poison {runtime} broke {check} too ({status}): it must fail exactly {named}",
            )
        reason = self.expected_failures.get((runtime, check))
        if reason is not None:
            ok = status is not CheckStatus.SUCCESS
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
        ok = status is CheckStatus.SUCCESS
        return Judgement(
            ok, "SUCCESS", "" if ok else f"{runtime} does not pass the scored check {check} ({status})"
        )
