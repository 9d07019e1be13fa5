"""The Merkle log's costs: tree extension at ingest, the checkpoint note at seal, proof sizes.

``python -m bench.merkle`` (``--help`` for the options) prints a markdown table:

- **ingest, tree extension per row**: the same seeded feed ingested into fresh stores with and
  without the tree (``Ingestor(extend_tree=...)``), the two alternating; medians of ``--runs``;
  the time ingest spent extending the tree (``IngestReport.tree_seconds``) per stored row (feed
  events, table events and chain links), and the difference of the two ingests per row (noisier
  on a shared machine).
- **seal, per new row**: after a first seal, a second feed (its own tables) is ingested and
  sealed again: the incremental JSON checkpoint (``ledger.proof.checkpoints.seal``) and the note
  (``ledger.merkle.sealing.seal_tree``: re-hash the new rows, compare the stored tree, sign),
  each divided by the rows stored since the first seal.
- **proof sizes against log size**, 10³ to 10⁸ rows, from the tree's shape alone
  (``ledger.merkle.tree``): the longest inclusion and consistency proofs in hashes and bytes,
  the stored hashes a proof reads, and the ``merkle`` section of a round bundle (proof in base64
  plus a measured checkpoint note) — and a 200-event round's whole bundle: 200 stored feed
  events of the bench store packed as a bundle packs a round's (``ledger.proof.bundle.pack_events``:
  topic and content once each, zlib, base64), plus that merkle section and the bundle's other
  fields. The state part a 3CB, SP9 or STUD round adds (``ledger.merkle.dependent``) is printed
  for the bench store's largest round of such a game: it grows with the rounds of its table (or
  linked pool) between two seals, so seal often.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
from typing import Any
from uuid import UUID

from bench.feed import write_feed
from bench.stores import DEFAULT_PG, Stores, pg_reachable
from ledger.codec.chain import CHAIN_TOPIC, unframe
from ledger.domain.round import round_id
from ledger.domain.table import TABLE_TOPIC
from ledger.feed.envelope import FeedEvent
from ledger.merkle.sealing import seal_tree
from ledger.merkle.tree import consistency_ranges, inclusion_ranges, nodes_for
from ledger.proof.bundle import bundle_items, export_round, pack_events
from ledger.proof.checkpoints import seal
from ledger.proof.seal import generate_key
from ledger.services.ingest import Ingestor, bounded_lines
from ledger.storage.sql import read_rows
from ledger.storage.store import LedgerApp, open_ledger

SIZES = tuple(10**k for k in range(3, 9))
ROUND_EVENTS = 200


def parser() -> argparse.ArgumentParser:
    """The command line."""
    p = argparse.ArgumentParser(
        prog="python -m bench.merkle",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--rounds", type=int, default=1000, help="rounds of the timed feed")
    p.add_argument("--runs", type=int, default=3, help="runs of each ingest (medians)")
    p.add_argument("--pg", default=DEFAULT_PG, help="PostgreSQL base URL")
    p.add_argument("--no-pg", action="store_true", help="SQLite only")
    p.add_argument("--workdir", default=None, help="where feeds and SQLite files go")
    p.add_argument("--out", default=None, help="also write the figures as JSON here")
    return p


def main(argv: list[str] | None = None) -> int:
    """Run every measure, print the table; 0."""
    args = parser().parse_args(argv)
    workdir = args.workdir or tempfile.mkdtemp(prefix="bench-merkle-")
    pg = None if args.no_pg or pg_reachable(args.pg) else args.pg
    stores = Stores(workdir, pg)
    feed = write_feed(os.path.join(workdir, "feed.jsonl"), args.rounds, seed=1)
    later = write_feed(os.path.join(workdir, "later.jsonl"), max(1, args.rounds // 5), seed=2, first_chunk=1)
    results: dict[str, Any] = {"feed_lines": feed.lines, "stores": {}}
    try:
        for kind in stores.kinds():
            results["stores"][kind] = measure_store(stores, kind, feed.path, later.path, args.runs)
            stores.drop_all()
    finally:
        stores.drop_all()
    results["proofs"] = proof_sizes(results["stores"]["sqlite"]["bundle"])
    print(render(results))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as stream:
            json.dump(results, stream, indent=1)
    return 0


def _ingest(app: LedgerApp, path: str, tree: bool) -> tuple[float, int, float]:
    """Seconds, rows stored, and seconds of those spent extending the tree."""
    with open(path, "rb") as stream:
        started = time.perf_counter()
        report = Ingestor(app, extend_tree=tree).ingest(bounded_lines(stream))
        seconds = time.perf_counter() - started
    assert not report.rejected and report.tree_error is None
    return seconds, report.stored + report.rounds_opened + report.saves, report.tree_seconds


def measure_store(stores: Stores, kind: str, feed: str, later: str, runs: int) -> dict[str, Any]:
    """Ingest with and without the tree, then the seal costs, on one kind of store."""
    timings: dict[bool, list[float]] = {True: [], False: []}
    tree_parts: list[float] = []
    rows = 0
    app: LedgerApp | None = None
    for run in range(runs):
        for tree in (True, False) if run % 2 == 0 else (False, True):
            store = stores.fresh(kind, "tree" if tree else "plain")
            candidate = open_ledger(store.url)
            seconds, rows, tree_seconds = _ingest(candidate, feed, tree)
            timings[tree].append(seconds)
            if tree:
                tree_parts.append(tree_seconds)
            if tree and app is None:
                app = candidate
            else:
                candidate.close()
    assert app is not None
    with_tree, without = statistics.median(timings[True]), statistics.median(timings[False])
    key = generate_key()
    first = seal(app, key)
    seal_tree(app, key, first.checkpoint)
    _, new_rows, _ = _ingest(app, later, True)
    started = time.perf_counter()
    second = seal(app, key)
    json_seconds = time.perf_counter() - started
    started = time.perf_counter()
    noted = seal_tree(app, key, second.checkpoint)
    note_seconds = time.perf_counter() - started
    bundle = largest_bundle(app)
    app.close()
    return {
        "rows": rows,
        "ingest_s_with_tree": with_tree,
        "ingest_s_without_tree": without,
        "tree_us_per_row": statistics.median(tree_parts) / rows * 1e6,
        "difference_us_per_row": (with_tree - without) / rows * 1e6,
        "ingest_us_per_row": with_tree / rows * 1e6,
        "new_rows": new_rows,
        "rehashed": noted.rehashed,
        "seal_json_us_per_new_row": json_seconds / new_rows * 1e6,
        "seal_note_us_per_new_row": note_seconds / new_rows * 1e6,
        "note_bytes": len(noted.note.note.encode()),
        "bundle": bundle,
    }


def largest_bundle(app: LedgerApp) -> dict[str, Any]:
    """The Merkle bundle of the round with the most events in the store: its size, its events'
    mean size in the bundle, its note's and its proof's."""
    table = app.dialect.qualified(app.recorder.events_table_name)  # type: ignore[attr-defined]
    found = read_rows(
        app,
        f"SELECT originator_id, COUNT(*) FROM {table} WHERE topic NOT IN "
        f"('{TABLE_TOPIC}', '{CHAIN_TOPIC}') GROUP BY originator_id "
        "ORDER BY COUNT(*) DESC LIMIT 1",
    )
    oid = UUID(str(found[0][0]))
    first = app.stored(oid)[0].fact
    assert isinstance(first, FeedEvent)
    table_code, round_code = first.table, first.round
    assert round_id(table_code, round_code) == oid
    bundle = export_round(app, table_code, round_code, merkle=True)
    text = json.dumps(bundle, indent=1, ensure_ascii=False) + "\n"
    events = len(bundle_items(bundle))
    merkle = bundle["merkle"]
    state = bundle.get("state")
    return {
        "round": f"{table_code}/{round_code}",
        "events": events,
        "bytes": len(text.encode()),
        "packed_bytes": len(bundle["events"]),
        "packed_200_bytes": packed_events_bytes(app, ROUND_EVENTS),
        "state_bytes": len(json.dumps(state, indent=1)) if state else 0,
        "state_rounds": len(state["rounds"]) if state else 0,
        "note_bytes": len(merkle["note"].encode()),
        "proof_hashes": len(merkle["proof"]),
        "tree_size": merkle["size"],
    }


def packed_events_bytes(app: LedgerApp, count: int) -> int:
    """The packed size of the log's first ``count`` stored feed events (of consecutive rounds,
    as many as a round of ``count`` events has)."""
    stored: list[tuple[str, bytes]] = []
    for page in app.rows(page=500):
        for _, _, _, topic, state in page:
            if topic not in (TABLE_TOPIC, CHAIN_TOPIC):
                stored.append((topic, unframe(state)[1]))
            if len(stored) == count:
                return len(pack_events(stored))
    return len(pack_events(stored))


def proof_sizes(bundle: dict[str, Any]) -> list[dict[str, Any]]:
    """Proof lengths against log size, from the tree's shape (the longest over a few leaves)."""
    rows = []
    for n in SIZES:
        probes = sorted({0, 1, n // 3, n // 2, n - 2, n - 1})
        inclusion = max(len(inclusion_ranges(i, n)) for i in probes)
        consistency = max(len(consistency_ranges(m, n)) for m in probes if m > 0)
        reads = max(len(nodes_for(inclusion_ranges(i, n))) for i in probes)
        section = (
            len(json.dumps({"index": n - 1, "size": n, "proof": ["A" * 44] * inclusion}, indent=1))
            + bundle["note_bytes"]
            + 40
        )
        round_bundle = bundle["packed_200_bytes"] + section + 200
        rows.append(
            {
                "rows": n,
                "log2": math.ceil(math.log2(n)),
                "inclusion_hashes": inclusion,
                "inclusion_bytes": 32 * inclusion,
                "consistency_hashes": consistency,
                "consistency_bytes": 32 * consistency,
                "stored_hashes_read": reads,
                "bundle_merkle_bytes": section,
                "bundle_200_events_bytes": round(round_bundle),
            }
        )
    return rows


def render(results: dict[str, Any]) -> str:
    """The markdown tables."""
    lines = [
        f"feed: {results['feed_lines']} lines",
        "",
        "| store | rows | ingest µs/row (with tree) | of which tree extension | ingest "
        "with − without tree | seal JSON µs/new row | seal note µs/new row | note bytes |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for kind, s in results["stores"].items():
        lines.append(
            f"| {kind} | {s['rows']} | {s['ingest_us_per_row']:.1f} | "
            f"{s['tree_us_per_row']:.1f} | {s['difference_us_per_row']:.1f} | "
            f"{s['seal_json_us_per_new_row']:.1f} | "
            f"{s['seal_note_us_per_new_row']:.1f} | {s['note_bytes']} |"
        )
    b = results["stores"]["sqlite"]["bundle"]
    lines += [
        "",
        f"largest round in the bench store: {b['round']}, {b['events']} events, "
        f"Merkle bundle {b['bytes']} bytes (events packed in {b['packed_bytes']} bytes, "
        f"note {b['note_bytes']} bytes, {b['proof_hashes']} proof hashes in a "
        f"tree of {b['tree_size']} rows"
        + (
            f"; its state part {b['state_bytes']} bytes with {b['state_rounds']} other rounds"
            if b["state_bytes"]
            else ""
        )
        + f"); {ROUND_EVENTS} stored events packed: {b['packed_200_bytes']} bytes",
        "",
        "| log rows | inclusion proof | consistency proof | stored hashes read | bundle "
        "merkle section | 200-event round bundle |",
        "|---|---|---|---|---|---|",
    ]
    for r in results["proofs"]:
        lines.append(
            f"| {r['rows']:.0e} | {r['inclusion_hashes']} hashes, "
            f"{r['inclusion_bytes']} B | {r['consistency_hashes']} hashes, "
            f"{r['consistency_bytes']} B | {r['stored_hashes_read']} | "
            f"{r['bundle_merkle_bytes']} B | {r['bundle_200_events_bytes']} B |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
