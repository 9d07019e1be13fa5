"""What each piece of equipment contributes to the surveillance tests, round by round.

A :class:`Tally` holds the counters of one table over one stretch of time (a gaming day):
counts per cell for each goodness-of-fit test, a :class:`~ledger.stats.tests.RunsCounter` per
runs test, and the :class:`~ledger.stats.tests.SerialPairs` of its shoe. Tallies of several
days merge into the period's. A :class:`TableWatch` reads a table's rounds in order and keeps
what spans rounds (the shoe in play). Memory depends on the number of tables, days and
positions, never on the number of rounds.

The tests, by equipment (test names are stable; they appear in ``ledger stats --json``):

What each game's equipment gives is the game's (``Game.equipment``, its ``equipment.py``):
which events are dice throws, the wheel's red pockets and layout, the tiles drawn from a wall.

| game | equipment | test | outcomes | fair distribution |
|---|---|---|---|---|
| RL | wheel | ``pockets`` | every ``spin_result`` | 37 pockets, 1/37 each |
| RL | wheel | ``colour_runs`` | red/black of each non-zero result, in order | runs test |
| FPC | shaker | ``die1`` … ``die3`` | each die of every ``dice_shown`` | 6 faces, 1/6 each |
| FPC | shaker | ``small_big_runs`` | total ≤ 10 (small) or ≥ 11 (big), in order | runs test |
| SP9 | shaker | ``die1`` … ``die4`` | each die of every valid ``dice_thrown`` | 6 faces |
| SP9, 3CB, STUD | shoe | ``cards`` | every card dealt | 52 cards, 1/52 each |
| SP9, 3CB, STUD | shoe | ``cards:<hand>#<k>`` | k-th card to a hand (``banker#1``) | 52 cards |
| SP9, 3CB, STUD | shoe | ``serial`` | successive cards of one shoe, burns too | lag-1 correlation |
| MJ | wall | ``tiles:<seat>`` | the tiles a seat draws from the wall in the deal | 34 kinds (28 in MJ-S) |

and the tests shaped for one fault (:mod:`ledger.stats.shaped`): ``max_pocket`` and ``sector``
(wheel), ``max_die_face`` and ``max_face_pooled`` (shaker), ``composition`` (shoe: every card
seen leaving a shoe, burns too, against the shoe's hypergeometric law per shoe and deck).

Every card kind is equally likely at any position of a shuffled shoe of full decks, whatever the
number of decks; the pooled ``cards`` test is the one that finds a missing card soonest. Rounds
whose deal was cancelled or corrected (3CB ``cards_cancelled`` / ``deal_corrected``) give no
card outcome.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ledger.domain.round import Round
from ledger.games import GAMES
from ledger.games.base import Cells, Equipment
from ledger.stats.shaped import (
    CARD_CUSUM,
    TILE_CUSUM,
    CompositionCusum,
    composition,
    dice_max,
    max_cell,
    sector_scan,
)
from ledger.stats.tests import RunsCounter, SerialPairs, TestResult, chi_square_gof

RANKS = "A23456789TJQK"
SUITS = "SHCD"
CARD_KINDS = 52
RANK_MEAN = 7.0
"""Mean rank (A = 1 … K = 13) of a full deck."""
RANK_VARIANCE = 14.0
"""Variance of the rank over a full deck: (13² − 1) / 12."""
POCKETS = 37
FACES = 6
SMALL_MAX = 10
"""A dice total of 10 or less is small (three dice: 3–10), 11 or more big."""

EQUIPMENT: dict[str, str] = {key: game.equipment.name for key, game in GAMES.items()}
"""The equipment name of each game's card, spin or tile tests (``Game.equipment``; dice tests
are always the ``shaker``'s)."""

_CANCELLED = frozenset({"cards_cancelled", "deal_corrected"})


def card_index(text: str) -> int:
    """0–51 for a card in FEED notation (rank major, suit minor)."""
    return RANKS.index(text[0]) * 4 + SUITS.index(text[1])


def cell_probabilities(test: str) -> list[float]:
    """The fair distribution over the cells of a goodness-of-fit test, by its name."""
    if test == "pockets":
        return [1 / POCKETS] * POCKETS
    if test.startswith("die"):
        return [1 / FACES] * FACES
    if test == "cards" or test.startswith("cards:"):
        return [1 / CARD_KINDS] * CARD_KINDS
    cells = _game_cells(test)
    if cells is not None:
        return list(cells.probabilities)
    raise ValueError(f"no goodness-of-fit test called {test!r}")


def cell_labels(test: str) -> list[str]:
    """What each cell of a goodness-of-fit test is (for plots)."""
    if test == "pockets":
        return [str(n) for n in range(POCKETS)]
    if test.startswith("die"):
        return [str(f) for f in range(1, FACES + 1)]
    cells = _game_cells(test)
    if cells is not None:
        return list(cells.labels)
    return [r + s for r in RANKS for s in SUITS]


def _game_cells(test: str) -> Cells | None:
    """The cells of a test a game's equipment defines (``Equipment.cells``), if one does."""
    for game in GAMES.values():
        cells = game.equipment.cells(test)
        if cells is not None:
            return cells
    return None


DICE_TESTS = frozenset({"small_big_runs", "max_die_face", "max_face_pooled"})


def equipment_of(game: str, test: str) -> str:
    """The piece of equipment a test is about."""
    return "shaker" if test.startswith("die") or test in DICE_TESTS else EQUIPMENT[game]


def describe(test: str, detail: Any) -> str:
    """Where a shaped test points, in words: ``pocket 17``, ``sector 25 17 34 6 27``,
    ``die 1 face 6``, ``face 6 (all dice)``, ``AS missing``."""
    cells = list(detail.get("cells") or [])
    if not cells:
        return ""
    if test == "max_pocket":
        return f"pocket {cells[0]}"
    if test == "sector":
        return "sector " + " ".join(str(c) for c in cells)
    if test == "max_die_face":
        return f"die {detail.get('die')} face {cells[0] + 1}"
    if test == "max_face_pooled":
        return f"face {cells[0] + 1} (all dice)"
    if test == "composition":
        return f"{RANKS[cells[0] // 4]}{SUITS[cells[0] % 4]} {detail.get('direction')}"
    return ""


@dataclass
class Tally:
    """The counters of one table over one stretch of time."""

    counts: dict[str, list[int]] = field(default_factory=dict)
    runs: dict[str, RunsCounter] = field(default_factory=dict)
    serial: SerialPairs = field(default_factory=SerialPairs)
    rounds: int = 0
    seen: list[int] = field(default_factory=list)
    """Cards (or tiles) of each kind seen leaving the shoes (walls) closed in this stretch
    (burns too)."""
    shoes: Counter[tuple[int, ...]] = field(default_factory=Counter)
    """``(population, copies of each kind, seen) → shoes`` of the shoes or walls closed in
    this stretch."""
    labels: tuple[str, ...] | None = None
    """What each kind of :attr:`seen` is, when not a card (a wall's tiles)."""

    def count(self, test: str, cells: int, cell: int) -> None:
        """One outcome falling in ``cell`` of the test ``test``."""
        counts = self.counts.get(test)
        if counts is None:
            counts = self.counts[test] = [0] * cells
        counts[cell] += 1

    def run(self, test: str) -> RunsCounter:
        """The runs counter of ``test``."""
        counter = self.runs.get(test)
        if counter is None:
            counter = self.runs[test] = RunsCounter()
        return counter

    def merge(self, other: Tally) -> None:
        """Add a later stretch of time (tallies are merged in day order)."""
        self.rounds += other.rounds
        for test, counts in other.counts.items():
            mine = self.counts.setdefault(test, [0] * len(counts))
            for i, c in enumerate(counts):
                mine[i] += c
        for test, counter in other.runs.items():
            self.run(test).merge(counter)
        self.serial.merge(other.serial)
        if other.seen:
            self.seen = [a + b for a, b in zip(self.seen or [0] * len(other.seen), other.seen, strict=True)]
            self.labels = self.labels or other.labels
        self.shoes.update(other.shoes)

    def close_shoe(self, decks: int, counts: list[int]) -> None:
        """One shoe's cards seen, kind by kind."""
        self.close_pool(CARD_KINDS * decks, decks, counts)

    def close_pool(
        self, population: int, copies: int, counts: list[int], labels: tuple[str, ...] | None = None
    ) -> None:
        """One shoe's or wall's kinds seen (``copies`` of each of ``len(counts)`` kinds)."""
        if not any(counts):
            return
        if self.seen and len(self.seen) != len(counts):
            return  # another composition (a variant's wall): tested apart from this one
        self.seen = [a + b for a, b in zip(self.seen or [0] * len(counts), counts, strict=True)]
        self.shoes[(population, copies, sum(counts))] += 1
        self.labels = self.labels or labels

    def shaped(self) -> dict[str, TestResult]:
        """The tests shaped for one fault (see :mod:`ledger.stats.shaped`)."""
        out: dict[str, TestResult] = {}
        pockets = self.counts.get("pockets")
        if pockets:
            out["max_pocket"] = max_cell(pockets, cell_probabilities("pockets"), "max_cell")
            out["sector"] = sector_scan(pockets)
        dice_counts = [self.counts[t] for t in sorted(self.counts) if t.startswith("die")]
        if dice_counts:
            out["max_die_face"] = dice_max(dice_counts)
            pooled = [sum(c[f] for c in dice_counts) for f in range(FACES)]
            out["max_face_pooled"] = max_cell(pooled, [1 / FACES] * FACES, "max_cell")
        if self.shoes:
            out["composition"] = composition(self.seen, self.shoes, self.labels)
        return out

    def results(self) -> dict[str, TestResult]:
        """Every test this tally can run, by name."""
        out = {
            test: chi_square_gof(counts, cell_probabilities(test))
            for test, counts in sorted(self.counts.items())
        }
        out.update({test: counter.test() for test, counter in sorted(self.runs.items())})
        if self.serial.pairs:
            out["serial"] = self.serial.test()
        out.update(self.shaped())
        return out


@dataclass
class TableWatch:
    """Reads one table's rounds in order into the tally of each round's day."""

    table: str
    game: str
    shoe_size: int = 0
    last_rank: float | None = None
    decks: int = 0
    shoe: list[int] = field(default_factory=list)
    """Cards of each kind seen out of the shoe in play."""
    night: str = ""
    """The gaming day of the round being read (the CUSUM's night)."""
    cusum: CompositionCusum | None = None
    """The sequential composition scheme of its shoes or walls (:attr:`sequential`)."""

    @property
    def sequential(self) -> CompositionCusum | None:
        """Its shoes' or walls' CUSUM, if it closed any."""
        return self.cusum if self.cusum is not None and self.cusum.path else None

    def see_night(self, night: str) -> None:
        """A round of gaming day ``night`` is next (the path goes on through quiet nights)."""
        self.night = night
        if self.cusum is not None:
            self.cusum.night(night)

    @property
    def equipment(self) -> Equipment:
        """What the table's game collects (``Game.equipment``)."""
        return GAMES[self.game].equipment

    def observe(self, rnd: Round, tally: Tally) -> None:
        """Fold one round's outcomes into ``tally``."""
        equipment = self.equipment
        tally.rounds += 1
        cancelled = any(e.type in _CANCELLED for e in rnd.events)
        per_hand: Counter[str] = Counter()
        for event in rnd.events:
            kind = event.type
            if kind == "spin_result":
                spin(tally, int(_field(event, "number")), equipment.red)
            elif (faces := equipment.throw(event)) is not None:
                dice(tally, list(faces), runs=equipment.small_big_runs)
            elif kind == "deck_shuffled":
                self.finish(tally)
                self.decks = int(_field(event, "decks"))
                self.shoe_size, self.last_rank = CARD_KINDS * self.decks, None
            elif kind == "shoe_closed":
                self.finish(tally)
                self.shoe_size, self.last_rank = 0, None
            elif kind == "card_burned":
                self._seen(_field(event, "card"))
                self._card(tally, _field(event, "card"))
            elif kind == "card_dealt":
                if cancelled:
                    self.last_rank = None
                    continue
                card = str(_field(event, "card"))
                hand = str(_field(event, "to"))
                per_hand[hand] += 1
                tally.count(f"cards:{hand}#{per_hand[hand]}", CARD_KINDS, card_index(card))
                tally.count("cards", CARD_KINDS, card_index(card))
                self._seen(card)
                self._card(tally, card)
        for test, cells, cell in equipment.draws(rnd):
            tally.count(test, cells, cell)
        pool = equipment.pool(rnd)
        if pool is not None:
            counts = list(pool.counts)
            population = pool.copies * len(counts)
            tally.close_pool(population, pool.copies, counts, pool.labels)
            self._sequential(TILE_CUSUM.name, population, pool.copies, counts, pool.labels)

    def finish(self, tally: Tally) -> None:
        """Close the shoe in play into ``tally`` (its composition is then tested)."""
        if self.shoe and self.decks:
            tally.close_shoe(self.decks, self.shoe)
            self._sequential(CARD_CUSUM.name, CARD_KINDS * self.decks, self.decks, self.shoe)
        self.shoe = []

    def _sequential(
        self, kind: str, population: int, copies: int, counts: list[int], labels: tuple[str, ...] = ()
    ) -> None:
        if self.cusum is None:
            if kind == CARD_CUSUM.name:
                self.cusum = CompositionCusum(CARD_CUSUM, tuple(cell_labels("cards")))
            else:
                self.cusum = CompositionCusum(TILE_CUSUM, labels)
        elif len(self.cusum.sums) != 2 * len(counts):
            return  # another composition than the one watched (a variant's wall)
        self.cusum.shoe(self.night, population, copies, counts)

    def _seen(self, card: Any) -> None:
        if card is None or not self.decks:
            return
        if not self.shoe:
            self.shoe = [0] * CARD_KINDS
        self.shoe[card_index(str(card))] += 1

    def _card(self, tally: Tally, card: Any) -> None:
        """The next card out of the shoe, for the serial test (``None``: not recorded)."""
        if self.shoe_size < 2:
            return
        if card is None:
            self.last_rank = None
            return
        rank = RANKS.index(str(card)[0]) + 1 - RANK_MEAN
        if self.last_rank is not None:
            tally.serial.pair(self.last_rank, rank, self.shoe_size, RANK_VARIANCE)
        self.last_rank = rank


def spin(tally: Tally, number: int, red: frozenset[int]) -> None:
    """One spin: its pocket, and its colour (``red`` pockets) for the runs test (zero breaks no
    run)."""
    tally.count("pockets", POCKETS, number)
    if number:
        tally.run("colour_runs").add(number in red)


def dice(tally: Tally, faces: list[int], *, runs: bool) -> None:
    """One throw: each die's face; with ``runs``, small or big for the runs test (FPC)."""
    for i, face in enumerate(faces):
        tally.count(f"die{i + 1}", FACES, int(face) - 1)
    if runs:
        tally.run("small_big_runs").add(sum(faces) <= SMALL_MAX)


def _field(event: object, name: str) -> Any:
    return getattr(event, name, None)
