"""The STUD game session: linked jackpot pools across every table, in store order (RULES §6.6).

Verify creates one :class:`StudSession` per run and hands it every STUD round in the order the
ledger stored them (FEED §7, "order of record"). For each round it runs the round's own rules
(``round.analyse``), then settles the round's jackpot on the pool its rulebook names with
``pool.settle_pool`` — the same function the ``jackpot`` projection uses — and:

- puts each winning jackpot bet's due settlement (``win``, nothing returned, the award as
  ``won``: art. 10, P8) among the round's expected settlements, so a wrong ``won`` is a
  ``settlement_mismatch`` like any other bet;
- compares the round's ``jackpot_paid`` lines with the derived awards: a missing award, a wrong
  amount or hand, or an award the rules do not give is ``jackpot_mismatch``;
- adds the pool before and after the round to the replay steps.

The pool advances by the *derived* amounts, never by what a table paid, so one wrong payment
does not shift every later award.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from ledger.domain.findings import Finding
from ledger.domain.money import ZERO, same_amount
from ledger.domain.money import text as amount_text
from ledger.domain.round import Round
from ledger.domain.rulebook import JackpotOptions
from ledger.games.base import Derivation, JackpotAward, JackpotMovement, Settlement, Step
from ledger.games.stud_poker.feed import JackpotPaid
from ledger.games.stud_poker.pool import CONTRIBUTION_RULE, RESET_RULE, Award, PoolRound, settle_pool
from ledger.games.stud_poker.round import StudRound, analyse

_DUMPED_MAX = 256
"""Jackpot sections whose JSON a session keeps at most (a bound, not a tuning knob)."""

AWARD_RULE = "STUD art. 10; RULES §6.6, §8.6 P8"
SETTINGS_RULE = "FEED Appendix A (one pool, one set of jackpot settings); RULES §6.6"


class StudSession:
    """Pool balances by pool name, advanced round by round in store order."""

    def __init__(self) -> None:
        self.balances: dict[str, Decimal] = {}
        self.settings: dict[str, tuple[str, str]] = {}
        """Each pool's settings as first seen: (the JSON, the round that set them)."""
        self._dumped: dict[int, tuple[JackpotOptions, str]] = {}
        """The JSON of each jackpot section seen (by identity, the section kept alive with
        it): rounds of one table share their rulebook, so each is written once, not per round."""

    def derive(self, rnd: Round) -> Derivation:
        """The round's derivation, its jackpot awards settled on the pool as it stands now."""
        analysed = analyse(rnd)
        self.check_settings(rnd, analysed.derivation)
        pooled = self.settle(rnd, analysed)
        check_awards(rnd, analysed, pooled)
        if pooled is not None:
            analysed.derivation.jackpot = movement(pooled)
        return analysed.derivation

    def check_settings(self, rnd: Round, derivation: Derivation) -> None:
        """Every round naming one pool must carry the same jackpot settings (FEED Appendix A):
        a round that differs is a ``jackpot_mismatch``; the pool still follows its own."""
        opts = rnd.rules.jackpot
        if opts is None:
            return
        text = self._settings_text(opts)
        first = self.settings.setdefault(opts.pool, (text, f"{rnd.table}/{rnd.round}"))
        if first[0] != text:
            derivation.session_findings.append(
                Finding(
                    "jackpot_mismatch",
                    rnd.table,
                    rnd.round,
                    rule=SETTINGS_RULE,
                    message=f"pool {opts.pool} is configured differently here than in {first[1]}, "
                    f"the round that first named it: a linked pool has one set of settings",
                    expected={"jackpot": first[0]},
                    recorded={"jackpot": text},
                )
            )

    def _settings_text(self, opts: JackpotOptions) -> str:
        known = self._dumped.get(id(opts))
        if known is not None and known[0] is opts:
            return known[1]
        if len(self._dumped) >= _DUMPED_MAX:
            self._dumped.clear()
        text = opts.model_dump_json()
        self._dumped[id(opts)] = (opts, text)
        return text

    def settle(self, rnd: Round, analysed: StudRound) -> PoolRound | None:
        """Advance the round's pool past ``rnd``; ``None`` if the round touches no pool."""
        opts = rnd.rules.jackpot
        if opts is None or not analysed.stakes:
            return None
        pooled = settle_pool(
            self.balances.get(opts.pool), opts, rnd.rules.rounding, analysed.stakes, analysed.hits
        )
        self.balances[opts.pool] = pooled.end
        return pooled

    def finish(self) -> list[Finding]:
        """Nothing is left to derive at the end of the log."""
        return []

    def to_json(self) -> dict[str, Any]:
        """Each pool's balance and first settings, as plain JSON."""
        return {
            "balances": {p: str(b) for p, b in sorted(self.balances.items())},
            "settings": {p: list(s) for p, s in sorted(self.settings.items())},
        }

    def load(self, data: dict[str, Any]) -> None:
        """Restore :meth:`to_json`."""
        self.balances = {p: Decimal(b) for p, b in data.get("balances", {}).items()}
        self.settings = {p: (s[0], s[1]) for p, s in data.get("settings", {}).items()}


def check_awards(rnd: Round, analysed: StudRound, pooled: PoolRound | None) -> None:
    """Add the award settlements, the pool steps and the ``jackpot_mismatch`` findings."""
    d = analysed.derivation
    awards = {a.bet: a for a in pooled.awards} if pooled else {}
    if pooled is not None:
        d.steps += pool_steps(pooled)
    for due in awards.values():
        d.expected[due.bet] = Settlement(
            "win", ZERO, due.amount, ZERO, due.rule, f"jackpot award: {due.reason} (stake not returned)"
        )
    seen: set[str] = set()
    for paid in rnd.of_type(JackpotPaid):
        award = awards.get(paid.bet)
        if paid.bet in seen or award is None:
            if not analysed.derived and paid.bet not in seen:
                continue  # the hands could not be derived: nothing to compare with
            why = (
                "a second jackpot_paid for the same bet"
                if paid.bet in seen
                else "no jackpot award is due to this bet"
            )
            d.session_findings.append(
                _mismatch(
                    rnd,
                    paid.bet,
                    f"unexpected jackpot_paid of {amount_text(paid.amount)} for {paid.hand}: {why}",
                    seq=paid.seq,
                    recorded={"hand": paid.hand, "amount": str(paid.amount)},
                )
            )
        elif paid.hand != award.category.key or not same_amount(paid.amount, award.amount):
            d.session_findings.append(
                _mismatch(
                    rnd,
                    paid.bet,
                    f"jackpot award for {award.category.key} is {amount_text(award.amount)} "
                    f"({award.reason}); the table paid {amount_text(paid.amount)} for {paid.hand}",
                    seq=paid.seq,
                    rule=award.rule,
                    expected={"hand": award.category.key, "amount": str(award.amount)},
                    recorded={"hand": paid.hand, "amount": str(paid.amount)},
                )
            )
        seen.add(paid.bet)
    for due in awards.values():
        if due.bet not in seen:
            d.session_findings.append(
                _mismatch(
                    rnd,
                    due.bet,
                    f"no jackpot_paid for the {due.category.key} of place "
                    f"{due.seat}: {amount_text(due.amount)} is due ({due.reason})",
                    rule=due.rule,
                    expected={"hand": due.category.key, "amount": str(due.amount)},
                )
            )


def movement(p: PoolRound) -> JackpotMovement:
    """A pool round as the generic jackpot movement the finance views book."""
    return JackpotMovement(
        p.pool,
        p.seed,
        p.opened,
        p.start,
        p.contributed,
        len(p.contributions),
        p.after_contributions,
        tuple(
            JackpotAward(a.bet, a.seat, a.category.key, a.amount, a.from_pool, a.from_house) for a in p.awards
        ),
        p.reset,
        p.end,
    )


def pool_steps(p: PoolRound) -> list[Step]:
    """The pool before and after one round, for ``ledger replay`` (written when read)."""
    steps = [Step.later(CONTRIBUTION_RULE, _pool_before, p)]
    for a in p.awards:
        steps.append(Step.later(a.rule, _award_text, a))
    if p.reset:
        steps.append(Step.later(RESET_RULE, _reset_text, p))
    steps.append(Step.later(CONTRIBUTION_RULE, _pool_after, p))
    return steps


def _pool_before(p: PoolRound) -> str:
    opened = " (opened at its seed)" if p.opened else ""
    return (
        f"jackpot pool {p.pool} before the round: {amount_text(p.start)}{opened}; "
        f"{len(p.contributions)} settled jackpot bets contribute {amount_text(p.contributed)} → "
        f"{amount_text(p.after_contributions)}"
    )


def _award_text(a: Award) -> str:
    return f"jackpot award to {a.bet} (place {a.seat}): {amount_text(a.amount)} — {a.reason}"


def _reset_text(p: PoolRound) -> str:
    return (
        f"nothing left in pool {p.pool}: reset to the seed {amount_text(p.seed)} "
        f"(house-funded {amount_text(p.reset)})"
    )


def _pool_after(p: PoolRound) -> str:
    return f"jackpot pool {p.pool} after the round: {amount_text(p.end)}"


def _mismatch(rnd: Round, bet: str, message: str, rule: str = AWARD_RULE, **kw: object) -> Finding:
    return Finding("jackpot_mismatch", rnd.table, rnd.round, message, rule=rule, bet=bet, **kw)  # type: ignore[arg-type]
