"""Pack loading by path, module:attr and entry point; selection semantics shared by every verb."""

from __future__ import annotations

from pathlib import Path

import pytest

from windtunnel._packs.loader import discover_packs, load_pack
from windtunnel._packs.selection import Selection, select
from windtunnel.api import Pack, Scenario
from windtunnel.errors import PackError, SelectionError

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "packs"


def test_bundled_packs_load_with_root_and_owners() -> None:
    packs = discover_packs((), base=REPO)
    assert [p.name for p in packs] == ["artifacts", "support_desk"]
    desk = packs[1]
    assert desk.root == (REPO / "scenarios" / "support_desk").resolve()
    assert all(s.pack == "support_desk" and s.owner == "support-platform" for s in desk.scenarios)
    assert all(s.poisons and s.goldens for p in packs for s in p.scenarios)


def test_load_by_file_dir_and_attr() -> None:
    by_dir = load_pack(str(FIXTURES / "failing_gate"))
    by_file = load_pack(str(FIXTURES / "failing_gate" / "pack.py"))
    assert by_dir.name == by_file.name == "failing_gate"
    with pytest.raises(PackError, match="no pack 'nowhere'"):
        load_pack("nowhere")
    with pytest.raises(PackError, match="failed to load"):
        load_pack("json:no_such_attribute")


def test_broken_packs_name_the_file() -> None:
    with pytest.raises(PackError) as caught:
        load_pack(str(FIXTURES / "broken_import"))
    assert "broken_import/pack.py failed to import" in str(caught.value)
    with pytest.raises(Exception, match=r"bad_scenario/pack.py: scenario 'ends_with_a_call'"):
        load_pack(str(FIXTURES / "bad_scenario"))


def test_pack_rejects_duplicates_and_bad_profiles() -> None:
    scenario = Scenario(name="a", prompt="p")
    with pytest.raises(PackError, match="two scenarios named 'a'"):
        Pack(name="p", scenarios=[scenario, scenario])
    with pytest.raises(PackError, match="profile 'nightly'"):
        Pack(name="p", scenarios=[scenario], profiles=["nightly"])


def _packs() -> list[Pack]:
    return [
        Pack(
            name="one",
            owner="team-a",
            scenarios=[
                Scenario(name="refund_a", prompt="p", tags=["smoke"]),
                Scenario(name="refund_b", prompt="p", tags=["slow"]),
            ],
        ),
        Pack(name="two", scenarios=[Scenario(name="lookup", prompt="p", tags=["smoke"], owner="team-b")]),
    ]


@pytest.mark.parametrize(
    ("selection", "expected"),
    [
        (Selection(), ["refund_a", "refund_b", "lookup"]),
        (Selection(scenarios=["refund_*"]), ["refund_a", "refund_b"]),
        (Selection(tags=["smoke"]), ["refund_a", "lookup"]),
        (Selection(tags=["smoke"], packs=["one"]), ["refund_a"]),
        (Selection(scenarios=["lookup", "refund_b"]), ["refund_b", "lookup"]),
        (Selection(owners=["team-b"]), ["lookup"]),
    ],
)
def test_selection(selection: Selection, expected: list[str]) -> None:
    assert [s.scenario.name for s in select(_packs(), selection)] == expected


def test_selection_errors() -> None:
    with pytest.raises(SelectionError, match="--tag 'fast' matches nothing") as caught:
        select(_packs(), Selection(tags=["fast"]))
    assert "slow, smoke" in str(caught.value)
    with pytest.raises(SelectionError, match="not together"):
        select(_packs(), Selection(tags=["slow"], packs=["two"]))
