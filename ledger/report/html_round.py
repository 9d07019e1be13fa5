"""``ledger report TABLE/ROUND --html FILE``: one round as a page an inspector would rather read.

Rendered generically from a :class:`~ledger.services.replay.RoundReplay` — the outcome drawn as glyphs
(:mod:`ledger.report.glyphs`), the bets with the derived settlement beside the recorded one, the
derivation step by step with its articles, the findings, and every event in ``seq`` order. An
event type the report does not know is a plain row of its fields, so a game's new events never
break the page. Everything from the feed is escaped (:mod:`ledger.report.markup`).
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from ledger.domain.money import AMOUNT_FIELDS
from ledger.games import GAMES
from ledger.report.glyphs import Glyph, OutcomeLine, outcome_lines
from ledger.report.markup import Markup, el, join
from ledger.report.money import MoneyTable, Pair, money_tables
from ledger.report.numbers import amount
from ledger.report.page import page
from ledger.report.provenance import Provenance, footer
from ledger.report.recall import state
from ledger.report.svg import fpc_figure
from ledger.services.replay import RoundReplay

NOTABLE = frozenset(
    {
        "irregularity",
        "round_voided",
        "die_cocked",
        "spin_voided",
        "card_exposed",
        "cards_cancelled",
        "deal_corrected",
        "claim_error",
    }
)
"""Event types highlighted in the events table: what an inspector looks for first."""


def render_round(replay: RoundReplay, provenance: Provenance | None = None) -> str:
    """The whole page of one round."""
    rnd = replay.round
    game = GAMES.get(rnd.game)
    title = f"{rnd.game} round {rnd.table}/{rnd.round}"
    return page(
        title,
        join(
            [
                el(
                    "header",
                    el("h1", f"{game.name if game else rnd.game} — round {rnd.table}/{rnd.round}"),
                    el(
                        "p",
                        f"{game.regulation if game else ''} · {rnd.opened.currency} · opened "
                        f"{rnd.opened_at.isoformat()} · {state(replay)} · rulebook "
                        f"{(rnd.opened.rules_hash or '')[:16]}",
                        class_="sub",
                    ),
                    verdict(replay),
                ),
                el("section", el("h2", "Outcome"), outcome_block(outcome_lines(rnd)), class_="keep"),
                None
                if game is not None and not game.takes_bets and not rnd.bets
                else el(
                    "section", el("h2", "Bets: derived against recorded"), bets_table(replay), class_="keep"
                ),
                join(
                    el("section", el("h2", t.title), money_table(t), class_="keep")
                    for t in money_tables(rnd, replay.derivation)
                ),
                el("section", el("h2", "Derivation"), steps_block(replay)),
                el(
                    "section",
                    el("h2", "Findings"),
                    findings_table([f.to_json() for f in replay.findings]),
                    class_="keep",
                ),
                el("section", el("h2", "Events"), events_table(replay)),
                footer(
                    provenance,
                    f"ledger report {rnd.table}/{rnd.round} · the same round in the "
                    f"terminal: ledger replay {rnd.table}/{rnd.round}",
                ),
            ]
        ),
    )


def verdict(replay: RoundReplay) -> Markup:
    """A badge: no finding, or how many."""
    errors = len(replay.errors)
    if errors:
        return el("p", el("span", f"{errors} finding{'s' if errors > 1 else ''}", class_="badge bad"))
    return el("p", el("span", "derived and recorded agree", class_="badge ok"))


def outcome_block(lines: list[OutcomeLine]) -> Markup:
    """The outcome facts as drawn glyphs, one box per hand, throw or spin."""
    if not lines:
        return el("p", "No outcome recorded.", class_="sub")
    return el(
        "div",
        [
            el(
                "div",
                el("div", line.label, class_="who"),
                el("div", [glyph(g) for g in line.glyphs], class_="glyphs"),
                el("div", line.note, class_="note") if line.note else None,
                class_="line",
            )
            for line in lines
        ],
        class_="outcome",
    )


def glyph(g: Glyph) -> Markup:
    """One card, die, figure, tile or wheel number."""
    tone = f"tone-{g.tone}"
    if g.kind == "card":
        return el(
            "span",
            el("span", g.text[:-1]),
            el("span", g.text[-1], class_="pip"),
            class_=f"card {tone}",
            title=f"{g.label} {g.unicode}",
            aria_label=g.label,
        )
    if g.kind == "die":
        return el("span", g.text, class_="die", title=g.label, aria_label=g.label)
    if g.kind == "fpc":
        figure, colour = g.label.split(" (")[0], g.tone
        return el(
            "span", fpc_figure(figure, colour), el("small", g.text), class_=f"fpc {tone}", title=g.label
        )
    if g.kind == "tile":
        face, caption = tile_face(g.code)
        return el(
            "span",
            el("span", face, class_="face"),
            el("small", caption),
            class_=f"tile {tone}",
            title=f"{g.label} {g.unicode}",
            aria_label=g.label,
        )
    if g.kind == "wheel":
        return el("span", g.text, class_=f"wheel {tone}", title=g.label, aria_label=g.label)
    return el("span", g.text, title=g.label)


TILE_CAPTIONS = {"B": "bam", "C": "char", "D": "dot", "W": "wind"}


def tile_face(code: str) -> tuple[str, str]:
    """A tile drawn with text any font has: ``("5", "bam")``, ``("E", "wind")``,
    ``("R", "dragon")``. The Unicode tile (🀋) is in the tooltip: few fonts carry it."""
    if code.endswith("D") and code[0] in "RGW":
        return code[0], "dragon"
    return code[0], TILE_CAPTIONS.get(code[1:], code[1:])


SETTLEMENT_FIELDS = ("result", "returned", "won", "commission")


def bets_table(replay: RoundReplay) -> Markup:
    """Each bet: stake, the settlement the rules give, the one the table recorded, and why; in
    a mismatch only the differing fields are marked."""
    data = replay.to_json()
    if not data["bets"]:
        return el("p", "No bets in this round.", class_="sub")
    head = el(
        "tr",
        [el("th", h) for h in ("", "bet", "player", "spot")],
        el("th", "stake", class_="num"),
        el("th", "derived"),
        el("th", "recorded"),
        el("th", "why"),
    )
    rows = []
    for bet in data["bets"]:
        derived, recorded = bet["derived"], bet["recorded"]
        differs = {f for f in SETTLEMENT_FIELDS if _differs(derived, recorded, f)}
        why = [derived["reason"], " ", el("span", derived["rule"], class_="rule")] if derived else "-"
        extra = [] if bet["agrees"] or differs else _finding_fields(data["findings"], bet["bet"])
        rows.append(
            el(
                "tr",
                el("td", "✓" if bet["agrees"] else "✗", class_="ok" if bet["agrees"] else "bad"),
                el("td", bet["bet"]),
                el("td", bet["player"] or ""),
                el("td", bet["spot"]),
                el("td", _money(bet["amount"]), class_="num"),
                el("td", settlement_cell(derived, differs, "want"), [e for e, _ in extra]),
                el("td", settlement_cell(recorded, differs, "diff"), [r for _, r in extra]),
                el("td", why, class_="why"),
                class_=None if bet["agrees"] else "mismatch",
            )
        )
    return el("table", el("thead", head), el("tbody", rows), class_="bets")


def _finding_fields(findings: list[dict[str, Any]], bet: str) -> list[tuple[Markup, Markup]]:
    """For a bet marked wrong whose settlement agrees (a jackpot paid beside it, a bet that
    should not have been taken): each error finding's differing fields, expected against
    recorded (``jackpot_mismatch: amount 250.00`` / ``amount 350.00``), so the row shows the
    value that is wrong; the finding's code alone when it has no such fields."""
    pairs: list[tuple[Markup, Markup]] = []
    for f in findings:
        if f["bet"] != bet or f["severity"] != "error":
            continue
        expected, recorded = f["expected"] or {}, f["recorded"] or {}
        names = [k for k in {**expected, **recorded} if _field_differs(expected.get(k), recorded.get(k))]
        pairs.append(
            (
                _finding_side(f["code"], names, expected, "want"),
                _finding_side(f["code"], names, recorded, "diff"),
            )
        )
    return pairs


def _finding_side(code: str, names: list[str], values: dict[str, Any], mark: str) -> Markup:
    """One side of :func:`_finding_fields`: the code, then each differing field marked."""
    fields = [
        el("span", el("i", name + " "), _money(values.get(name)), class_=f"fld {mark}") for name in names
    ]
    return el(
        "div",
        el("i", f"{code}: "),
        fields or el("span", "see Findings", class_="fld"),
        class_="finding-fields",
    )


def _differs(derived: dict[str, Any] | None, recorded: dict[str, Any] | None, name: str) -> bool:
    if not derived or not recorded:
        return derived is not None or recorded is not None
    a, b = derived.get(name), recorded.get(name)
    try:
        return Decimal(str(a)).compare(Decimal(str(b))) != 0
    except InvalidOperation:
        return bool(a != b)


def settlement_cell(s: dict[str, Any] | None, differs: set[str], mark: str) -> Markup:
    """``win · returned 100.00 · won 3,500.00 · commission 0.00``, the differing fields in
    ``mark`` (``diff`` on the recorded side, ``want`` on the derived side)."""
    if not s:
        return el("span", "—", class_=f"fld {mark}" if differs else "fld")
    parts: list[Markup] = []
    for name in SETTLEMENT_FIELDS:
        value = s[name] if name == "result" else _money(s[name])
        label = None if name == "result" else el("i", name + " ")
        parts.append(el("span", label, value, class_=f"fld {mark}" if name in differs else "fld"))
    return el("span", parts, class_="settlement")


def settlement_text(s: dict[str, Any] | None) -> str:
    """``win: returned 100.00, won 3,500.00, commission 0.00`` or ``-``."""
    if not s:
        return "-"
    return (
        f"{s['result']}: returned {_money(s['returned'])}, won {_money(s['won'])}, "
        f"commission {_money(s['commission'])}"
    )


def _money(text: str | None) -> str:
    try:
        return amount(Decimal(str(text)))
    except InvalidOperation:
        return str(text)


def money_table(table: MoneyTable) -> Markup:
    """Derived against recorded for money not tied to a bet, the differing fields marked."""
    head = el(
        "tr",
        [el("th", w) for w in table.who],
        el("th", ""),
        el("th", ""),
        [el("th", f, class_="num") for f in table.fields],
    )
    rows = []
    for row in table.rows:
        rows.append(
            el(
                "tr",
                [el("td", w, rowspan=2) for w in row.who],
                el("td", "✓" if row.agrees else "✗", rowspan=2, class_="ok" if row.agrees else "bad"),
                el("td", "derived", class_="side"),
                [
                    el("td", Pair.text(p.derived), class_="num want" if p.differs else "num")
                    for p in row.fields
                ],
                class_="derived-row",
            )
        )
        rows.append(
            el(
                "tr",
                el("td", "recorded", class_="side"),
                [
                    el("td", Pair.text(p.recorded), class_="num diff" if p.differs else "num")
                    for p in row.fields
                ],
                class_="recorded-row",
            )
        )
    return join(
        [
            el("table", el("thead", head), el("tbody", rows), class_="money"),
            el("p", el("span", table.rule, class_="rule"), class_="sub"),
        ]
    )


def steps_block(replay: RoundReplay) -> Markup:
    """The derivation, one step per line, each with its article."""
    steps = replay.derivation.steps
    if not steps:
        return el(
            "p", "The rules of this game derive nothing yet: only the life-cycle checks ran.", class_="sub"
        )
    return el(
        "ol", [el("li", s.text, " ", el("span", s.rule or "", class_="rule")) for s in steps], class_="steps"
    )


def findings_table(findings: list[dict[str, Any]], with_round: bool = False) -> Markup:
    """Findings with code, bet, message, article, expected against recorded (the differing
    fields marked), each row coloured by its severity."""
    if not findings:
        return el("p", "None.", class_="sub")
    cols = (["round"] if with_round else []) + ["code", "bet", "message", "rule", "expected", "recorded"]
    rows = []
    for f in findings:
        expected, recorded = f.get("expected"), f.get("recorded")
        differs = {
            k
            for k in {*(expected or {}), *(recorded or {})}
            if expected and recorded and _field_differs(expected.get(k), recorded.get(k))
        }
        cells = [el("td", f"{f['table']}/{f['round']}", class_="nowrap")] if with_round else []
        cells += [
            el("td", el("code", f["code"], class_="code")),
            el("td", f.get("bet") or ""),
            el("td", f["message"]),
            el("td", f.get("rule") or "", class_="rule"),
            el("td", _field_spans(expected, differs, "want")),
            el("td", _field_spans(recorded, differs, "diff")),
        ]
        severity = f.get("severity") or "error"
        rows.append(el("tr", cells, class_=f"sev-{severity}"))
    return el(
        "table", el("thead", el("tr", [el("th", c) for c in cols])), el("tbody", rows), class_="findings"
    )


def _field_differs(a: object, b: object) -> bool:
    try:
        return Decimal(str(a)).compare(Decimal(str(b))) != 0
    except InvalidOperation:
        return a != b


def _field_text(name: str, value: object) -> str:
    """A finding's field as the page writes it: an amount with separators and its minus sign."""
    return _money(str(value)) if name in AMOUNT_FIELDS else str(value)


def _field_spans(d: dict[str, Any] | None, differs: set[str], mark: str) -> Markup:
    if not d:
        return el("span", "")
    return el(
        "span",
        [
            el(
                "span",
                el("i", f"{k} "),
                "—" if v is None else _field_text(k, v),
                class_=f"fld {mark}" if k in differs else "fld",
            )
            for k, v in d.items()
        ],
        class_="settlement",
    )


def events_table(replay: RoundReplay) -> Markup:
    """Every stored event, in ``seq`` order; unknown types are plain rows of their fields."""
    rows = [
        el(
            "tr",
            el("td", e["seq"], class_="num"),
            el("td", e["at"], class_="at"),
            el("td", e["type"]),
            el("td", el("code", e["summary"])),
            class_="irregular" if e["type"] in NOTABLE else None,
        )
        for e in replay.to_json()["events"]
    ]
    head = el("tr", el("th", "seq", class_="num"), el("th", "at"), el("th", "type"), el("th", "fields"))
    return el("table", el("thead", head), el("tbody", rows), class_="events")
