"""The round's judgement, for a projection: verify's judging path with its state kept in rows.

A view that needs what the rules say about a round (commission due, the SP9 bank's breaches, a
jackpot pool's movement) calls :func:`judged`: it runs
:func:`ledger.verify.judge.judge_in_context` — the same per-round judgement a ``ledger verify``
pass gives — with the state its game's earlier rounds left, kept in the view's own row
``judge|<GAME>`` (plain JSON: an SP9 table's bank, a 3CB shoe, a STUD pool's balance, carried
bets). The updater may stop and resume anywhere: the next round is judged from that row exactly
as a single pass would judge it, so *rebuild equals incremental* and the view equals verify.
"""

from __future__ import annotations

from ledger.domain.round import Round
from ledger.verify.judge import Judged, judge_in_context
from projections.base import Rows

STATE_PREFIX = "judge|"


def judged(rnd: Round, rows: Rows) -> Judged:
    """Judge ``rnd`` in context, keeping its game's state in ``rows``."""
    key = f"{STATE_PREFIX}{rnd.game}"
    judgement, after = judge_in_context(rnd, rows.get(key))
    if after is not None:
        rows.put(key, after)
    return judgement
