"""Exports for finance tools: CSV and Parquet tables, a Beancount journal, and a manifest.

``export(app, directory, formats=...)`` first brings every registered view up to date, then
writes, for the gaming days selected and the rounds those views have folded (the log position
they stand at, the export's *checkpoint*, so the tables and the views describe the same rounds):

- ``rounds`` — one row per closed or voided round with its money, from the game's money hooks
  (``ledger.games.<game>.money``) and the round's judgement (``ledger.verify.judge``, the path
  verify uses): ``turnover``, ``hold``, ``commission`` (every commission recorded: bets, SP9
  bank layers, Mah-Jong fees) and its parts ``commission_bet``, ``commission_bank``,
  ``commission_fee``, ``commission_due`` and ``commission_unjudged`` (as in ``ledger
  commission``), ``jackpot_pool`` and ``jackpot_contribution``; its ``stake``, ``returned``
  and ``won`` are the bet settlements' as recorded;
- ``bets`` and ``settlements`` (bet settlements and SP9 bank layers, as recorded);
- ``commission`` (the reconciliation by gaming day and game) and ``projections`` (every row
  of every registered view with its position);

as ``.csv`` and/or ``.parquet``, and ``house.beancount`` (``projections.beancount``).

**Parquet** (pyarrow) has real types: times ``timestamp[us, tz=+08:00]`` (Macau time), the
gaming day ``date32``, money ``decimal128(38, s)`` with the scale the values need (never a
float), counts ``int64``, missing values as nulls, a bet's spot as a ``struct`` and a view row
as a ``struct`` of its fields (text that is a plain decimal becomes ``decimal128``). Every file
carries key-value metadata: ``store_head``, ``checkpoint`` (the log position), ``cutoff_hour``,
``ledger_version``, ``table``.

**CSV** is UTF-8 with a header row, exact decimal text and ISO dates. So that a spreadsheet
opened by double-click does not turn a round id ``000123`` into the number 123 or a time into
a reformatted local date, identifier cells (table, round, bet, player, seat, party) that a
spreadsheet would change (leading zeros, 16+ digits, exponents, trailing decimal zeros, dates,
times) are written as a text formula ``="000123"``, and
times are written as ISO 8601 text (``2026-11-20T10:01:00+08:00``), which spreadsheets keep as
text. A text cell that would start a formula (``= + - @``, tab, carriage return) coming from a
feed is prefixed with ``'`` (formula injection). Tools that need typed data read the Parquet.

``MANIFEST.json`` lists every file with its SHA-256, size and row count, the store's head
digest (which commits to every stored event), the checkpoint and the views' positions;
``SHA256SUMS`` repeats the digests in ``sha256sum -c`` form. Exports are deterministic: the
same store and options give byte-identical files.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as package_version
from itertools import takewhile
from pathlib import Path
from typing import Any

from ledger.domain.errors import UsageError
from ledger.domain.round import Round
from ledger.feed.envelope import BetSettled
from ledger.games import GAMES
from ledger.games.money import money_of
from ledger.storage.store import LedgerApp
from ledger.verify.judge import Judged, judge_rounds
from projections.base import MemoryRows, closed_rounds
from projections.beancount import journal, movements
from projections.commission import (
    CommissionView,
    commission_items,
    commission_report,
    money_text,
)
from projections.gaming_day import day_of
from projections.house import COMMISSION_KINDS, HouseView
from projections.registry import registered_views
from projections.updater import read_views

FORMATS = ("csv", "parquet", "beancount")
ZERO = Decimal(0)
PARQUET_TZ = "+08:00"

Column = tuple[str, str]
"""``(name, kind)``; kind is ``str``, ``id`` (text a spreadsheet must not convert), ``int``,
``bool``, ``money``, ``time``, ``date``, ``struct`` or ``record`` (a JSON object)."""

SCHEMAS: dict[str, list[Column]] = {
    "rounds": [
        ("position", "int"),
        ("gaming_day", "date"),
        ("table", "id"),
        ("round", "id"),
        ("game", "str"),
        ("currency", "str"),
        ("opened_at", "time"),
        ("ended_at", "time"),
        ("ended", "str"),
        ("bets", "int"),
        ("stake", "money"),
        ("returned", "money"),
        ("won", "money"),
        ("turnover", "money"),
        ("hold", "money"),
        ("commission", "money"),
        ("commission_bet", "money"),
        ("commission_bank", "money"),
        ("commission_fee", "money"),
        ("commission_due", "money"),
        ("commission_unjudged", "money"),
        ("jackpot_pool", "id"),
        ("jackpot_contribution", "money"),
        ("findings", "int"),
    ],
    "bets": [
        ("gaming_day", "date"),
        ("table", "id"),
        ("round", "id"),
        ("bet", "id"),
        ("game", "str"),
        ("currency", "str"),
        ("seq", "int"),
        ("placed_at", "time"),
        ("player", "id"),
        ("seat", "id"),
        ("spot_kind", "str"),
        ("spot", "struct"),
        ("amount", "money"),
        ("stake", "money"),
        ("carried_from", "id"),
    ],
    "settlements": [
        ("gaming_day", "date"),
        ("table", "id"),
        ("round", "id"),
        ("kind", "str"),
        ("bet", "id"),
        ("party", "id"),
        ("currency", "str"),
        ("seq", "int"),
        ("at", "time"),
        ("result", "str"),
        ("bank_result", "money"),
        ("returned", "money"),
        ("won", "money"),
        ("commission", "money"),
    ],
    "commission": [
        ("gaming_day", "date"),
        ("game", "str"),
        ("currency", "str"),
        ("rounds", "int"),
        ("items", "int"),
        ("recorded", "money"),
        ("due", "money"),
        ("difference", "money"),
        ("unjudged_recorded", "money"),
        ("unjudged_items", "int"),
    ],
    "projections": [
        ("view", "str"),
        ("version", "int"),
        ("position", "int"),
        ("key", "id"),
        ("row", "record"),
    ],
}


@dataclass
class Manifest:
    """What an export wrote."""

    directory: Path
    files: list[dict[str, Any]] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The ``MANIFEST.json`` object."""
        return {**self.meta, "files": self.files}


def ledger_version() -> str:
    """The installed ledger's version."""
    try:
        return package_version("ledger")
    except PackageNotFoundError:  # pragma: no cover - a source tree without metadata
        return "unknown"


def _in_range(day: date, first: date | None, last: date | None) -> bool:
    return (first is None or day >= first) and (last is None or day <= last)


def judged_rounds(
    app: LedgerApp, cutoff_hour: int, first: date | None, last: date | None, upto: int | None = None
) -> Iterator[tuple[int, date, Judged]]:
    """The closed rounds of the selected gaming days up to log position ``upto``, each judged
    in context (``ledger.verify.judge.judge_rounds``)."""

    def within(rnd: Round) -> bool:
        return _in_range(day_of(rnd.opened_at, cutoff_hour), first, last)

    stored = takewhile(lambda pair: upto is None or pair[0] <= upto, closed_rounds(app))
    for position, judgement in judge_rounds(stored, wanted=within):
        yield position, day_of(judgement.round.opened_at, cutoff_hour), judgement


def _settled(rnd: Round) -> list[BetSettled]:
    return [s[0] for s in rnd.settlements.values()]


def round_row(position: int, day: date, judgement: Judged) -> dict[str, Any]:
    """One round's row of the ``rounds`` table."""
    rnd = judgement.round
    money = money_of(GAMES[rnd.game])
    settled = _settled(rnd)
    charges = money.charges(rnd)
    items = commission_items(judgement)
    moved = money.jackpot(rnd, judgement.derivation)
    ended = rnd.events[-1]
    return {
        "position": position,
        "gaming_day": day,
        "table": rnd.table,
        "round": rnd.round,
        "game": rnd.game,
        "currency": rnd.opened.currency,
        "opened_at": rnd.opened_at,
        "ended_at": ended.at,
        "ended": "voided" if rnd.is_voided else "closed",
        "bets": len(rnd.bets),
        "stake": sum((rnd.stake(b) for b in rnd.bets), ZERO),
        "returned": sum((s.returned for s in settled), ZERO),
        "won": sum((s.won for s in settled), ZERO),
        "turnover": money.turnover(rnd),
        "hold": money.house_result(rnd),
        "commission": sum((c.amount for c in charges), ZERO),
        **{
            f"commission_{k}": sum((c.amount for c in charges if c.kind == k), ZERO) for k in COMMISSION_KINDS
        },
        "commission_due": sum((i.due for i in items if i.due is not None), ZERO),
        "commission_unjudged": sum((i.recorded for i in items if i.due is None), ZERO),
        "jackpot_pool": moved.pool if moved else None,
        "jackpot_contribution": moved.contributed if moved else None,
        "findings": sum(1 for f in judgement.findings if f.severity == "error"),
    }


def table_rows(
    app: LedgerApp, cutoff_hour: int, first: date | None, last: date | None, upto: int | None = None
) -> dict[str, list[dict[str, Any]]]:
    """The rounds, bets and settlements tables (one pass over the store)."""
    out: dict[str, list[dict[str, Any]]] = {"rounds": [], "bets": [], "settlements": []}
    for position, day, judgement in judged_rounds(app, cutoff_hour, first, last, upto):
        rnd = judgement.round
        where = {"gaming_day": day, "table": rnd.table, "round": rnd.round}
        out["rounds"].append(round_row(position, day, judgement))
        for bet_id, bet in rnd.bets.items():
            carried = rnd.carried.get(bet_id)
            spot = bet.spot.model_dump(mode="json")
            out["bets"].append(
                {
                    **where,
                    "bet": bet_id,
                    "game": rnd.game,
                    "currency": rnd.opened.currency,
                    "seq": bet.seq,
                    "placed_at": bet.at,
                    "player": bet.player,
                    "seat": None if bet.seat is None else str(bet.seat),
                    "spot_kind": spot.get("kind"),
                    "spot": spot,
                    "amount": bet.amount,
                    "stake": rnd.stake(bet_id),
                    "carried_from": carried.from_round if carried else None,
                }
            )
        for fact in rnd.events:
            row = _settlement_row(fact, where, rnd.opened.currency)
            if row is not None:
                out["settlements"].append(row)
    return out


def _settlement_row(fact: Any, where: dict[str, Any], currency: str) -> dict[str, Any] | None:
    base = {**where, "currency": currency, "seq": fact.seq, "at": fact.at}
    if isinstance(fact, BetSettled):
        return {
            **base,
            "kind": "bet",
            "bet": fact.bet,
            "party": None,
            "result": fact.result,
            "bank_result": None,
            "returned": fact.returned,
            "won": fact.won,
            "commission": fact.commission,
        }
    if fact.type == "bank_settled":
        return {
            **base,
            "kind": "bank",
            "bet": None,
            "party": str(fact.party),
            "result": None,
            "bank_result": Decimal(fact.result),
            "returned": None,
            "won": None,
            "commission": Decimal(fact.commission),
        }
    return None


# ---- CSV ---------------------------------------------------------------------------------

_MANGLED = re.compile(
    r"^(0\d+(\.\d*)?|\d{16,}|\d+(\.\d+)?[eE][-+]?\d+|\d+\.\d*0"
    r"|\d{1,4}[-/.]\d{1,2}([-/.]\d{1,4})?|\d{1,2}:\d{2}(:\d{2})?"
    r"|(?i:true|false)|\d+(\.\d+)?%)$"
)
"""Text a spreadsheet would change on opening: leading zeros, more digits than it keeps,
exponents, trailing decimal zeros, dates and times, the booleans ``TRUE`` and ``FALSE`` (any
case) and percentages."""
MACAU = timezone(timedelta(hours=8))
"""The offset of the gaming day: CSV times are written in it, as Parquet stores them."""
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any, kind: str) -> str:
    """One CSV cell (see the module docstring for identifiers and formula starts).

    >>> csv_cell("000123", "id"), csv_cell("R-1", "id"), csv_cell("7", "id")
    ('="000123"', 'R-1', '7')
    >>> csv_cell("1E5", "id"), csv_cell("11-20", "id"), csv_cell("=1+1", "str")
    ('="1E5"', '="11-20"', "'=1+1")
    >>> csv_cell(Decimal("-3.5"), "money"), csv_cell(None, "money"), csv_cell(True, "bool")
    ('-3.50', '', 'true')
    >>> csv_cell("TRUE", "id"), csv_cell("false", "id"), csv_cell("5%", "id")
    ('="TRUE"', '="false"', '="5%"')
    >>> csv_cell(datetime(2026, 11, 20, 22, 0, tzinfo=timezone.utc), "time")
    '2026-11-21T06:00:00+08:00'
    >>> csv_cell(datetime(9999, 12, 31, 23, 0, tzinfo=timezone(timedelta(hours=-8))), "time")
    '9999-12-31T23:00:00-08:00'
    """
    if value is None:
        return ""
    if kind == "money":
        return money_text(Decimal(value))
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime) and value.tzinfo is not None:
        try:
            return value.astimezone(MACAU).isoformat()
        except OverflowError:  # a time at the calendar's edge: kept in its own offset
            return value.isoformat()
    if isinstance(value, datetime | date):
        return value.isoformat()
    if kind in ("struct", "record"):
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    text = str(value)
    if kind == "id" and _MANGLED.match(text.strip()):
        return '="' + text.replace('"', '""') + '"'
    if kind in ("id", "str") and text.startswith(_FORMULA_START):
        return "'" + text
    return text


def write_csv(path: Path, columns: Sequence[Column], rows: list[dict[str, Any]]) -> None:
    """One CSV file: header, then the rows."""
    with open(path, "w", encoding="utf-8", newline="") as stream:
        writer = csv.writer(stream, lineterminator="\n")
        writer.writerow([name for name, _ in columns])
        for row in rows:
            writer.writerow([csv_cell(row.get(name), kind) for name, kind in columns])


# ---- Parquet -----------------------------------------------------------------------------

_PLAIN_DECIMAL = re.compile(r"^-?(0|[1-9]\d*)(\.\d+)?$")


def _decimal_array(values: list[Any]) -> Any:
    import pyarrow as pa  # type: ignore[import-untyped]

    decimals = [None if v is None else Decimal(v) for v in values]
    scale = max(
        [2]
        + [-int(e) for d in decimals if d is not None for e in [d.as_tuple().exponent] if isinstance(e, int)]
    )
    q = Decimal(1).scaleb(-scale)
    return pa.array([None if d is None else d.quantize(q) for d in decimals], type=pa.decimal128(38, scale))


def _inferred(values: list[Any]) -> Any:
    """A typed Arrow array for JSON values: objects as structs (fields in key order), lists as
    lists, plain decimal text as ``decimal128``, else Arrow's own inference; anything mixed
    falls back to JSON text."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, dict) for v in present):
        return _struct_array(values, present)
    if present and _all_decimal_text(present):
        return _decimal_array(values)
    array = _arrow_or_none(values) if _arrow_types(present) else None
    return _json_text_array(values) if array is None else array


def _struct_array(values: list[Any], present: list[dict[str, Any]]) -> Any:
    """JSON objects (or ``None``) as one struct array, a field per key in key order, each
    field's values typed by :func:`_inferred`; objects with no key at all as the text ``{}``."""
    import pyarrow as pa

    keys = sorted({k for v in present for k in v})
    if not keys:
        return pa.array([None if v is None else "{}" for v in values], type=pa.string())
    children = [_inferred([None if v is None else v.get(k) for v in values]) for k in keys]
    mask = pa.array([v is None for v in values], type=pa.bool_())
    return pa.StructArray.from_arrays(children, names=keys, mask=mask)


def _all_decimal_text(present: list[Any]) -> bool:
    """Whether every value is a plain decimal's text (``"37.50"``, ``"-5"``) and none is an id
    that only looks like one (a leading zero: ``"007"``)."""
    return all(isinstance(v, str) and _PLAIN_DECIMAL.match(v) for v in present) and not any(
        len(v) > 1 and v.startswith("0") and not v.startswith("0.") for v in present
    )


def _arrow_types(present: list[Any]) -> bool:
    """Whether Arrow's own inference is tried: scalars only, or lists only with no object or
    list inside (Arrow infers nested ones badly)."""
    if all(not isinstance(v, dict | list) for v in present):
        return True
    lists = all(isinstance(v, list) for v in present)
    return lists and not any(isinstance(x, dict | list) for v in present for x in v)


def _arrow_or_none(values: list[Any]) -> Any:
    """Arrow's own inference of ``values``, or ``None`` where it cannot type them."""
    import pyarrow as pa

    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None


def _json_text_array(values: list[Any]) -> Any:
    """Each value as its JSON text (sorted keys), ``None`` as null: the fallback of mixed data."""
    import pyarrow as pa

    return pa.array([None if v is None else json.dumps(v, sort_keys=True) for v in values], type=pa.string())


def _arrow_column(kind: str, values: list[Any]) -> Any:
    import pyarrow as pa

    if kind == "money":
        return _decimal_array(values)
    if kind == "int":
        return pa.array(values, type=pa.int64())
    if kind == "bool":
        return pa.array(values, type=pa.bool_())
    if kind == "time":
        return pa.array(values, type=pa.timestamp("us", tz=PARQUET_TZ))
    if kind == "date":
        return pa.array(values, type=pa.date32())
    if kind in ("struct", "record"):
        array = _inferred(values)
        if array.type == pa.null():
            return pa.array(values, type=pa.string())
        return array
    return pa.array([None if v is None else str(v) for v in values], type=pa.string())


def write_parquet(
    path: Path, columns: Sequence[Column], rows: list[dict[str, Any]], metadata: dict[str, str] | None = None
) -> None:
    """One Parquet file with typed columns (module docstring) and key-value metadata."""
    import pyarrow as pa
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    arrays = [_arrow_column(kind, [row.get(name) for row in rows]) for name, kind in columns]
    schema = pa.schema(
        [pa.field(name, a.type) for (name, _), a in zip(columns, arrays, strict=True)],
        metadata={k.encode(): v.encode() for k, v in (metadata or {}).items()},
    )
    table = pa.Table.from_arrays(arrays, schema=schema)
    pq.write_table(table, path, compression="zstd")


def sha256_of(path: Path) -> str:
    """The SHA-256 of a file, in hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def export(
    app: LedgerApp,
    directory: Path,
    *,
    formats: Sequence[str] = FORMATS,
    cutoff_hour: int = 6,
    day_from: date | None = None,
    day_to: date | None = None,
) -> Manifest:
    """Write the export (see the module docstring) and its manifest into ``directory``."""
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise UsageError(f"export formats are {', '.join(FORMATS)}; got {', '.join(formats)}")
    directory.mkdir(parents=True, exist_ok=True)
    views = registered_views()
    positions: dict[str, int] = {}
    view_rows: dict[str, MemoryRows] = {}
    projection_rows: list[dict[str, Any]] = []
    for view, got in zip(views, read_views(app, views), strict=True):  # read-only
        positions[view.name] = got.position
        view_rows[view.name] = got.rows
        projection_rows += [
            {"view": view.name, "version": view.version, "position": got.position, "key": k, "row": r}
            for k, r in got.rows.scan()
        ]
    checkpoint = positions.get(CommissionView.name, 0)
    head = app.head()
    tables = table_rows(app, cutoff_hour, day_from, day_to, upto=checkpoint)
    report = commission_report(
        view_rows[CommissionView.name], by="game", cutoff_hour=cutoff_hour, day_from=day_from, day_to=day_to
    )
    tables["commission"] = [
        {**line.to_json(), "gaming_day": line.day, "game": line.to_json()["group"]} for line in report.lines
    ]
    tables["projections"] = projection_rows
    manifest = Manifest(directory)
    written: list[tuple[str, int]] = []
    meta = {
        "store_head": str(head),
        "checkpoint": str(checkpoint),
        "cutoff_hour": str(cutoff_hour),
        "ledger_version": ledger_version(),
    }
    for name, rows in tables.items():
        if "csv" in formats:
            write_csv(directory / f"{name}.csv", SCHEMAS[name], rows)
            written.append((f"{name}.csv", len(rows)))
        if "parquet" in formats:
            write_parquet(directory / f"{name}.parquet", SCHEMAS[name], rows, {**meta, "table": name})
            written.append((f"{name}.parquet", len(rows)))
    if "beancount" in formats:
        moves = movements(
            view_rows[HouseView.name], cutoff_hour=cutoff_hour, day_from=day_from, day_to=day_to
        )
        (directory / "house.beancount").write_text(journal(moves), encoding="utf-8")
        written.append(("house.beancount", len(moves)))
    for name, count in written:
        path = directory / name
        manifest.files.append(
            {"name": name, "sha256": sha256_of(path), "bytes": path.stat().st_size, "rows": count}
        )
    manifest.meta = {
        "generator": "ledger export",
        "store_head": head,
        "checkpoint": checkpoint,
        "ledger_version": meta["ledger_version"],
        "log_position": app.recorder.max_notification_id() or 0,
        "view_positions": positions,
        "cutoff_hour": cutoff_hour,
        "from": day_from.isoformat() if day_from else None,
        "to": day_to.isoformat() if day_to else None,
        "formats": list(formats),
    }
    (directory / "MANIFEST.json").write_text(
        json.dumps(manifest.to_json(), indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )
    (directory / "SHA256SUMS").write_text(
        "".join(f"{f['sha256']}  {f['name']}\n" for f in manifest.files)
        + f"{sha256_of(directory / 'MANIFEST.json')}  MANIFEST.json\n",
        encoding="utf-8",
    )
    return manifest
