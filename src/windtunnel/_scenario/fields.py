"""Shape checks of the authoring contract: every field holds the type it names, and a string is never a list.

Python iterates a string character by character, so `tools_must_not_call="issue_refund"` read as a
list would be ('i', 's', 's', ...), a check that can never fail. Sequence fields therefore keep a
string as it was given (windtunnel._core.frozen), and these checks refuse it with the fix. A wrong object
(`expect=Outcome(...)`) is refused the same way, naming the field, before anything reads it.
"""

from __future__ import annotations

from typing import Any

from windtunnel._core.tiers import TIERS, is_tier
from windtunnel._scenario.expectations import Benchmark, Expect, Outcome, Security, StateExpectation
from windtunnel.errors import ScenarioError


def shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class Fields:
    """Checks fields of one scenario (or one of its cases); each error names scenario, case, field and fix."""

    def __init__(self, scenario: str, case: str | None = None, decision: int | None = None) -> None:
        self.name = scenario
        self.case = case
        self.decision = decision

    def error(self, field: str, problem: str, hint: str) -> ScenarioError:
        where = f"scenario {self.name!r}"
        if self.case is not None:
            where += f", reference case {self.case!r}"
        if self.decision is not None:
            where += f", decision {self.decision}"
        return ScenarioError(
            f"{where}: {field} {problem}",
            hint=hint,
            scenario=self.name,
            case=self.case,
            decision_index=self.decision,
            field=field,
        )

    def sequence(self, field: str, value: Any, what: str, example: str) -> tuple[Any, ...]:
        """`value` must be a list (kept as a tuple); a bare string is refused, not split into characters."""
        if isinstance(value, str):
            raise self.error(
                field,
                f"is the string {shown(value)}; expected a list of {what} (a string would be read "
                "one character at a time)",
                f"wrap it in a list: {_leaf(field)}=[{value!r}]",
            )
        if not isinstance(value, tuple):
            raise self.error(field, f"is {_a(type(value).__name__)}; expected a list of {what}", example)
        return value

    def strings(self, field: str, value: Any, what: str) -> None:
        example = f'write {_leaf(field)}=["first", "second"]'
        for index, item in enumerate(self.sequence(field, value, what, example)):
            if not isinstance(item, str) or not item.strip():
                raise self.error(
                    f"{field}[{index}]", f"is {shown(item)}; expected a non-empty string", example
                )

    def items(self, field: str, value: Any, kind: type, hint: str) -> tuple[Any, ...]:
        found = self.sequence(field, value, f"{kind.__name__} values", hint)
        for index, item in enumerate(found):
            self.instance(f"{field}[{index}]", item, kind, hint)
        return found

    def instance(self, field: str, value: Any, kind: type, hint: str) -> None:
        if not isinstance(value, kind):
            found = f"is {_a(type(value).__name__)} ({shown(value)}); expected {_a(kind.__name__)}"
            raise self.error(field, found, hint)

    def text(self, field: str, value: Any, *, optional: bool = False) -> None:
        if not (isinstance(value, str) or (optional and value is None)):
            expected = "a string or None" if optional else "a string"
            raise self.error(field, f"is {shown(value)}; expected {expected}", f"write {_leaf(field)}='...'")

    def flag(self, field: str, value: Any) -> None:
        if not isinstance(value, bool):
            raise self.error(
                field, f"is {shown(value)}; expected True or False", f"write {_leaf(field)}=True"
            )

    def count(self, field: str, value: Any) -> None:
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            problem = f"is {shown(value)}; expected a whole number >= 0 or None"
            raise self.error(field, problem, f"write {_leaf(field)}=3")

    def share(self, field: str, value: Any) -> None:
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if value is not None and not (number and 0 < value <= 1):
            problem = f"is {shown(value)}; expected a share above 0 and at most 1, or None"
            raise self.error(field, problem, f"write {_leaf(field)}=0.8 (80% of the sent prefix from cache)")


def _a(name: str) -> str:
    return f"an {name}" if name[:1].upper() in "AEIOU" else f"a {name}"


def _leaf(field: str) -> str:
    return field.rsplit(".", 1)[-1].split("[", 1)[0]


def check_target_facts(fields: Fields, groups: Any) -> None:
    hint = 'write target_facts=[["refund issued", "refunded"], ["37.50"]]: a list of any-of groups'
    if isinstance(groups, str):
        problem = f"is the string {shown(groups)}; expected a list of any-of groups (lists of strings)"
        raise fields.error("target_facts", problem, f"write target_facts=[[{groups!r}]]")
    for index, group in enumerate(fields.sequence("target_facts", groups, "any-of groups", hint)):
        if isinstance(group, str):
            problem = f"is the string {shown(group)}; expected an any-of group, a list of strings"
            raise fields.error(
                f"target_facts[{index}]", problem, f"write [{group!r}] for a group of one fact"
            )
        fields.sequence(f"target_facts[{index}]", group, "strings (an any-of group)", hint)


def check_expect(fields: Fields, expect: Any) -> None:
    fields.instance(
        "expect", expect, Expect, "write expect=Expect(outcome=Outcome(...), security=Security(...))"
    )
    fields.instance("expect.outcome", expect.outcome, Outcome, "write Expect(outcome=Outcome(...))")
    fields.instance("expect.security", expect.security, Security, "write Expect(security=Security(...))")
    fields.instance("expect.benchmark", expect.benchmark, Benchmark, "write Expect(benchmark=Benchmark(...))")
    outcome, security, bench = expect.outcome, expect.security, expect.benchmark
    fields.flag("expect.outcome.must_succeed", outcome.must_succeed)
    hint = "write state=[StateExpectation('/billing/refunds/0/amount', 'equals', 37.5)]"
    for index, item in enumerate(fields.items("expect.outcome.state", outcome.state, StateExpectation, hint)):
        fields.text(f"expect.outcome.state[{index}].pointer", item.pointer)
    fields.strings("expect.security.tools_must_not_call", security.tools_must_not_call, "tool names")
    fields.strings("expect.security.expected_violations", security.expected_violations, "tool names")
    fields.strings("expect.benchmark.tools_not_expected", bench.tools_not_expected, "tool names")
    fields.strings("expect.benchmark.tools_expected", bench.tools_expected, "tool names")
    for name in ("max_tool_calls_hint", "token_budget", "llm_calls_expected"):
        fields.count(f"expect.benchmark.{name}", getattr(bench, name))
    for name in ("prompt_cache_min_share", "prompt_cache_expected_share"):
        fields.share(f"expect.benchmark.{name}", getattr(bench, name))


def check_tier(fields: Fields, tier: Any) -> None:
    if tier is not None and not is_tier(tier):
        raise fields.error(
            "tier",
            f"is {shown(tier)}; expected one of {', '.join(TIERS)} (or None for the pack's)",
            "write tier='smoke' (run tiers say when a case runs; what it asserts is expect=)",
        )
