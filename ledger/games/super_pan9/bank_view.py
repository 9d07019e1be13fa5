"""What the bank view folds from a judged Super Pan 9 round (``GAME.bank_round``): the bank's
facts, run and carry the session derived when the round was judged (``Derivation.context``,
a :class:`~ledger.games.super_pan9.session.BankContext`), beside each layer's ``bank_settled``.
Nothing is derived again."""

from __future__ import annotations

from ledger.domain.money import ZERO
from ledger.domain.round import Round
from ledger.games.base import BankHolder, BankLayerRound, BankRound, Derivation
from ledger.games.super_pan9.feed import BankSettled
from ledger.games.super_pan9.session import BankContext


def bank_round(rnd: Round, derivation: Derivation) -> BankRound:
    """The round's bank, run and carry from its judgement, and what the table recorded."""
    context = derivation.context
    if not isinstance(context, BankContext):
        raise ValueError(f"{rnd.table}/{rnd.round} was not judged by the SP9 bank session")
    bank = context.bank
    recorded = {x.party: x for x in rnd.of_type(BankSettled)}
    layers = []
    for i, layer in enumerate(bank.layers):
        rec = recorded.get(layer.party)
        layers.append(
            BankLayerRound(
                layer.party,
                layer.capital,
                bank.shares[i] if bank.shares else None,
                bank.commissions[i] if bank.commissions else None,
                rec.result if rec else None,
                rec.commission if rec else None,
            )
        )
    after = context.after
    return BankRound(
        bank.banker,
        bank.capital,
        bank.capacity,
        bank.result,
        tuple(layers),
        sum(bank.commissions, ZERO),
        context.run if after is not None else 0,
        None
        if after is None
        else BankHolder(after.banker, after.run, after.capital, after.carry, after.to_json()),
    )
