"""The proof layer: what proves the log to someone who does not trust the store.

``seal`` (signed checkpoints of a verify pass's snapshot), ``checkpoints`` (their storage and
the nearest one before a position), ``note`` (signed notes), ``bundle`` (a round with its
proof); beside this package, ``ledger.merkle`` (the Merkle log) and ``ledger.witness``
(cosigning witnesses) are of this layer too. A checkpoint signs what a verify pass found, so
this layer stands above ``ledger.verify``.

It may import the layers below it: verify, storage, codec, games, domain.
"""
