"""The performance harness: ledger ingest and verify against the bare framework and the raw floor.

Run ``python -m bench --help`` from the repository root; ``bench/README.md`` explains the figures.
"""
