"""What a Super Pan 9 round page shows beside the bets: each bank layer's share of ``W`` and its
commission (SP9 art. 5(5)), derived against the table's ``bank_settled``. ``GAME.money_tables``.

The layers are those the judged round's session derived (``Derivation.context``); a round not
judged by the session (one still in play) is analysed alone
(:func:`~ledger.games.super_pan9.round.analyse`). A round the rules could not settle still lists
its layers, with nothing derived.
"""

from __future__ import annotations

from decimal import Decimal

from ledger.domain.round import Round
from ledger.games.base import ComparedField, Derivation, MoneyRow, MoneyTable
from ledger.games.super_pan9.round import BankFacts, analyse
from ledger.games.super_pan9.session import BankContext
from ledger.games.super_pan9.tables import SPLIT_RULE


def money_tables(rnd: Round, derivation: Derivation) -> list[MoneyTable]:
    """The bank-layer table, when the round has layers."""
    context = derivation.context
    bank = context.bank if isinstance(context, BankContext) else analyse(rnd).bank
    return [t for t in (_bank_layers(rnd, bank),) if t.rows]


def _bank_layers(rnd: Round, bank: BankFacts) -> MoneyTable:
    table = MoneyTable(
        "Bank layers: derived against recorded",
        ["layer", "capital"],
        ["share of W", "commission"],
        SPLIT_RULE,
    )
    recorded: dict[str, object] = {}
    for e in rnd.events:
        if e.type == "bank_settled":
            recorded.setdefault(getattr(e, "party", ""), e)
    none: list[Decimal | None] = [None] * len(bank.layers)
    shares: list[Decimal | None] = list(bank.shares) or none
    commissions: list[Decimal | None] = list(bank.commissions) or none
    for layer, share, commission in zip(bank.layers, shares, commissions, strict=True):
        rec = recorded.pop(layer.party, None)
        table.rows.append(
            MoneyRow(
                [layer.party, layer.capital],
                [
                    ComparedField(share, getattr(rec, "result", None)),
                    ComparedField(commission, getattr(rec, "commission", None)),
                ],
            )
        )
    for party, rec in recorded.items():  # a layer the round does not have
        table.rows.append(
            MoneyRow(
                [party, "—"],
                [
                    ComparedField(None, getattr(rec, "result", None)),
                    ComparedField(None, getattr(rec, "commission", None)),
                ],
            )
        )
    return table
