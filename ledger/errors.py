"""The ledger's exceptions.

::

    LedgerError
      StoreError       the database cannot be opened, read or written
        StoreMissing   no initialised ledger at the URL (nothing was created)
        StoreUnreachable  the database server cannot be reached or refuses the login
        FrameError     stored bytes that are not a framed fact (changed, foreign, other key)
      UsageError       a command was called wrongly (exit code 2)
      SealError        a key or checkpoint that cannot be used (unreadable, wrong format, bad
                       signature)
        SnapshotError  bytes that are not a verifier snapshot, or one that does not fit its
                       checkpoint (``ledger.verify.snapshot``)
      BundleError      a round that cannot be exported, or a file that is not a bundle

Every one ends a command with one line on stderr and exit 2 (``cli.main``) unless the command
words it itself (``ledger seal`` reports a chain that does not verify with exit 3).

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


class FrameError(ValueError, StoreError):
    """Stored bytes that are not a framed fact (changed, not written by this ledger, or
    encrypted under another key). A :class:`StoreError` too, so a command that meets one ends
    with one line and exit 2, never a traceback."""


class SealError(LedgerError):
    """A key or checkpoint that cannot be used (unreadable, wrong format, bad signature)."""


class BundleError(LedgerError):
    """A round that cannot be exported, or a file that is not a bundle."""
