"""Peak memory of one ingest or one verify, each in a fresh process.

``python -m bench.memory ingest URL FEED``, ``python -m bench.memory verify URL`` or
``python -m bench.memory since URL`` (``verify --since last``: from the newest stored checkpoint)
prints one JSON object: the process's peak resident set (``VmHWM``), seconds and counts.
:func:`measure` runs that child and returns its answer.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def measure(*args: str) -> dict[str, Any]:
    """Run one child measurement and return its JSON answer."""
    out = subprocess.run(
        [sys.executable, "-m", "bench.memory", *args], cwd=ROOT, check=True, capture_output=True, text=True
    )
    answer: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return answer


def _peak_mb() -> float:
    """This process image's peak resident set, in MB.

    Linux's ``VmHWM`` starts afresh at ``exec``; ``ru_maxrss`` does not (it keeps the peak of
    the forked parent, here the harness holding a whole feed), so it is only the fallback.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _child(argv: list[str]) -> dict[str, Any]:
    from ledger.services.ingest import Ingestor, bounded_lines
    from ledger.storage.store import open_ledger

    what, url = argv[0], argv[1]
    baseline = _peak_mb()
    app = open_ledger(url)
    started = time.perf_counter()
    if what == "ingest":
        with open(argv[2], "rb") as feed:
            report = Ingestor(app).ingest(bounded_lines(feed))
        result: dict[str, Any] = {"stored": report.stored, "rejected": len(report.rejected)}
    else:
        from ledger.verify.engine import verify_store

        if what == "since":
            from bench.resumable import verify_since

            verified = verify_since(app)
        else:
            verified = verify_store(app)
        result = {
            "rounds": verified.rounds_checked,
            "events": verified.events,
            "findings": len(verified.findings),
            "exit_code": verified.exit_code,
        }
    seconds = time.perf_counter() - started
    app.close()
    return {
        "what": what,
        "peak_rss_mb": round(_peak_mb(), 1),
        "rss_after_imports_mb": round(baseline, 1),
        "seconds": round(seconds, 3),
        **result,
    }


if __name__ == "__main__":
    print(json.dumps(_child(sys.argv[1:])))
