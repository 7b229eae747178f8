"""The proofs file: a header then one proof per line, durable as written, readable after a crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from windtunnel._prove.models import Defect, ProofCode, ProofsHeader, ScenarioProof
from windtunnel._prove.proofs_file import ProofsWriter, read_proofs
from windtunnel.errors import UsageError

HEADER = ProofsHeader(started_at="2026-12-01T09:00:00+00:00", certification=True, selected=2)
PROOF = ScenarioProof(
    pack="p",
    scenario="s",
    code=ProofCode.BROKEN_CHECK,
    certification=True,
    defects=[Defect(code=ProofCode.BROKEN_CHECK, message="crashed", error="Traceback ...")],
)


def test_records_round_trip_and_a_new_run_starts_a_fresh_file(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "proofs.jsonl"
    for _ in range(2):
        with ProofsWriter(path) as writer:
            writer.write(HEADER)
            writer.write(PROOF)
    read = read_proofs(path)
    assert read.header == HEADER and read.proofs == (PROOF,)
    assert path.read_text().count("\n") == 2


def test_a_torn_last_line_is_left_out_but_a_bad_line_in_the_middle_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "proofs.jsonl"
    whole = HEADER.model_dump_json() + "\n" + PROOF.model_dump_json() + "\n"
    path.write_text(whole + PROOF.model_dump_json()[:40])
    assert read_proofs(path).proofs == (PROOF,)
    path.write_text(HEADER.model_dump_json() + "\n{not json}\n" + PROOF.model_dump_json() + "\n")
    with pytest.raises(UsageError, match="line 2 is not a proof record"):
        read_proofs(path)


def test_records_carry_their_schema_version() -> None:
    assert '"schema_version":1' in PROOF.model_dump_json()
    assert '"record":"header"' in HEADER.model_dump_json()
