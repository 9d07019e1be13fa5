"""Hostile input: ingest never crashes and never stores a malformed event.

Hypothesis throws arbitrary bytes, arbitrary JSON and mutated valid lines at the ingestor; every
line is either stored, a duplicate, or rejected with a documented code — and the store still
verifies. Fixed cases cover oversized lines, deep nesting, huge numbers, NaN, control characters,
invalid UTF-8, and a 1 GB file with no newline (sparse: it takes no disk) read with bounded memory.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger.codec.parse import MAX_LINE_BYTES, REJECT_CODES
from ledger.services.ingest import Ingestor, IngestReport
from ledger.storage.store import LedgerApp, open_ledger
from ledger.verify.engine import verify_store

EXAMPLES = Path(os.environ["LEDGER_EXAMPLES"])  # set by tests/conftest.py
VALID = [
    ln
    for name in ("rl.jsonl", "fpc.jsonl")
    if (EXAMPLES / name).exists()
    for ln in (EXAMPLES / name).read_text(encoding="utf-8").splitlines()
    if ln
]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4),
    max_leaves=20,
)


@st.composite
def mutated_line(draw: st.DrawFn) -> bytes:
    """A valid feed line with one field replaced, removed or added."""
    obj = json.loads(draw(st.sampled_from(VALID)))
    key = draw(st.sampled_from(sorted(obj)))
    action = draw(st.sampled_from(["replace", "remove", "add"]))
    if action == "replace":
        obj[key] = draw(json_values)
    elif action == "remove":
        del obj[key]
    else:
        obj[draw(st.text(min_size=1, max_size=8))] = draw(json_values)
    return json.dumps(obj).encode()


@st.composite
def cut_line(draw: st.DrawFn) -> bytes:
    """A valid line cut short or with bytes flipped."""
    line = bytearray(draw(st.sampled_from(VALID)).encode())
    if draw(st.booleans()):
        return bytes(line[: draw(st.integers(0, len(line)))])
    at = draw(st.integers(0, len(line) - 1))
    line[at] = draw(st.integers(0, 255))
    return bytes(line)


hostile_lines = st.lists(
    st.binary(max_size=200).map(lambda b: b.replace(b"\n", b" "))
    | json_values.map(lambda v: json.dumps(v).encode())
    | mutated_line()
    | cut_line()
    | st.sampled_from(VALID).map(str.encode),
    min_size=1,
    max_size=25,
)


def _check(app: LedgerApp, lines: list[bytes]) -> IngestReport:
    rejected: list[tuple[str, bytes]] = []
    report = Ingestor(app, batch_events=7).ingest(
        enumerate(lines, start=1), on_reject=lambda r, text: rejected.append((r.code, bytes(text)))
    )
    non_blank = sum(1 for ln in lines if ln.strip())
    assert report.lines == non_blank
    assert report.stored + report.duplicates + len(report.rejected) == non_blank
    assert {code for code, _ in rejected} <= set(REJECT_CODES)
    assert all(r.message for r in report.rejected)
    return report


@pytest.mark.slow
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(lines=hostile_lines)
def test_any_input_is_stored_or_rejected_with_a_reason_and_the_store_verifies(
    tmp_path_factory, lines
) -> None:
    path = tmp_path_factory.mktemp("hostile") / "l.db"
    app = open_ledger(f"sqlite:///{path}")
    try:
        _check(app, lines)
        report = verify_store(app)
        assert report.integrity_ok, [f.message for f in report.findings][:3]
    finally:
        app.close()


def test_nasty_fixed_cases_are_rejected_with_their_codes(tmp_path: Path) -> None:
    base = json.loads(VALID[0])
    nan = json.dumps(base).replace(f'"seq": {base["seq"]}', '"seq": NaN').encode()
    cases: dict[str, bytes] = {
        "line_too_long": b'{"v":1,"x":"' + b"a" * MAX_LINE_BYTES + b'"}',
        "deep_nesting": b"[" * 100_000 + b"]" * 100_000,
        "deep_object": b'{"a":' * 20_000 + b"1" + b"}" * 20_000,
        "huge_integer": json.dumps({**base, "seq": 10**4000}).encode(),
        "too_many_digits": b'{"v":1,"seq":' + b"9" * 5000 + b"}",
        "huge_float": json.dumps(base).replace(f'"seq": {base["seq"]}', '"seq": 1e400').encode(),
        "nan": nan,
        "control_chars": json.dumps({**base, "table": "RL\x00\x07\x1b[31m"}).encode(),
        "raw_control_in_string": b'{"v":1,"table":"a\x01b"}',
        "invalid_utf8": b'{"v":1,"table":"\xff\xfe"}',
        "lone_surrogate": json.dumps({**base, "table": "\ud800"}).encode(),
        "money_number": json.dumps({**base, "currency": 100}).encode(),
        # RFC 8259 lets a parser ignore a byte order mark: the event is stored, re-serialised.
        "bom_then_valid": b"\xef\xbb\xbf" + VALID[0].encode(),
    }
    app = open_ledger(f"sqlite:///{tmp_path / 'l.db'}")
    try:
        report = _check(app, list(cases.values()))
        assert report.stored == 1  # only the valid line behind a BOM
        by_line = {r.line: r.code for r in report.rejected}
        names = list(cases)
        assert by_line[names.index("line_too_long") + 1] == "line_too_long"
        assert by_line[names.index("deep_nesting") + 1] == "invalid_json"
        assert by_line[names.index("deep_object") + 1] == "invalid_json"
        assert by_line[names.index("nan") + 1] == "invalid_json"
        assert by_line[names.index("invalid_utf8") + 1] == "invalid_json"
        assert len(by_line) == len(cases) - 1
        assert verify_store(app).exit_code == 0
    finally:
        app.close()


_MEASURE = (
    "import sys\n"
    "from cli.main import main\n"
    "sys.argv = ['ledger', *sys.argv[1:]]\n"
    "def peak():\n"
    "    # VmHWM is this process's own peak; ru_maxrss would carry the parent's over fork+exec\n"
    "    for line in open('/proc/self/status'):\n"
    "        if line.startswith('VmHWM:'):\n"
    "            return int(line.split()[1])\n"
    "try:\n"
    "    main()\n"
    "finally:\n"
    "    sys.stderr.write(f'\\nMAXRSS_KB={peak()}\\n')\n"
)


def _ingest_measured(args: list[str], tmp_path: Path, stdin=None) -> tuple[int, str, int]:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    proc = subprocess.run(
        [sys.executable, "-c", _MEASURE, "ingest", *args, "--db", f"sqlite:///{tmp_path / 'l.db'}"],
        env=env,
        capture_output=True,
        timeout=300,
        stdin=stdin,
    )
    err = proc.stderr.decode()
    rss = int(err.rsplit("MAXRSS_KB=", 1)[1].split()[0])
    return proc.returncode, proc.stdout.decode() + err, rss


@pytest.mark.slow
def test_a_1_gb_file_without_newline_is_rejected_with_bounded_memory(tmp_path: Path) -> None:
    big = tmp_path / "big.jsonl"
    with open(big, "wb") as stream:  # sparse: 1 GiB of zero bytes that take no disk blocks
        stream.truncate(1 << 30)
        stream.seek(0)
        stream.write(b'{"v":1,')
    code, output, rss_kb = _ingest_measured([str(big)], tmp_path)
    assert code == 1, output
    assert "line_too_long" in output
    rejects = [json.loads(ln) for ln in (tmp_path / "big.jsonl.rejects.jsonl").read_text().splitlines()]
    assert [(r["line"], r["code"]) for r in rejects] == [(1, "line_too_long")]
    assert len(rejects[0]["text"]) <= 4096
    assert rss_kb < 400 * 1024, f"max RSS {rss_kb} KiB for a 1 GiB line"


@pytest.mark.slow  # a real `ledger ingest` process fed through a pipe
def test_a_long_line_from_a_pipe_is_rejected_and_the_next_line_is_stored(tmp_path: Path) -> None:
    feed = tmp_path / "feed.jsonl"
    with open(feed, "wb") as stream:
        stream.write(b"x" * (64 << 20) + b"\n")  # 64 MiB garbage line, then a valid round
        for line in VALID[:14]:
            stream.write(line.encode() + b"\n")
    with open(feed, "rb") as stdin:
        code, output, rss_kb = _ingest_measured(
            ["-", "--rejects", str(tmp_path / "r.jsonl"), "--json"], tmp_path, stdin=stdin
        )
    assert code == 1, output
    summary = json.loads(output[: output.rindex("}") + 1])
    assert (summary["rejected"], summary["stored"]) == (1, 14)
    assert rss_kb < 400 * 1024
