"""Exports for finance tools: CSV and Parquet tables, a Beancount journal, and a manifest.

``export(app, directory, formats=...)`` writes, for the gaming days selected:

- ``rounds``, ``bets``, ``settlements`` (bet settlements and SP9 bank layers, as the tables
  recorded them) read from the store in store order;
- ``commission`` (the reconciliation by gaming day and game) and ``projections`` (every row of
  every registered view, caught up first, with its position);

as ``.csv`` (UTF-8, header row, amounts as exact decimal text) and/or ``.parquet`` (pyarrow;
amounts as ``decimal128`` with the scale their values need, never floats); and
``house.beancount`` (``projections.beancount``). ``MANIFEST.json`` lists every file with its
SHA-256, size and row count, the store's head digest (which commits to every stored event) and
the views' positions; ``SHA256SUMS`` repeats the digests in ``sha256sum -c`` form. Exports are
deterministic: the same store and options give byte-identical files.
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

from ledger.errors import UsageError
from ledger.feed.envelope import BetSettled
from ledger.round import Round
from ledger.store import LedgerApp
from projections.base import closed_rounds
from projections.beancount import journal, movements
from projections.commission import CommissionView, commission_report
from projections.gaming_day import day_of
from projections.house import HouseView
from projections.registry import registered_views
from projections.updater import encode_row, read_views

FORMATS = ("csv", "parquet", "beancount")
ZERO = Decimal(0)

Column = tuple[str, str]
"""``(name, kind)``; kind is ``str``, ``int`` or ``money``."""

SCHEMAS: dict[str, list[Column]] = {
    "rounds": [("position", "int"), ("gaming_day", "str"), ("table", "str"), ("round", "str"),
               ("game", "str"), ("currency", "str"), ("opened_at", "str"), ("ended", "str"),
               ("bets", "int"), ("stake", "money"), ("returned", "money"), ("won", "money"),
               ("commission", "money")],
    "bets": [("gaming_day", "str"), ("table", "str"), ("round", "str"), ("bet", "str"),
             ("game", "str"), ("currency", "str"), ("seq", "int"), ("placed_at", "str"),
             ("player", "str"), ("seat", "str"), ("spot", "str"), ("amount", "money"),
             ("stake", "money"), ("carried_from", "str")],
    "settlements": [("gaming_day", "str"), ("table", "str"), ("round", "str"), ("kind", "str"),
                    ("bet", "str"), ("party", "str"), ("currency", "str"), ("seq", "int"),
                    ("at", "str"), ("result", "str"), ("bank_result", "money"),
                    ("returned", "money"), ("won", "money"), ("commission", "money")],
    "commission": [("gaming_day", "str"), ("group", "str"), ("currency", "str"), ("rounds", "int"),
                   ("items", "int"), ("recorded", "money"), ("due", "money"),
                   ("difference", "money"), ("unjudged_recorded", "money"),
                   ("unjudged_items", "int")],
    "projections": [("view", "str"), ("version", "int"), ("position", "int"), ("key", "str"),
                    ("row", "str")],
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


def _in_range(day: date, first: date | None, last: date | None) -> bool:
    return (first is None or day >= first) and (last is None or day <= last)


def _rounds(app: LedgerApp, cutoff_hour: int, first: date | None,
            last: date | None) -> Iterator[tuple[int, date, Round]]:
    for position, rnd in closed_rounds(app):
        day = day_of(rnd.opened_at, cutoff_hour)
        if _in_range(day, first, last):
            yield position, day, rnd


def _settled(rnd: Round) -> list[BetSettled]:
    return [s[0] for s in rnd.settlements.values()]


def table_rows(app: LedgerApp, cutoff_hour: int, first: date | None,
               last: date | None) -> dict[str, list[dict[str, Any]]]:
    """The rounds, bets and settlements tables (one pass over the store)."""
    out: dict[str, list[dict[str, Any]]] = {"rounds": [], "bets": [], "settlements": []}
    for position, day, rnd in _rounds(app, cutoff_hour, first, last):
        where = {"gaming_day": day.isoformat(), "table": rnd.table, "round": rnd.round}
        settled = _settled(rnd)
        out["rounds"].append({
            "position": position, **where, "game": rnd.game, "currency": rnd.opened.currency,
            "opened_at": rnd.opened_at.isoformat(),
            "ended": "voided" if rnd.is_voided else "closed", "bets": len(rnd.bets),
            "stake": sum((rnd.stake(b) for b in rnd.bets), ZERO),
            "returned": sum((s.returned for s in settled), ZERO),
            "won": sum((s.won for s in settled), ZERO),
            "commission": sum((s.commission for s in settled), ZERO)})
        for bet_id, bet in rnd.bets.items():
            carried = rnd.carried.get(bet_id)
            out["bets"].append({
                **where, "bet": bet_id, "game": rnd.game, "currency": rnd.opened.currency,
                "seq": bet.seq, "placed_at": bet.at.isoformat(), "player": bet.player or "",
                "seat": "" if bet.seat is None else str(bet.seat),
                "spot": json.dumps(bet.spot.model_dump(mode="json"), sort_keys=True),
                "amount": bet.amount, "stake": rnd.stake(bet_id),
                "carried_from": carried.from_round if carried else ""})
        for fact in rnd.events:
            row = _settlement_row(fact, where, rnd.opened.currency)
            if row is not None:
                out["settlements"].append(row)
    return out


def _settlement_row(fact: Any, where: dict[str, Any], currency: str) -> dict[str, Any] | None:
    base = {**where, "currency": currency, "seq": fact.seq, "at": fact.at.isoformat()}
    if isinstance(fact, BetSettled):
        return {**base, "kind": "bet", "bet": fact.bet, "party": "", "result": fact.result,
                "bank_result": None, "returned": fact.returned, "won": fact.won,
                "commission": fact.commission}
    if fact.type == "bank_settled":
        return {**base, "kind": "bank", "bet": "", "party": str(fact.party), "result": "",
                "bank_result": Decimal(fact.result), "returned": None, "won": None,
                "commission": Decimal(fact.commission)}
    return None


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def write_csv(path: Path, columns: Sequence[Column], rows: list[dict[str, Any]]) -> None:
    """One CSV file: header, then the rows (amounts as exact decimal text)."""
    with open(path, "w", encoding="utf-8", newline="") as stream:
        writer = csv.writer(stream, lineterminator="\n")
        writer.writerow([name for name, _ in columns])
        for row in rows:
            writer.writerow([_text(row.get(name)) for name, _ in columns])


def write_parquet(path: Path, columns: Sequence[Column], rows: list[dict[str, Any]]) -> None:
    """One Parquet file; money columns as ``decimal128`` with the scale their values need."""
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    arrays = []
    fields = []
    for name, kind in columns:
        values = [row.get(name) for row in rows]
        if kind == "money":
            decimals = [None if v is None else Decimal(v) for v in values]
            scale = max([2] + [-int(d.as_tuple().exponent) for d in decimals if d is not None])
            kind_type = pa.decimal128(38, scale)
            q = Decimal(1).scaleb(-scale)
            arrays.append(pa.array([None if d is None else d.quantize(q) for d in decimals],
                                   type=kind_type))
        elif kind == "int":
            kind_type = pa.int64()
            arrays.append(pa.array(values, type=kind_type))
        else:
            kind_type = pa.string()
            arrays.append(pa.array([_text(v) for v in values], type=kind_type))
        fields.append(pa.field(name, kind_type))
    table = pa.Table.from_arrays(arrays, schema=pa.schema(fields))
    pq.write_table(table, path, compression="zstd")


def sha256_of(path: Path) -> str:
    """The SHA-256 of a file, in hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def export(app: LedgerApp, directory: Path, *, formats: Sequence[str] = FORMATS,
           cutoff_hour: int = 6, day_from: date | None = None,
           day_to: date | None = None) -> Manifest:
    """Write the export (see the module docstring) and its manifest into ``directory``."""
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise UsageError(f"export formats are {', '.join(FORMATS)}; got {', '.join(formats)}")
    directory.mkdir(parents=True, exist_ok=True)
    tables = table_rows(app, cutoff_hour, day_from, day_to)
    views = registered_views()
    positions: dict[str, int] = {}
    view_rows: dict[str, Any] = {}
    projection_rows: list[dict[str, Any]] = []
    for view, got in zip(views, read_views(app, views), strict=True):  # read-only
        stored = got.rows
        positions[view.name] = got.position
        view_rows[view.name] = stored
        projection_rows += [{"view": view.name, "version": view.version,
                             "position": positions[view.name], "key": k,
                             "row": encode_row(r)} for k, r in stored.scan()]
    report = commission_report(view_rows[CommissionView.name], by="game", cutoff_hour=cutoff_hour,
                               day_from=day_from, day_to=day_to)
    tables["commission"] = [line.to_json() for line in report.lines]
    tables["projections"] = projection_rows
    manifest = Manifest(directory)
    written: list[tuple[str, int]] = []
    for name, rows in tables.items():
        if "csv" in formats:
            write_csv(directory / f"{name}.csv", SCHEMAS[name], rows)
            written.append((f"{name}.csv", len(rows)))
        if "parquet" in formats:
            write_parquet(directory / f"{name}.parquet", SCHEMAS[name], rows)
            written.append((f"{name}.parquet", len(rows)))
    if "beancount" in formats:
        moves = movements(view_rows[CommissionView.name], view_rows[HouseView.name],
                          cutoff_hour=cutoff_hour, day_from=day_from, day_to=day_to)
        (directory / "house.beancount").write_text(journal(moves), encoding="utf-8")
        written.append(("house.beancount", len(moves)))
    for name, count in written:
        path = directory / name
        manifest.files.append({"name": name, "sha256": sha256_of(path),
                               "bytes": path.stat().st_size, "rows": count})
    manifest.meta = {
        "generator": "ledger export", "store_head": app.head(),
        "log_position": app.recorder.max_notification_id() or 0,
        "view_positions": positions, "cutoff_hour": cutoff_hour,
        "from": day_from.isoformat() if day_from else None,
        "to": day_to.isoformat() if day_to else None, "formats": list(formats)}
    (directory / "MANIFEST.json").write_text(
        json.dumps(manifest.to_json(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    (directory / "SHA256SUMS").write_text(
        "".join(f"{f['sha256']}  {f['name']}\n" for f in manifest.files)
        + f"{sha256_of(directory / 'MANIFEST.json')}  MANIFEST.json\n", encoding="utf-8")
    return manifest
