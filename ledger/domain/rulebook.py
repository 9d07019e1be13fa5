"""The rulebook: a round's option values (FEED Appendix A, RULES §8), completed and hashed.

A feed's ``round_opened.rulebook`` names only the options that differ from the defaults. At
ingest the ledger completes it with the defaults of RULES.md, hashes the canonical JSON and stores
both with the round: verify settles the round under *that* stored rulebook, so a default changed
in a later release never changes how an old round is judged.

>>> book = complete_rulebook({"sp9": {"tiebreak": "both_cards"}})
>>> book.sp9.tiebreak, book.rounding.mode
('both_cards', 'half_up')
>>> len(book.content_hash())
64
"""

from __future__ import annotations

import hashlib
import json
from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, model_validator

from ledger.feed.types import Code, DecimalText, Money


class _Section(BaseModel):
    """A rulebook section: strict, frozen, unknown keys rejected."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Rounding(_Section):
    """RULES §8 G1: half-up to 0.01 unless the table chose otherwise."""

    mode: Literal["half_up", "down"] = "half_up"
    increment: DecimalText = Decimal("0.01")


class Limit(_Section):
    """RULES §8 G3: a bet spot's minimum and maximum stake."""

    min: Money | None = None
    max: Money | None = None


class SuperPan9Options(_Section):
    """RULES §8.1 (SP9)."""

    tiebreak: Literal["highest_card", "both_cards"] = "highest_card"
    cap_mode: Literal["sequential", "collect_then_pay", "prorata"] = "sequential"
    bank_split: Literal["waterfall", "prorata"] = "waterfall"
    bank_commission: Literal["positive_net", "none", "gross"] = "positive_net"
    min_bank: Money = Decimal("0")
    max_bank_rounds: StrictInt = Field(default=2, ge=1)
    max_hands: StrictInt = Field(default=26, ge=2, le=26)


class FishPrawnCrabOptions(_Section):
    """RULES §8.2 (FPC)."""

    cocked_die: Literal["reshake", "void"] = "reshake"


class ThreeCardBaccaratOptions(_Section):
    """RULES §8.3 (3CB)."""

    points0_on_three_figures: Literal["lose", "win", "push"] = "lose"
    three_figures: Literal["any", "kqj_only"] = "any"
    misdeal_bets: Literal["stand", "return"] = "stand"


class MahjongConventionalOptions(_Section):
    """RULES §8.4 options of conventional Mah-Jong (MJ-C)."""

    max_fan: StrictInt = Field(default=2, ge=0)


class MahjongSimplifiedOptions(_Section):
    """RULES §8.4 options of simplified Mah-Jong (MJ-S)."""

    max_fan: StrictInt = Field(default=2, ge=0)
    base_fan: StrictInt = Field(default=1, ge=0)
    allow_discard_kong: StrictBool = True


class MahjongOptions(_Section):
    """RULES §8.4 (MJ)."""

    unit: Literal["doubling"] = "doubling"
    c: MahjongConventionalOptions = MahjongConventionalOptions()
    s: MahjongSimplifiedOptions = MahjongSimplifiedOptions()
    kankan_selfdraw_only: StrictBool = True
    min_capital: Money | None = None  # None means 24 × A of the round's stake (M6)


class RouletteSectors(_Section):
    """RULES §8.5 R4: the authorised nine- and twelve-number sectors."""

    nine: tuple[tuple[StrictInt, ...], ...] = ()
    twelve: tuple[tuple[StrictInt, ...], ...] = ()

    @model_validator(mode="after")
    def _sizes(self) -> RouletteSectors:
        for size, groups in ((9, self.nine), (12, self.twelve)):
            for group in groups:
                if len(set(group)) != size or not all(1 <= n <= 36 for n in group):
                    raise ValueError(
                        f"a {size}-number sector needs {size} distinct numbers "
                        f"from 1-36 (RULES §8.5 R4), got {list(group)}"
                    )
        return self


class RouletteOptions(_Section):
    """RULES §8.5 (RL)."""

    sectors: RouletteSectors = RouletteSectors()
    zero_combinations: StrictBool = False


class StudOptions(_Section):
    """RULES §8.6 (STUD)."""

    rf_multiple: StrictInt = Field(default=50, ge=50, le=100)
    max_payout: Money | None = None
    cap_mode: Literal["per_hand", "per_round"] = "per_hand"


class JackpotFixed(_Section):
    """STUD art. 10(2): the fixed awards of the progressive jackpot."""

    flush: Money
    full_house: Money
    four_of_a_kind: Money
    straight_flush: Money
    royal_flush: Money


class JackpotOptions(_Section):
    """RULES §6.6, §8.6 P4–P12: the linked progressive pool a round contributes to."""

    pool: Code
    bet_amount: Money
    contribution_rate: DecimalText
    seed: Money
    fixed: JackpotFixed
    fixed_from_pool: StrictBool = False
    sf_base: Literal["start", "running"] = "start"


class Rulebook(_Section):
    """Every option of FEED Appendix A with its value for one round."""

    rounding: Rounding = Rounding()
    limits: dict[str, Limit] = {}
    sp9: SuperPan9Options = SuperPan9Options()
    fpc: FishPrawnCrabOptions = FishPrawnCrabOptions()
    tcb: ThreeCardBaccaratOptions = ThreeCardBaccaratOptions()
    mj: MahjongOptions = MahjongOptions()
    rl: RouletteOptions = RouletteOptions()
    stud: StudOptions = StudOptions()
    jackpot: JackpotOptions | None = None

    def canonical_json(self) -> bytes:
        """Sorted keys, no spaces, decimals as strings: the bytes that are hashed."""
        return json.dumps(
            self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        ).encode()

    def content_hash(self) -> str:
        """SHA-256 of :meth:`canonical_json`, in hex."""
        return hashlib.sha256(self.canonical_json()).hexdigest()


DEFAULT_RULEBOOK = Rulebook()


def complete_rulebook(given: dict[str, Any] | None) -> Rulebook:
    """Complete a feed's partial rulebook with the defaults; raise ``ValidationError`` if bad."""
    return Rulebook.model_validate(given or {})
