"""Client CPU per feed event of one ingest and one verify, for A/B runs of two code versions.

``python -m bench.ab FEED`` ingests the feed into a fresh SQLite file, verifies it, and prints
one JSON object: ``{"ingest": µs/event, "verify": µs/event}`` (``time.process_time``). Run it
alternately with each version first on ``PYTHONPATH`` (e.g. a ``git archive`` of a commit) and
compare medians: that is how bench/README.md's "what each change bought" table was taken.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time


def main(argv: list[str]) -> dict[str, float]:
    """Measure the feed at ``argv[0]``; returns CPU µs per feed line for ingest and verify."""
    from ledger.services.ingest import ingest_file
    from ledger.storage.store import open_ledger
    from ledger.verify.engine import verify_store

    feed = argv[0]
    with open(feed, "rb") as stream:
        lines = sum(1 for line in stream if line.strip())
    with tempfile.TemporaryDirectory(prefix="ledger-ab-") as folder:
        app = open_ledger("sqlite:///" + os.path.join(folder, "ab.db"))
        try:
            started = time.process_time()
            report = ingest_file(app, feed)
            ingest = time.process_time() - started
            started = time.process_time()
            verified = verify_store(app)
            verify = time.process_time() - started
        finally:
            app.close()
    if report.rejected or verified.exit_code != 0:
        raise SystemExit(
            f"the feed did not ingest and verify clean: {report.rejected[:1]} {verified.findings[:1]}"
        )
    return {"ingest": round(ingest / lines * 1e6, 2), "verify": round(verify / lines * 1e6, 2)}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:])))
