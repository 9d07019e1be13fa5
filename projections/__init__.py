"""Read models computed from the store's notification log (commission, jackpot pool, bank capital).

The projections land with the finance issue; the store already keeps what they need: every
event in one ordered log, each with a stable topic (``ledger.storage.store.TOPICS``).
"""
