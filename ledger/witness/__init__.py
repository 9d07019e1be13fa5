"""The witness a regulator runs: it cosigns a log's checkpoints only when they extend the last one
it cosigned (C2SP ``tlog-witness``), so no operator can show two histories.

- :mod:`ledger.witness.keys`: the witness's key files and the logs it follows;
- :mod:`ledger.witness.protocol`: the ``add-checkpoint`` request body and its answers;
- :mod:`ledger.witness.state`: the latest cosigned checkpoint per log, written atomically;
- :mod:`ledger.witness.core`: the cosigning policy (:class:`~ledger.witness.core.Witness`);
- :mod:`ledger.witness.server`: ``POST /add-checkpoint`` over HTTP (aiohttp);
- :mod:`ledger.witness.client`: asking witnesses for cosignatures, over HTTP or a directory.
"""
