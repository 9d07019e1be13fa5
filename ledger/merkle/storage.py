"""The Merkle log's tables beside the events, append-only on SQLite and PostgreSQL.

- ``ledger_merkle_tree (idx, row_id, nodes)``: one row per leaf, in log order. ``row_id`` is
  the notification id of the event row the leaf hashes (increasing with ``idx``; no index of
  its own, so an insert updates one B-tree); ``nodes`` the hashes of the perfect
  subtrees that leaf completes, level 0 (the leaf hash) first, 32 bytes each
  (``ledger.merkle.tree``). Written by whoever stores rows (``ledger ingest``) and by
  ``MerkleLog.extend`` catching up.
- ``ledger_log_origin (id, origin)``: the log's name, one row (``id = 1``), set once.
- ``ledger_tree_heads (size, note)``: the signed ``tlog-checkpoint`` notes ``ledger seal``
  made, one per tree size.
- ``ledger_tree_cosignatures (size, line)``: cosignature lines collected for a stored note.

Every table refuses ``UPDATE`` and ``DELETE`` (and ``TRUNCATE`` on PostgreSQL) by trigger, as
the events and the checkpoints do. Nothing read back is trusted: every hash is checked against
a signed root or recomputed from the rows before it is relied on.
"""

from __future__ import annotations

from ledger.storage.sql import Dialect, append_only_triggers_sql, quote, refuse_function_sql

REFUSE_FUNCTION = "ledger_refuse_change"
"""The PostgreSQL trigger function the checkpoints table uses too (``ledger.proof.checkpoints``),
created here if missing; named here so that ingest need not import the checkpoints' module."""

TREE_TABLE = "ledger_merkle_tree"
ORIGIN_TABLE = "ledger_log_origin"
HEADS_TABLE = "ledger_tree_heads"
COSIGNATURES_TABLE = "ledger_tree_cosignatures"
MERKLE_TABLES = (TREE_TABLE, ORIGIN_TABLE, HEADS_TABLE, COSIGNATURES_TABLE)
APPEND_ONLY_MESSAGE = "the Merkle log is append-only"


def _create_statements(dialect: Dialect) -> dict[str, str]:
    blob = "BLOB" if dialect.is_sqlite else "BYTEA"
    q = dialect.qualified
    return {
        TREE_TABLE: f"CREATE TABLE IF NOT EXISTS {q(TREE_TABLE)} (idx BIGINT PRIMARY KEY, "
        f"row_id BIGINT NOT NULL, nodes {blob} NOT NULL)",
        ORIGIN_TABLE: f"CREATE TABLE IF NOT EXISTS {q(ORIGIN_TABLE)} (id INTEGER PRIMARY KEY "
        "CHECK (id = 1), origin TEXT NOT NULL)",
        HEADS_TABLE: f"CREATE TABLE IF NOT EXISTS {q(HEADS_TABLE)} (size BIGINT PRIMARY KEY, "
        "note TEXT NOT NULL)",
        COSIGNATURES_TABLE: f"CREATE TABLE IF NOT EXISTS {q(COSIGNATURES_TABLE)} (size BIGINT "
        "NOT NULL, line TEXT NOT NULL, PRIMARY KEY (size, line))",
    }


def merkle_sql(dialect: Dialect) -> list[str]:
    """The statements that create the Merkle log's tables and make them append-only
    (idempotent; run by ``ledger init`` and on first use)."""
    statements = list(_create_statements(dialect).values())
    if not dialect.is_sqlite:
        statements.append(refuse_function_sql(dialect, REFUSE_FUNCTION))
    for name in MERKLE_TABLES:
        statements += append_only_triggers_sql(
            dialect, name, refused=APPEND_ONLY_MESSAGE, refuse_function=REFUSE_FUNCTION
        )
    return statements


def merkle_grants_sql(dialect: Dialect, ingest: str, sealer: str, auditor: str) -> list[str]:
    """PostgreSQL grants: the ingest role extends the tree as it stores rows (SELECT, INSERT on
    it) and reads the origin and notes; the sealer role, which seals, also extends the tree, sets
    the origin on the first seal and stores notes and cosignatures (SELECT, INSERT); the auditor
    role only reads."""
    statements = []
    for name in MERKLE_TABLES:
        table = dialect.qualified(name)
        ingest_grant = "SELECT, INSERT" if name == TREE_TABLE else "SELECT"
        statements += [
            f"REVOKE ALL ON {table} FROM {quote(ingest)}, {quote(sealer)}, {quote(auditor)}",
            f"GRANT {ingest_grant} ON {table} TO {quote(ingest)}",
            f"GRANT SELECT, INSERT ON {table} TO {quote(sealer)}",
            f"GRANT SELECT ON {table} TO {quote(auditor)}",
        ]
    return statements
