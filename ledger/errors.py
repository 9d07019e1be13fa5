"""The ledger's exceptions.

::

    LedgerError
      StoreError       the database cannot be opened, read or written
        StoreMissing   no initialised ledger at the URL (nothing was created)
        StoreUnreachable  the database server cannot be reached or refuses the login
      UsageError       a command was called wrongly (exit code 2)

Rejected feed lines are not exceptions: they are values (``ledger.feed.parse.Rejection``) with
a stable code, collected into the rejects file. Findings are values too
(``ledger.findings.Finding``).
"""


class LedgerError(Exception):
    """Base of every error the ledger raises on purpose."""


class StoreError(LedgerError):
    """The database cannot be opened, read or written."""


class UsageError(LedgerError):
    """A command was called wrongly (exit code 2)."""


class StoreMissing(StoreError):
    """There is no initialised ledger at the URL; only ``ingest`` and ``init`` create one."""


class StoreUnreachable(StoreError):
    """The database server is down, the database does not exist, or the login is refused."""
