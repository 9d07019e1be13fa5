"""Step texts and settlement reasons are written when read, and read the same as written at once.

Verify reads findings, never a derivation's steps, so the per-bet and per-hand steps and the
settlement reasons that format amounts are a function and its arguments until replay, a page
or a finding asks (``Step.later``, ``Settlement.later``). These tests hold both halves:

- judging the example rounds of every game leaves such steps and reasons unwritten (the work
  verify does not need is not done), and reading them gives the text, once;
- a written-later step or settlement equals, hashes and shows like one given its text at once.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from ledger.domain.round import Round
from ledger.games.base import Settlement, Step
from ledger.verify.judge import RoundJudge
from tests.ledger.example_rounds import example_rounds


def test_judging_leaves_steps_and_reasons_unwritten_until_read(examples: Path) -> None:
    judge = RoundJudge()
    unwritten_steps: dict[str, int] = {}
    unwritten_reasons: dict[str, int] = {}
    judged = []
    for facts in example_rounds(examples):
        j = judge.judge_round(Round.replay(facts))
        judged.append(j)
        game = j.round.game
        steps = [s for s in j.derivation.steps if s._text is None]
        reasons = [d for d in j.derivation.expected.values() if d._reason is None]
        unwritten_steps[game] = unwritten_steps.get(game, 0) + len(steps)
        unwritten_reasons[game] = unwritten_reasons.get(game, 0) + len(reasons)
    assert {g for g, n in unwritten_steps.items() if n} == {"RL", "FPC", "3CB", "SP9", "MJ", "STUD"}
    assert unwritten_reasons.get("RL") and unwritten_reasons.get("SP9")
    for j in judged:
        for step in j.derivation.steps:
            text = step.text
            assert isinstance(text, str) and text
            assert step.text is text  # written once, then kept
            assert step._make is None
        for due in j.derivation.expected.values():
            assert isinstance(due.reason, str) and due.reason


def test_a_step_written_later_is_the_step_with_its_text() -> None:
    calls: list[int] = []

    def make(a: int, b: str) -> str:
        calls.append(a)
        return f"{b} {a}"

    later = Step.later("RL art. 7", make, 17, "spin")
    assert calls == []
    now = Step("spin 17", "RL art. 7")
    assert later == now and hash(later) == hash(now)
    assert repr(later) == "Step(text='spin 17', rule='RL art. 7')" == repr(now)
    assert later.text == "spin 17" and calls == [17]
    assert later != Step("spin 18", "RL art. 7") and later != Step("spin 17", None)


def test_a_settlement_written_later_is_the_settlement_with_its_reason() -> None:
    stake = Decimal("100")
    later = Settlement.later(
        "win", stake, Decimal("200"), Decimal(0), "R", "{} pays {} to 1".format, "red", 2
    )
    assert later._reason is None
    now = Settlement("win", stake, Decimal("200"), Decimal(0), "R", "red pays 2 to 1")
    assert later == now and hash(later) == hash(now)
    assert (
        repr(later)
        == repr(now)
        == (
            "Settlement(result='win', returned=Decimal('100'), won=Decimal('200'), "
            "commission=Decimal('0'), rule='R', reason='red pays 2 to 1')"
        )
    )
    assert later.as_dict() == {"result": "win", "returned": "100", "won": "200", "commission": "0"}
    assert later != Settlement("win", stake, Decimal("200"), Decimal(0), "R", "another reason")
    assert Settlement.lose("R", "x") == Settlement("lose", Decimal(0), Decimal(0), Decimal(0), "R", "x")
