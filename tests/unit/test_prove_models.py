"""Proof codes: which one a proof is shown under."""

from __future__ import annotations

from windtunnel._prove.models import PRECEDENCE, ProofCode, headline


def test_answer_leaked_wins_over_every_other_code() -> None:
    for code in ProofCode:
        assert headline([code, ProofCode.ANSWER_LEAKED]) is ProofCode.ANSWER_LEAKED
        assert headline([ProofCode.ANSWER_LEAKED, code]) is ProofCode.ANSWER_LEAKED


def test_no_defect_is_proved_and_every_defect_code_has_a_rank() -> None:
    assert headline([]) is ProofCode.PROVED
    assert set(PRECEDENCE) == set(ProofCode) - {ProofCode.PROVED}
    assert headline([ProofCode.BROKEN_CHECK, ProofCode.GOLDEN_FAILED]) is ProofCode.GOLDEN_FAILED
