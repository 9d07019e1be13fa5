"""Where ingest's and verify's client CPU goes, stage by stage, measured in the harness's run.

Each stage is timed as a pass of its own over the same feed or store, and each pass does the
work of the stage before it too, so a stage's cost is the difference of two passes:

verify (on the ledger store the harness just verified):

1. ``read`` — the rows as :meth:`ledger.storage.store.LedgerApp.rows` gives them;
2. ``chain`` — plus the integrity chain of every row (``ChainVerifier.check_rows``);
3. ``decode + gather`` — plus decoding every fact and gathering rounds (the one round stream,
   ``ledger.storage.stream.RoundStream``, with the chain as its tap);
4. ``judge`` — the rest of a whole ``verify_store``: replaying and judging every round, the
   checks common to every game, and the verify pass's own bookkeeping.

ingest (of the harness's feed file):

1. ``parse + validate`` — every line read and validated as ingest does it (the parser of
   ``ledger.services.ingest.Ingestor``), nothing stored;
2. ``store`` — the rest of a whole ingest: serialising, the chain, the table aggregates,
   the SQL and commits.

Figures are client CPU µs per feed event (``time.process_time``), like the harness's. They are
single passes on a shared machine: read them to within ±10-20 %. Every stage pass runs under the
collector setting of a whole ingest or verify (``ledger.storage.collector.pass_collector``); without it,
the cyclic collector's work in the partial passes was counted in *decode + gather* and taken
out of *judge* (about 1.5 µs/event on the harness's feed).
"""

from __future__ import annotations

import time
from typing import Any


def verify_stages(app: Any, feed_lines: int, verify_cpu_s: float) -> dict[str, float]:
    """Client CPU µs per feed event of each verify stage (see the module docstring)."""
    from ledger.storage.stream import RoundStream
    from ledger.verify.integrity import ChainVerifier

    def read() -> None:
        for _page in app.rows():
            pass

    def chain() -> None:
        check = ChainVerifier(app.ledger_mapper).check_rows
        for page in app.rows():
            check(page)

    def gather() -> None:
        check = ChainVerifier(app.ledger_mapper).check_rows
        stream = RoundStream(app.ledger_mapper, check=check, partial=False)
        for page in app.rows():
            for _closed in stream.closed(page):
                pass

    cumulative = [_cpu(read), _cpu(chain), _cpu(gather), verify_cpu_s]
    names = ["read", "chain", "decode + gather", "judge"]
    return _per_event(names, cumulative, feed_lines)


def ingest_stages(path: str, feed_lines: int, ingest_cpu_s: float) -> dict[str, float]:
    """Client CPU µs per feed event of each ingest stage (see the module docstring)."""
    from ledger.codec.lines import LineParser
    from ledger.codec.parse import MAX_LINE_BYTES
    from ledger.services.ingest import bounded_lines

    def parse() -> None:
        parser = LineParser(MAX_LINE_BYTES)
        with open(path, "rb") as stream:
            for number, line in bounded_lines(stream):
                parser.parse(line, number)

    return _per_event(["parse + validate", "store"], [_cpu(parse), ingest_cpu_s], feed_lines)


def _cpu(work: Any) -> float:
    from ledger.storage.collector import pass_collector

    with pass_collector():  # as in the whole ingest or verify the stages are taken from
        started = time.process_time()
        work()
        return time.process_time() - started


def _per_event(names: list[str], cumulative: list[float], events: int) -> dict[str, float]:
    stages: dict[str, float] = {}
    before = 0.0
    for name, upto in zip(names, cumulative, strict=True):
        stages[name] = max(upto - before, 0.0) * 1e6 / events
        before = max(before, upto)
    return stages
