"""The ledger's exceptions.

::

    LedgerError
      StoreError       the database cannot be opened, read or written
      UsageError       a command was called wrongly (exit code 2)

Rejected feed lines are not exceptions: they are values (``ledger.feed.parse.Rejection``) with
a stable code, collected into the rejects file. Findings are values too
(``ledger.verify.findings.Finding``).
"""


class LedgerError(Exception):
    """Base of every error the ledger raises on purpose."""


class StoreError(LedgerError):
    """The database cannot be opened, read or written."""


class UsageError(LedgerError):
    """A command was called wrongly (exit code 2)."""
