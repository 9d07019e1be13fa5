"""Mah-Jong feed events (FEED.md §8): the game's opening, the wall and the deal, play, money.

Seats are the winds ``"E" "S" "W" "N"``; East is always the banker (FEED §1). A feed "round" is
one game (局). Mah-Jong has no ``bet_placed``: the players pay each other (``payment_made``) and
the casino charges the winner a fixed commission (``commission_charged``, RULES §4.10).

Several events carry the JSON key ``from``, a Python keyword: the field is ``from_`` with the
alias ``"from"``. Those models validate **only** by the alias — a feed line spelling ``from_`` is
an unknown key, as FEED §1 requires — and serialise by it, so ``model_dump_json()`` writes
``"from"`` and the stored fact reads back unchanged. In Python, build them from the feed form:
``TileDrawn.model_validate({..., "from": "wall"})``.

Only the shape of each line is checked here, plus what makes the game unreadable: the stake row
of the variant and the seats at the table. Whether a win is valid, a kong is allowed or a payment
is right are game rules: such lines are stored and reported by verify (FEED §2).
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import ClassVar, Literal

from pydantic import ConfigDict, Field, StrictInt, StrictStr, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from ledger.domain.equipment import TileField
from ledger.feed.envelope import LIFECYCLE_EVENTS, FeedEvent, RoundOpened
from ledger.feed.types import Code, Die, Money, Wind

Variant = Literal["conventional", "simplified"]
"""MJ-C and MJ-S (MJ art. 1, RULES §4)."""

STAKE_ROWS: dict[str, tuple[str, ...]] = {
    "conventional": (
        "25/50",
        "50/100",
        "100/200",
        "200/400",
        "300/600",
        "500/1000",
        "1000/2000",
        "2000/4000",
        "3000/6000",
        "5000/10000",
        "10000/20000",
    ),
    "simplified": (
        "100/200",
        "200/400",
        "300/600",
        "500/1000",
        "1000/2000",
        "2000/4000",
        "3000/6000",
        "5000/10000",
        "10000/20000",
        "20000/40000",
        "30000/60000",
    ),
}
"""The stake levels (限紅) of each variant, ``"A/B"`` in patacas (MJ art. 8, RULES §4.10)."""


def _by_single_share(row: str) -> int:
    return int(row.split("/")[0])


_ALL_STAKE_ROWS: tuple[str, ...] = tuple(
    sorted({row for rows in STAKE_ROWS.values() for row in rows}, key=_by_single_share)
)
_STAKE_SHAPE = re.compile(r"[1-9][0-9]{0,8}/[1-9][0-9]{0,8}")
_WIND_ORDER: tuple[Wind, ...] = ("E", "S", "W", "N")


def stake_amounts(stake: str) -> tuple[Decimal, Decimal]:
    """``(A, B)`` of a stake row: the single and the double share of a chicken hand (RULES §4.7).

    >>> stake_amounts("25/50")
    (Decimal('25'), Decimal('50'))
    """
    single, double = stake.split("/")
    return Decimal(single), Decimal(double)


class MahjongRoundOpened(RoundOpened):
    """``round_opened`` of one Mah-Jong game (FEED §8): variant, stake row, the players at their
    seats with their capital on the table, the prevailing wind and the game number.

    A conventional game seats all four winds; a simplified game two to four, always with East
    (RULES §4.2, §8.4 M24). ``capital`` names exactly the seats of ``players``.
    """

    variant: Variant
    stake: StrictStr
    players: dict[Wind, Code]
    capital: dict[Wind, Money]
    round_wind: Wind
    game_no: StrictInt = Field(ge=1, le=100_000)

    @field_validator("stake")
    @classmethod
    def _stake_row(cls, stake: str, info: ValidationInfo) -> str:
        if not _STAKE_SHAPE.fullmatch(stake):
            raise PydanticCustomError(
                "invalid_value",
                'a stake is "A/B" in whole patacas without thousands separators, like '
                '"25/50" or "1000/2000"; got {stake}',
                {"stake": repr(stake)},
            )
        variant: str | None = info.data.get("variant")  # absent when it failed validation
        rows = _ALL_STAKE_ROWS if variant is None else STAKE_ROWS[variant]
        if stake not in rows:
            raise PydanticCustomError(
                "invalid_value",
                "{stake} is not a stake row of {variant} Mah-Jong (RULES §4.10): {rows}",
                {"stake": repr(stake), "variant": variant or "either", "rows": " ".join(rows)},
            )
        return stake

    @field_validator("players")
    @classmethod
    def _seats(cls, players: dict[Wind, str], info: ValidationInfo) -> dict[Wind, str]:
        if "E" not in players:
            raise PydanticCustomError(
                "invalid_value", 'East is always the banker (FEED §1): players needs "E"'
            )
        if info.data.get("variant") == "conventional" and len(players) != 4:
            raise PydanticCustomError(
                "invalid_value",
                "conventional Mah-Jong seats exactly 4 players, E S W N (RULES §4.2); got {seats}",
                {"seats": " ".join(players)},
            )
        if len(players) < 2:
            raise PydanticCustomError("invalid_value", "a game needs 2 to 4 players (RULES §4.2)")
        if len(set(players.values())) != len(players):
            raise PydanticCustomError("invalid_value", "a player sits at one seat only")
        return players

    @field_validator("capital")
    @classmethod
    def _capital_per_seat(cls, capital: dict[Wind, Decimal], info: ValidationInfo) -> dict[Wind, Decimal]:
        players = info.data.get("players")
        if players is not None and set(capital) != set(players):
            raise PydanticCustomError(
                "invalid_value",
                "capital names the seats of players ({seats}); got {given}",
                {
                    "seats": " ".join(w for w in _WIND_ORDER if w in players),
                    "given": " ".join(capital) or "none",
                },
            )
        return capital

    @property
    def seats(self) -> tuple[Wind, ...]:
        """The seats in play, in turn order E → S → W → N (RULES §4.2)."""
        return tuple(w for w in _WIND_ORDER if w in self.players)

    @property
    def stake_amounts(self) -> tuple[Decimal, Decimal]:
        """``(A, B)`` of the stake row (see :func:`stake_amounts`)."""
        return stake_amounts(self.stake)


class FromKeyedEvent(FeedEvent):
    """Base of the events with a ``from`` key: validated and written by the alias only."""

    model_config = ConfigDict(serialize_by_alias=True, validate_by_alias=True, validate_by_name=False)


class MahjongDiceThrown(FeedEvent):
    """``dice_thrown``: the banker's throw that chooses where the wall is broken (FEED §8):
    3 dice in the conventional game, 2 in the simplified (RULES §4.1, §4.3). Which count the
    variant needs is checked by verify; 2 or 3 dice are accepted here."""

    TYPE: ClassVar[str] = "dice_thrown"
    type: Literal["dice_thrown"]
    dice: tuple[Die, ...] = Field(min_length=2, max_length=3)


class WallBroken(FeedEvent):
    """``wall_broken``: where the deal began — the wall (by the seat it stands before) and the
    ``stacks`` counted from its right-hand end (FEED §8, RULES §4.3, §8.4 M10)."""

    TYPE: ClassVar[str] = "wall_broken"
    type: Literal["wall_broken"]
    wall: Wind
    stacks: StrictInt = Field(ge=0, le=18)


class TileDrawn(FromKeyedEvent):
    """``tile_drawn``: one tile to a seat, from the head of the ``"wall"`` or, as a kong
    replacement, from its ``"tail"`` (FEED §8, MJ art. 5(a)(5), 5(b)(4)). The deal is sent as
    ``tile_drawn`` events from the wall, in dealing order (RULES §4.3)."""

    TYPE: ClassVar[str] = "tile_drawn"
    type: Literal["tile_drawn"]
    seat: Wind
    tile: TileField
    from_: Literal["wall", "tail"] = Field(alias="from")


class TileDiscarded(FeedEvent):
    """``tile_discarded``: a seat discards one tile; it cannot be taken back (FEED §8,
    MJ art. 9(a)(1), (b)(1))."""

    TYPE: ClassVar[str] = "tile_discarded"
    type: Literal["tile_discarded"]
    seat: Wind
    tile: TileField


class MeldClaimed(FromKeyedEvent):
    """``meld_claimed``: a seat claims the discard of seat ``from`` for a chow, pung or kong and
    exposes the meld's ``tiles`` (FEED §8, MJ art. 5, RULES §4.5)."""

    TYPE: ClassVar[str] = "meld_claimed"
    type: Literal["meld_claimed"]
    seat: Wind
    kind: Literal["chow", "pung", "kong"]
    tiles: tuple[TileField, ...] = Field(min_length=3, max_length=4)
    from_: Wind = Field(alias="from")


class KongDeclared(FeedEvent):
    """``kong_declared``: a concealed kong, or a tile added to an exposed pung (FEED §8,
    MJ art. 5(a)(5), RULES §4.5). A replacement ``tile_drawn`` from the tail follows."""

    TYPE: ClassVar[str] = "kong_declared"
    type: Literal["kong_declared"]
    seat: Wind
    kind: Literal["concealed", "added"]
    tile: TileField


class PungCallWithdrawn(FeedEvent):
    """``pung_call_withdrawn``: a «p'ông» called and not made; that seat may not win this game
    (FEED §8, MJ art. 9(a)(2))."""

    TYPE: ClassVar[str] = "pung_call_withdrawn"
    type: Literal["pung_call_withdrawn"]
    seat: Wind


class TilesSeen(FeedEvent):
    """``tiles_seen``: a seat looked at another's tiles and may make no kong for the rest of the
    game (FEED §8, MJ art. 9(a)(3), (b)(2))."""

    TYPE: ClassVar[str] = "tiles_seen"
    type: Literal["tiles_seen"]
    seat: Wind


class WinDeclared(FromKeyedEvent):
    """``win_declared``: a seat declares a win on ``tile``, self-drawn, on the discard of seat
    ``from`` or by robbing ``from``'s kong (FEED §8, MJ art. 5–6, RULES §4.5)."""

    TYPE: ClassVar[str] = "win_declared"
    type: Literal["win_declared"]
    seat: Wind
    tile: TileField
    source: Literal["self_drawn", "discard", "robbed_kong"]
    from_: Wind | None = Field(default=None, alias="from")


class GameDrawn(FeedEvent):
    """``game_drawn``: the wall ran out and nobody won (FEED §8, RULES §4.3, §8.4 M11)."""

    TYPE: ClassVar[str] = "game_drawn"
    type: Literal["game_drawn"]


class ClaimError(FeedEvent):
    """``claim_error``: a wrong tile taken or shown on a chow or pung (FEED §8,
    MJ art. 10(a)(7), RULES §4.9)."""

    TYPE: ClassVar[str] = "claim_error"
    type: Literal["claim_error"]
    seat: Wind


class ClaimCorrected(FeedEvent):
    """``claim_corrected``: the claim error corrected, which is allowed only before that seat's
    next draw (FEED §8, MJ art. 10(a)(7))."""

    TYPE: ClassVar[str] = "claim_corrected"
    type: Literal["claim_corrected"]
    seat: Wind


class CapitalToppedUp(FeedEvent):
    """``capital_topped_up``: a seat adds ``amount`` to its capital on the table, which caps what
    it can win (FEED §8, MJ art. 9(a)(4), (b)(3), RULES §4.7)."""

    TYPE: ClassVar[str] = "capital_topped_up"
    type: Literal["capital_topped_up"]
    seat: Wind
    amount: Money


class PaymentMade(FromKeyedEvent):
    """``payment_made``: what seat ``from`` actually paid seat ``to``, after the winner's capital
    cap, for a win, a liability or a false win (FEED §8, MJ arts. 7, 10, RULES §4.7–4.9)."""

    TYPE: ClassVar[str] = "payment_made"
    type: Literal["payment_made"]
    from_: Wind = Field(alias="from")
    to: Wind
    amount: Money
    reason: Literal["win", "liability", "false_win"]


class PaymentShortfall(FromKeyedEvent):
    """``payment_shortfall``: the part of his share seat ``from`` could not pay seat ``to``
    (FEED §8, RULES §8.4 M6)."""

    TYPE: ClassVar[str] = "payment_shortfall"
    type: Literal["payment_shortfall"]
    from_: Wind = Field(alias="from")
    to: Wind
    amount: Money


class CommissionCharged(FeedEvent):
    """``commission_charged``: the fixed commission taken from the winner (FEED §8, MJ art. 8,
    RULES §4.10)."""

    TYPE: ClassVar[str] = "commission_charged"
    type: Literal["commission_charged"]
    seat: Wind
    amount: Money


EVENTS: tuple[type[FeedEvent], ...] = (
    MahjongRoundOpened,
    *(cls for cls in LIFECYCLE_EVENTS if cls is not RoundOpened),
    MahjongDiceThrown,
    WallBroken,
    TileDrawn,
    TileDiscarded,
    MeldClaimed,
    KongDeclared,
    PungCallWithdrawn,
    TilesSeen,
    WinDeclared,
    GameDrawn,
    ClaimError,
    ClaimCorrected,
    CapitalToppedUp,
    PaymentMade,
    PaymentShortfall,
    CommissionCharged,
)
"""Every event type of a Mah-Jong feed (FEED §2, §8). No ``bet_placed``: nothing is staked on a
layout. ``bet_settled`` and ``betting_closed`` stay accepted as events common to all games
(FEED §2); with no bets, verify reports a ``bet_settled`` as a settlement of an unknown bet."""
