"""Witness round-trip time: ``POST /add-checkpoint`` to real witness processes over loopback.

``python -m bench.witness [--rounds 100] [--rows 100] [--json]``

Two ``ledger witness serve`` processes are started (fresh state in a temporary directory) for one
log; each round the log grows by ``--rows`` leaves and a new checkpoint is signed; timed are

- **one witness**: :func:`ledger.witness.client.request_cosignature` to witness 1 (request body
  with the consistency proof, the witness's signature and proof checks, its atomic state write
  with fsync, the cosignature checked by the client);
- **2-of-2 quorum**: :func:`ledger.witness.client.collect_cosignatures` to both witnesses at once
  (what ``ledger seal --witness A --witness B --quorum 2`` waits for).

Proofs are computed before the clock starts (from all the leaves, RFC 9162's definitions). The
figures are wall time on this machine, median / 90th percentile / max in milliseconds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ledger.merkle.rfc6962 import leaf_hash, reference_consistency, reference_root
from ledger.proof.note import CheckpointBody, sign_note
from ledger.proof.seal import public_pem
from ledger.witness.client import collect_cosignatures, request_cosignature
from ledger.witness.keys import load_witness_key, write_key_files

ORIGIN = "bench.example/ledger"


def _start(folder: Path, index: int) -> tuple[subprocess.Popen[str], str]:
    key = folder / f"w{index}.key"
    write_key_files(key, f"bench.example/w{index}")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cli.main",
            "witness",
            "serve",
            "--key",
            str(key),
            "--log",
            f"{ORIGIN}={folder / 'op.pub'}",
            "--state",
            str(folder / f"state{index}"),
            "--init",
            "--listen",
            "127.0.0.1:0",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if "listening on" not in line:
        process.kill()
        raise SystemExit(f"the witness did not start: {line!r}")
    return process, line.split("listening on ")[1].split()[0]


def _summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "median_ms": round(statistics.median(ordered) * 1000, 2),
        "p90_ms": round(ordered[int(0.9 * (len(ordered) - 1))] * 1000, 2),
        "max_ms": round(ordered[-1] * 1000, 2),
    }


def run(rounds: int, rows: int) -> dict[str, Any]:
    """Time ``rounds`` checkpoints of ``rows`` new leaves each, to one witness and to two."""
    operator = Ed25519PrivateKey.generate()
    leaves: list[bytes] = []
    one: list[float] = []
    quorum: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "op.pub").write_bytes(public_pem(operator.public_key()))
        started = [_start(folder, i) for i in (1, 2)]
        try:
            urls = [url for _, url in started]
            w1 = load_witness_key(folder / "w1.key.vkey")
            sizes = {urls[0]: 0, urls[1]: 0}
            for _ in range(rounds):
                leaves += [leaf_hash(f"row {len(leaves) + i}".encode()) for i in range(rows)]
                size = len(leaves)
                note = sign_note(
                    CheckpointBody(ORIGIN, size, reference_root(leaves)).text(), ORIGIN, operator
                )
                proofs = {old: reference_consistency(old, leaves) for old in set(sizes.values())}
                t0 = time.perf_counter()
                request_cosignature(urls[0], note, sizes[urls[0]], proofs.__getitem__, witness=w1)
                one.append(time.perf_counter() - t0)
                leaves.append(leaf_hash(f"row {size}".encode()))
                size += 1
                note = sign_note(
                    CheckpointBody(ORIGIN, size, reference_root(leaves)).text(), ORIGIN, operator
                )
                olds = {urls[0]: size - 1, urls[1]: sizes[urls[1]]}
                proofs = {old: reference_consistency(old, leaves) for old in set(olds.values())}
                t0 = time.perf_counter()
                collect_cosignatures(urls, note, olds, proofs.__getitem__, 2)
                quorum.append(time.perf_counter() - t0)
                sizes = {url: size for url in urls}
        finally:
            for process, _ in started:
                process.terminate()
                process.wait(timeout=10)
    return {
        "rounds": rounds,
        "rows_per_round": rows,
        "log_size": len(leaves),
        "one_witness": _summary(one),
        "quorum_2_of_2": _summary(quorum),
    }


def main(argv: list[str] | None = None) -> None:
    """Print the round-trip times (``--json``: one object)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--rows", type=int, default=100)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.rows < 1:
        parser.error("--rounds and --rows are at least 1")
    result = run(args.rounds, args.rows)
    if args.json:
        print(json.dumps(result, indent=1))
        return
    print(
        f"witness round trip, {result['rounds']} checkpoints of {result['rows_per_round']} new "
        f"rows (log of {result['log_size']} rows at the end), loopback HTTP:"
    )
    for name in ("one_witness", "quorum_2_of_2"):
        s = result[name]
        print(
            f"  {name.replace('_', ' '):<14} median {s['median_ms']:>7.2f} ms   p90 "
            f"{s['p90_ms']:>7.2f} ms   max {s['max_ms']:>7.2f} ms"
        )


if __name__ == "__main__":
    main()
