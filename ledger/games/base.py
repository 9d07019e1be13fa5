"""What a game plugs into the ledger: its feed events, when betting closes, and its rules.

Each game folder (``ledger/games/<name>/``) has the same files:

- ``feed.py``     — pydantic models of its bet spots and its own feed events;
- ``tables.py``   — the data: payouts, rankings, with the article of each entry;
- ``rules.py``    — pure functions over recorded facts: outcome, whether a spot is valid,
                    and the settlement a bet is due;
- ``round.py``    — ``derive(round)``: folds one recorded round into a :class:`Derivation`;
- ``session.py``  — where the rules span rounds: a :class:`GameSession` that derives each
                    round given the earlier ones, and advances past it;
- ``money.py``    — ``MONEY``, the :class:`Money` hooks: what the round means for the house's
                    books (commission recorded, house result, turnover, jackpot contribution);

and, in the folders whose game needs them (the defaults on :class:`Game` do nothing):

- ``compare.py``  — ``compare(round, derivation)``: what verify compares beyond bets, as
                    findings (SP9: the bank's layers; Mah-Jong: payments and fees);
- ``page.py``     — ``money_tables(round, derivation)``: what a round page shows beside the
                    bets, derived against recorded (:class:`MoneyTable`; SP9, Mah-Jong);
- ``equipment.py``— ``EQUIPMENT``, the :class:`Equipment` its statistics collect (a wheel, a
                    shaker, a wall; a shoe of cards is the default);
- ``bank_view.py``— ``bank_round(round, derivation)``: a player-held bank's round for the bank
                    view, read from the judged derivation (:class:`BankRound`; SP9);
- ``dependency.py``— the :class:`Dependency` hook of a game whose rounds depend on earlier
                    ones: which keys of the signed state a round reads and moves, and how its
                    state splits into those keys and back (3CB, SP9, STUD; ``ledger.merkle.state``);
- ``simulate.py`` — plays realistic rounds for ``ledger simulate``, with injected errors
                    (registered in ``ledger/tools/simulators.py``, not here: production code never
                    imports a simulator);
- ``__init__.py`` — ``GAME``, the :class:`Game` record below.

One vocabulary: the rules *derive* a round (``derive``, a :class:`Derivation`) and a session
*advances* past it to the next; a rule's decision about one thing is a :class:`Verdict`. Only
verify *judges*: it compares what the rules derive with what the table recorded
(``ledger.verify.checks``).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, cast

from ledger.domain.findings import Finding
from ledger.domain.money import ZERO, same_amount
from ledger.feed.envelope import BetPlaced, FeedEvent, Result
from ledger.feed.types import GameKey

if TYPE_CHECKING:
    from ledger.domain.round import Round


D = TypeVar("D")


@dataclass(frozen=True)
class Verdict(Generic[D]):
    """What one rule decides, under which article, and why: the prize a Fish-Prawn-Crab spot
    wins on a throw (``Verdict[Prize | None]``, ``None``: it loses), whether an SP9 seat beats
    the banker (``Verdict[bool]``), the seat liable for the others in Mah-Jong
    (``Verdict[str]``)."""

    decision: D
    rule: str
    reason: str


Later = tuple[Callable[..., str], tuple[Any, ...]]
"""A text to write when first read: a pure function and its arguments (``Step.later``,
``Settlement.later``)."""


def _written(later: Later | None) -> str:
    """The text ``later`` writes (there is one: the record's text was not written yet)."""
    assert later is not None
    make, args = later
    return make(*args)


class Settlement:
    """The settlement a bet is due under the rules, and why (the article).

    ``Settlement(result, returned, won, commission, rule, reason)``, or :meth:`later`: the
    reason written only when it is first read (a finding's message, ``ledger replay``, a round
    page), never for the settlements verify finds as recorded. Read-only by convention; equal,
    hashed and shown like the frozen record it replaces."""

    __slots__ = ("_make", "_reason", "commission", "result", "returned", "rule", "won")

    result: Result
    returned: Decimal
    won: Decimal
    commission: Decimal
    rule: str
    _reason: str | None
    _make: Later | None

    def __init__(
        self, result: Result, returned: Decimal, won: Decimal, commission: Decimal, rule: str, reason: str
    ) -> None:
        self.result, self.returned, self.won, self.commission = result, returned, won, commission
        self.rule, self._reason, self._make = rule, reason, None

    @classmethod
    def later(
        cls,
        result: Result,
        returned: Decimal,
        won: Decimal,
        commission: Decimal,
        rule: str,
        make: Callable[..., str],
        *args: Any,
    ) -> Settlement:
        """A settlement whose reason is ``make(*args)``, written when first read (``make`` pure,
        ``args`` not changed afterwards)."""
        due = cls.__new__(cls)
        due.result, due.returned, due.won, due.commission = result, returned, won, commission
        due.rule, due._reason, due._make = rule, None, (make, args)
        return due

    @property
    def reason(self) -> str:
        """Why, in words."""
        reason = self._reason
        if reason is None:
            reason = self._reason = _written(self._make)
            self._make = None
        return reason

    @classmethod
    def lose(cls, rule: str, reason: str) -> Settlement:
        """A lost bet: the stake goes to the house, nothing is returned (RULES §0.3)."""
        return cls("lose", ZERO, ZERO, ZERO, rule, reason)

    @classmethod
    def void(cls, stake: Decimal, rule: str, reason: str) -> Settlement:
        """A bet cancelled (with its round, or refused by a rule): the stake returned, nothing
        won (FEED §2 ``void``)."""
        return cls("void", stake, ZERO, ZERO, rule, reason)

    @classmethod
    def carry(cls, rule: str, reason: str) -> Settlement:
        """A bet carried into the table's next round: nothing paid, nothing returned, all three
        ``0`` (FEED §2 ``carry``; 3CB RULES §3.7, STUD art. 11)."""
        return cls("carry", ZERO, ZERO, ZERO, rule, reason)

    def as_dict(self) -> dict[str, str]:
        """The four compared fields as FEED strings."""
        return {
            "result": self.result,
            "returned": str(self.returned),
            "won": str(self.won),
            "commission": str(self.commission),
        }

    def _fields(self) -> tuple[Any, ...]:
        return (self.result, self.returned, self.won, self.commission, self.rule, self.reason)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Settlement):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return (
            f"Settlement(result={self.result!r}, returned={self.returned!r}, won={self.won!r}, "
            f"commission={self.commission!r}, rule={self.rule!r}, reason={self.reason!r})"
        )


class Step:
    """One line of a round's derivation, for ``ledger replay``: what follows, and the article.

    ``Step(text, rule)``, or :meth:`later`: the text written only when it is first read. Verify
    reads findings, never steps, so a step built per bet or per tile in every round is a
    function and its arguments until ``ledger replay`` or a round page asks for its text (the
    same text either way). Equal, hashed and shown like the frozen record it replaces."""

    __slots__ = ("_make", "_text", "rule")

    def __init__(self, text: str, rule: str | None = None) -> None:
        self._text: str | None = text
        self._make: Later | None = None
        self.rule = rule

    @classmethod
    def later(cls, rule: str | None, make: Callable[..., str], *args: Any) -> Step:
        """A step whose text is ``make(*args)``, written when first read. ``make`` must be pure
        and ``args`` not changed afterwards (values, or objects the derivation no longer
        touches)."""
        step = cls.__new__(cls)
        step._text, step._make, step.rule = None, (make, args), rule
        return step

    @property
    def text(self) -> str:
        """What follows, in words."""
        text = self._text
        if text is None:
            text = self._text = _written(self._make)
            self._make = None
        return text

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Step):
            return NotImplemented
        return (self.text, self.rule) == (other.text, other.rule)

    def __hash__(self) -> int:
        return hash((self.text, self.rule))

    def __repr__(self) -> str:
        return f"Step(text={self.text!r}, rule={self.rule!r})"


@dataclass(frozen=True)
class Commission:
    """Commission not tied to one bet: an SP9 bank layer's share, a Mah-Jong table fee.

    ``recorded`` is what the table's feed says it took (``None`` if it recorded nothing);
    the finance projection sums these next to the commission of each bet's settlement.
    """

    party: str
    """Who pays it: ``seat:3``, ``casino``, a Mah-Jong wind ``E``."""
    due: Decimal
    recorded: Decimal | None
    rule: str


@dataclass(frozen=True)
class JackpotAward:
    """One jackpot award the rules give: the bet, the place, the hand, how much, and who pays."""

    bet: str
    seat: int
    hand: str
    amount: Decimal
    from_pool: Decimal
    from_house: Decimal


@dataclass(frozen=True)
class JackpotMovement:
    """What one round did to a linked jackpot pool, as the rules derive it (the pool's own
    arithmetic lives in the game): the finance views and the journal book these amounts."""

    pool: str
    seed: Decimal
    opened: bool
    """The pool was created at its seed by this round (its first round in the ledger)."""
    start: Decimal
    contributed: Decimal
    contribution_bets: int
    after_contributions: Decimal
    awards: tuple[JackpotAward, ...]
    reset: Decimal
    """What the house added to restart an emptied pool at its seed."""
    end: Decimal

    @property
    def from_pool(self) -> Decimal:
        """Awards paid out of the pool."""
        return sum((a.from_pool for a in self.awards), Decimal(0))

    @property
    def from_house(self) -> Decimal:
        """Awards (or parts of them) the house funded: an expense, not the pool's."""
        return sum((a.from_house for a in self.awards), Decimal(0))

    @property
    def hits(self) -> int:
        """How many awards."""
        return len(self.awards)


@dataclass(frozen=True)
class LayerDue:
    """One SP9 bank layer as the rules settle it: its capital, its share of the bank's result
    and the commission on that share (SP9 art. 5(5))."""

    party: str
    capital: Decimal
    share: Decimal
    commission: Decimal


@dataclass(frozen=True)
class BankDue:
    """What the rules say an SP9 bank is due in a round they could settle: the bank's result
    ``W``, its capacity ``K`` (art. 5(3)) and each layer, in settlement order."""

    result: Decimal
    capacity: Decimal
    layers: tuple[LayerDue, ...]


@dataclass(frozen=True)
class PaymentDue:
    """One payment the rules require between Mah-Jong players: ``amount`` from ``frm`` to
    ``to``, and any shortfall (MJ arts. 7–10)."""

    frm: str
    to: str
    amount: Decimal
    reason: str
    rule: str
    note: str
    shortfall: Decimal = ZERO


@dataclass
class Derivation:
    """What the rules say about one recorded round.

    ``expected`` holds the settlement each bet is due (bets absent from it are not judged, for
    instance when the outcome is missing), ``bank`` what an SP9 bank's layers are due and
    ``payments`` what Mah-Jong players owe each other; ``findings`` holds the game's own
    findings (``invalid_bet``, ``invalid_deal``, …). Comparing what is due with what the table
    recorded is verify's (``ledger.verify.checks``), which reports, in this order: ``findings``,
    the game's own comparisons (``Game.compare``: the bank, the payments), ``session_findings``,
    the bet comparisons.
    """

    steps: list[Step] = field(default_factory=list)
    expected: dict[str, Settlement] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    commissions: list[Commission] = field(default_factory=list)
    """Commission due outside bet settlements (SP9 bank layers, Mah-Jong fees)."""
    jackpot: JackpotMovement | None = None
    """The round's effect on its linked jackpot pool, when derived in context (STUD)."""
    bank: BankDue | None = None
    """SP9: the bank's result and each layer's due, when the round could be settled."""
    payments: list[PaymentDue] | None = None
    """Mah-Jong: every payment due in an ended game (``None``: not compared)."""
    session_findings: list[Finding] = field(default_factory=list)
    """Findings that need earlier rounds (a :class:`GameSession`'s): a bank run, a pool."""
    context: Any = None
    """What the game's session knew of the round beyond the above (SP9: the bank's facts, its
    run and the table's bank after it), for the game's own hooks (``Game.bank_round``); opaque
    to generic code."""


@dataclass(frozen=True)
class Charge:
    """One commission the table recorded: who paid it (a player as finance names them), the
    amount, and where it was recorded."""

    payer: str
    """The player (``P-88``), ``seat:N`` or ``-`` for a bet; ``bank:<party>`` for an SP9 bank
    layer; the player at the wind for a Mah-Jong fee."""
    party: str | None
    """The rules' name of a commission outside bets (``Commission.party``), else ``None``."""
    amount: Decimal
    kind: str
    """``bet`` (``bet_settled``), ``bank`` (SP9 ``bank_settled``), ``fee`` (``commission_charged``)."""
    bet: str | None = None


@dataclass(frozen=True)
class Money:
    """A game's money hooks (its ``money.py``): the one place that says what a round means for
    the house's books. The views, the day report and the exports call these and never branch on
    a game or an event type."""

    charges: Callable[[Round], list[Charge]]
    """Every commission the table recorded in the round (bets, bank layers, fees)."""
    payer: Callable[[Round, str], str]
    """The payer of a commission the rules say is due outside bets (``Commission.party``)."""
    house_result: Callable[[Round], Decimal]
    """The house's own result before commission, as recorded (hold)."""
    turnover: Callable[[Round], Decimal]
    """What was staked (or, between players, paid) in the round."""
    jackpot: Callable[[Round, Derivation], JackpotMovement | None]
    """The round's effect on a jackpot pool, from the round's derivation."""
    banks_bets: bool = True
    """Whether the house is the other side of every bet (not SP9, where a seat banks, nor
    Mah-Jong, played between players): then a wrong payout moves the house's result."""


Deriver = Callable[["Round"], Derivation]


@dataclass(frozen=True)
class ComparedField:
    """One field of a money table, as derived and as recorded (``None``: nothing there)."""

    derived: Decimal | str | None
    recorded: Decimal | str | None

    @property
    def differs(self) -> bool:
        """Whether the table recorded something other than the rules derive."""
        d, r = self.derived, self.recorded
        if d is None or r is None:
            return d is not r
        if isinstance(d, Decimal) and isinstance(r, Decimal):
            return not same_amount(d, r)
        return d != r


@dataclass
class MoneyRow:
    """One row of a money table (an SP9 bank layer, a Mah-Jong payment): who, then each
    compared field."""

    who: list[str | Decimal]
    """Who the row is about; an amount (an SP9 layer's capital) is written by the page."""
    fields: list[ComparedField]


@dataclass
class MoneyTable:
    """Money not tied to one bet, derived against recorded, with its article: what a game's
    round page shows beside the bets table (its ``page.py``)."""

    title: str
    who: list[str]
    fields: list[str]
    rule: str
    rows: list[MoneyRow] = field(default_factory=list)


@dataclass(frozen=True)
class Cells:
    """The cells of a goodness-of-fit test a game's equipment defines (Mah-Jong tiles): what
    each cell is, and its probability on fair equipment."""

    labels: tuple[str, ...]
    probabilities: tuple[float, ...]


@dataclass(frozen=True)
class Pool:
    """What one round drew without replacement from a container of fixed composition (a
    Mah-Jong wall: ``copies`` of each of its kinds), for the composition test and its CUSUM."""

    copies: int
    labels: tuple[str, ...]
    """The kinds the container holds (``copies`` of each)."""
    counts: tuple[int, ...]
    """How many of each kind were drawn."""


def _no_throw(event: FeedEvent) -> Sequence[int] | None:
    return None


def _no_pool(rnd: Round) -> Pool | None:
    return None


def _no_draws(rnd: Round) -> Iterator[tuple[str, int, int]]:
    return iter(())


def _no_cells(test: str) -> Cells | None:
    return None


@dataclass(frozen=True)
class Equipment:
    """What a game's equipment statistics collect (its ``equipment.py``), for
    ``ledger.stats``: the equipment's name, which events are dice throws, the roulette layout,
    and the counted draws of a game's own tests. Cards in FEED notation (``card_dealt``,
    ``card_burned``, a shoe's ``deck_shuffled``) and ``spin_result`` are read alike in every
    game."""

    name: str
    """``wheel``, ``shaker``, ``shoe`` or ``wall``: the equipment of its card, spin or tile
    tests (dice tests are always the ``shaker``'s)."""
    throw: Callable[[FeedEvent], Sequence[int] | None] = _no_throw
    """The faces of an event that is a counted dice throw (``None``: not one)."""
    small_big_runs: bool = False
    """Whether its throws are tested for runs of small (≤ 10) and big totals."""
    red: frozenset[int] = frozenset()
    """The red pockets of its wheel (the colour runs test)."""
    wheel_order: tuple[int, ...] = ()
    """Its wheel's pockets in wheel order (the sector test, the wheel plot)."""
    draws: Callable[[Round], Iterator[tuple[str, int, int]]] = _no_draws
    """``(test, cells, cell)`` for each outcome of the game's own tests in a round (Mah-Jong
    tiles drawn from the wall in the deal): the test, its number of cells, the outcome's."""
    cells: Callable[[str], Cells | None] = _no_cells
    pool: Callable[[Round], Pool | None] = _no_pool
    """What a round drew from a container of fixed composition it empties alone (a wall;
    ``None``: none). Shoes, which span rounds, are read from the card events."""
    """The cells of one of the game's own tests (``None``: not the game's)."""


@dataclass(frozen=True)
class BankLayerRound:
    """One layer of a player-held bank in one round: its capital, its share of the bank's
    result and the commission on it as the rules derive them (``None``: not settled), and what
    the table recorded (``None``: nothing)."""

    party: str
    capital: Decimal
    share: Decimal | None
    commission: Decimal | None
    recorded_share: Decimal | None
    recorded_commission: Decimal | None


@dataclass(frozen=True)
class BankHolder:
    """Who holds a table's bank after a round, and the state the game keeps (plain JSON)."""

    banker: int | None
    run: int
    capital: Decimal
    carry: Decimal | None
    """The least the same banker must post next round, if any."""
    state: dict[str, Any]


@dataclass(frozen=True)
class BankRound:
    """A round of a game whose bank a player holds (SP9), as the bank view folds it: from the
    judged round's derivation, never derived again (``Game.bank_round``)."""

    banker: int | None
    capital: Decimal
    capacity: Decimal
    result: Decimal | None
    layers: tuple[BankLayerRound, ...]
    commission: Decimal
    """The commission due from every layer."""
    run: int
    """The round's place in its banker's run (0: the round moved no bank)."""
    after: BankHolder | None
    """The table's bank after the round, when the round moved it (else ``None``)."""


def no_money_tables(rnd: Round, derivation: Derivation) -> list[MoneyTable]:
    """No money outside bets on the round page."""
    return []


class Dependency(Protocol):
    """What a game's ``dependency.py`` module provides: the parts of the state its rounds carry
    from round to round, each under a key (a table's carried bets and shoe, a table's bank, a
    linked pool), so that a proof bundle carries only the parts one round depends on.

    Keys start with the game's key and a slash (``STUD/pool/P1``). The state is the one
    ``RoundJudge.game_state`` gives (``{"session": …, "carries": …}``)."""

    def depends_on(self, rnd: Round) -> list[str]:
        """The keys of the state ``rnd`` reads and moves when it is judged."""
        ...

    def split(self, state: dict[str, Any]) -> dict[str, Any]:
        """The game's state as one plain JSON value per key."""
        ...

    def join(self, parts: dict[str, Any]) -> dict[str, Any]:
        """The game's state made of some of the values :meth:`split` gave (the others absent)."""
        ...


class GameSession(Protocol):
    """A game's state across rounds during one verify run: carried bets, the SP9 bank's runs, a
    linked jackpot pool. Verify creates one per run and feeds it **every** round of the game in
    the order the ledger stored them (the order of their closing events), selected or not, so
    that the pool or the bank stands where it stood when each round was played."""

    def derive(self, rnd: Round) -> Derivation:
        """The derivation of ``rnd`` given every earlier round, then advance past it (its
        cross-round findings in ``Derivation.session_findings``)."""
        ...

    def finish(self) -> list[Finding]:
        """Findings that only the end of the log reveals (nothing, for most games)."""
        ...

    def to_json(self) -> dict[str, Any]:
        """The session's state as plain JSON (decimals as strings), so a projection can keep it
        in a row and resume where it stopped."""
        ...

    def load(self, data: dict[str, Any]) -> None:
        """Restore the state :meth:`to_json` gave."""
        ...


def never_after_close(bet: BetPlaced) -> bool:
    """No bet is allowed after betting closes (every game but STUD)."""
    return False


@dataclass(frozen=True)
class Game:
    """One of the six games, as the ledger sees it."""

    key: GameKey
    name: str
    regulation: str
    events: tuple[type[FeedEvent], ...]
    closes_betting: frozenset[str]
    """Event types that close betting, besides ``betting_closed`` (FEED §10)."""
    derive: Deriver
    """Rules of one round taken alone; used when the game has no ``session``."""
    money: Money
    """Its money hooks (``money.py``)."""
    allowed_after_close: Callable[[BetPlaced], bool] = never_after_close
    session: Callable[[], GameSession] | None = None
    """Rules that need earlier rounds (bank runs, jackpot pool); replaces ``derive`` in verify."""
    carries_bets: bool = False
    """Bets may be settled ``carry`` and restated in the table's next round (3CB, STUD)."""
    compare: Callable[[Round, Derivation], Iterator[Finding]] | None = None
    """What verify compares beyond bets (its ``compare.py``): an SP9 bank's layers, Mah-Jong
    payments and fees, derived (``Derivation``) against recorded, as findings (``None``:
    nothing beyond bets, and no call per round)."""
    money_tables: Callable[[Round, Derivation], list[MoneyTable]] = no_money_tables
    """What its round page shows beside the bets (its ``page.py``): money not tied to a bet,
    derived against recorded."""
    bank_round: Callable[[Round, Derivation], BankRound] | None = None
    """A player-held bank's round for the bank view (its ``bank_view.py``; SP9), from the
    judged round's derivation; ``None``: the game has no such bank."""
    equipment: Equipment = Equipment("shoe")
    """What its equipment statistics collect (its ``equipment.py``)."""
    us_per_event: float = 18.0
    """Measured verify cost per stored event, in microseconds (balancing parallel workers)."""
    takes_bets: bool = True
    """Whether players stake bets (not Mah-Jong, where players pay each other): its hold is a
    share of its turnover, and its round page has a bets table even when empty."""

    @property
    def follows_rounds(self) -> bool:
        """Whether verify must see every round of this game, in order, to judge any of them."""
        return self.session is not None or self.carries_bets

    @property
    def dependency(self) -> Dependency | None:
        """The game's :class:`Dependency` hook, its folder's ``dependency.py`` (``None``: its
        rounds depend on no earlier round's state, or it has no such module)."""
        return _dependency(self)

    def event_class(self, type_name: str) -> type[FeedEvent] | None:
        """The model of one feed ``type`` for this game, or ``None`` if the game has no such type."""
        return _event_index(self).get(type_name)


_INDEXES: dict[str, dict[str, type[FeedEvent]]] = {}


def _event_index(game: Game) -> dict[str, type[FeedEvent]]:
    index = _INDEXES.get(game.key)
    if index is None:
        index = {cls.TYPE: cls for cls in game.events}
        _INDEXES[game.key] = index
    return index


_DEPENDENCIES: dict[str, Dependency | None] = {}


def _dependency(game: Game) -> Dependency | None:
    """The ``dependency`` module beside the game's ``round.py`` (the folder of its ``derive``),
    imported once; ``None`` when the folder has none."""
    if game.key not in _DEPENDENCIES:
        folder = game.derive.__module__.rpartition(".")[0]
        name = f"{folder}.dependency"
        found: Dependency | None = None
        if folder.startswith("ledger.games.") and importlib.util.find_spec(name) is not None:
            found = cast(Dependency, importlib.import_module(name))
        _DEPENDENCIES[game.key] = found
    return _DEPENDENCIES[game.key]
