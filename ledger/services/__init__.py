"""The services layer: the operations the commands run.

``ingest`` (a feed into the store), ``replay`` (one round for an inspector), ``segments``
(``verify --jobs`` over segments between stored checkpoints) and ``db_admin`` (``ledger init``:
the schema, roles and grants of every table, the views' included); beside this package,
``ledger.report``, ``ledger.stats`` and ``ledger.live`` are of this layer too.

It may import the layers below it: projections, proof, verify, storage, codec, games, domain.
"""
