"""Grounded sources: files, rules and requirements resolve by their quoted words; assumptions count unless blank."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from windtunnel._packs.loader import load_pack
from windtunnel._prove.grounding import ground, resolve
from windtunnel.api import Pack, Scenario, Source

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "prove_packs"
REPO = Path(__file__).resolve().parents[2]


def shop() -> Pack:
    return load_pack(str(FIXTURES / "shop"))


def test_a_file_source_resolves_whitespace_normalised_and_records_the_files_digest() -> None:
    pack = shop()
    grounding = ground(pack, pack.scenario("charge_basket"))
    policy = (FIXTURES / "shop" / "POLICY.md").read_bytes()
    file, rule = grounding.sources
    assert (file.resolved, file.counts, file.reason) == (True, True, None)
    assert file.quote == "charge the whole   basket"  # kept as the author wrote it
    assert file.matched_digest == "sha256:" + hashlib.sha256(policy).hexdigest()
    assert (rule.resolved, rule.field, rule.kind, rule.ref) == (True, "sources[1]", "rule", "whole-basket")
    assert rule.matched_digest == "sha256:" + hashlib.sha256(pack.rules["whole-basket"].encode()).hexdigest()
    assert not grounding.unresolved and not grounding.assumed_by_author


def test_unresolved_sources_say_which_and_why() -> None:
    pack = shop()
    file, rule = ground(pack, pack.scenario("source_unresolved")).unresolved
    assert (file.field, file.resolved, file.matched_digest) == ("sources[0]", False, None)
    assert file.reason == "file 'POLICY.md' does not contain the quoted words"
    assert rule.reason == "the pack has no rule 'split-charges' (its rules: whole-basket)"


def test_a_blank_assumption_does_not_count_so_the_scenario_is_assumed_by_the_author() -> None:
    pack = shop()
    grounding = ground(pack, pack.scenario("assumed"))
    assert grounding.assumed_by_author and not grounding.unresolved
    assert grounding.sources[0].reason == "a blank assumption does not count as a source"
    no_sources = Scenario(name="bare", prompt="p")
    assert ground(pack, no_sources).assumed_by_author


def test_a_written_assumption_counts() -> None:
    result = resolve(shop(), 0, Source(kind="assumption", quote="Baskets are charged in one go."))
    assert (result.resolved, result.counts, result.matched_digest) == (True, True, None)


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        (
            Source(kind="file", path="MISSING.md", quote="x"),
            "file 'MISSING.md' cannot be read under the pack root",
        ),
        (Source(kind="file", path="../shop/../../README.md", quote="x"), "leads outside the pack root"),
        (Source(kind="file", quote="x"), "a file source names no path"),
        (Source(kind="file", path="POLICY.md", quote="  "), "it quotes no words"),
        (Source(kind="rule", quote="x"), "it names no ref"),
        (
            Source(kind="requirement", ref="r1", quote="x"),
            "the pack has no requirement 'r1' (its requirements: none)",
        ),
        (
            Source(kind="rule", ref="whole-basket", quote="charge THE whole basket"),
            "rule 'whole-basket' does not contain",
        ),
    ],
)
def test_each_way_a_cited_source_fails_to_resolve(source: Source, reason: str) -> None:
    result = resolve(shop(), 3, source)
    assert not result.resolved and not result.counts
    assert result.reason is not None and reason in result.reason


def test_the_bundled_packs_sources_all_resolve() -> None:
    for name in ("support_desk", "artifacts"):
        pack = load_pack(str(REPO / "scenarios" / name))
        for scenario in pack.scenarios:
            grounding = ground(pack, scenario)
            assert grounding.unresolved == () and not grounding.assumed_by_author, scenario.name
