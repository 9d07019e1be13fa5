"""The storage layer: the event store and the reading of the log.

``store`` (``LedgerApp``, ``open_ledger``: the eventsourcing application in SQLite or
PostgreSQL), ``sql`` (the one place that tells SQLite from PostgreSQL), ``stream``
(``RoundStream``: the log read as rounds) and ``collector`` (how a long pass treats the
garbage collector).

It may import the layers below it: codec, games, domain.
"""
