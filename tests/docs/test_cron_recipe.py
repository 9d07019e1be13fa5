"""The scheduled job and the full audit of docs/OPERATIONS.md, run end to end as written.

The two scripts (``/opt/ledger/bin/ledger-job`` and ``/opt/ledger/bin/ledger-audit``) are taken
from the document and run with POSIX ``sh`` (dash where installed) and the ``ledger`` installed
beside this Python, on a fresh PostgreSQL schema (the page's store; a SQLite store runs them in
the bad-line test): night 1 ingests two example feeds (the first run: a full verify, then the
first seal), night 2 two more (``verify --since last``: only the rows after checkpoint 1), then
the weekly audit (``verify --jobs 2`` by segments: every row). Then a row before the checkpoints
is changed: the next night's ``--since`` does not see it (the gap docs/INTEGRITY.md documents),
the weekly audit does (exit 3).

Only paths and URLs of the scripts are rewritten (:data:`SUBSTITUTIONS`):

- the database URLs (``ledger_ingest@db``, ``ledger_sealer@db``, ``ledger_auditor@db``) → the
  test's store, with
  the test database's owner login (the roles of ``ledger init --roles`` are cluster-wide and
  are tested elsewhere);
- ``/opt/ledger/venv/bin/ledger`` → the ``ledger`` of this environment;
- ``/srv/`` → a temporary folder holding ``feeds/{incoming,done,reports}`` and
  ``ledger/{checkpoints,seal.key,seal.key.pub}``.

The seal key is made as OPERATIONS.md says (``ledger keygen --out /srv/ledger/seal.key``) and
reaches ``ledger seal`` only through the script (``--key``): the job's environment carries no
``LEDGER_*`` setting, as under cron. The store is made once with ``ledger init`` (the scripts
run with ``LEDGER_CREATE_TABLE=n``). A feed with a bad line leaves its rejects in the reports
folder, never in the incoming one, and every run logs time-stamped lines ending in its exit
code.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
OPERATIONS = ROOT / "docs" / "OPERATIONS.md"
LEDGER = Path(sys.executable).with_name("ledger")
SH = shutil.which("dash") or "/bin/sh"

INGEST_URL = "postgresql://ledger_ingest@db:5432/ledger?schema=ledger"
AUDITOR_URL = "postgresql://ledger_auditor@db:5432/ledger?schema=ledger"
SEALER_URL = "postgresql://ledger_sealer@db:5432/ledger?schema=ledger"
SUBSTITUTIONS = (INGEST_URL, AUDITOR_URL, SEALER_URL, "/opt/ledger/venv/bin/ledger", "/srv/")
"""What the test rewrites in the scripts, and nothing else."""


def script(name: str) -> str:
    """The ``sh`` block that follows the line naming ``/opt/ledger/bin/NAME`` in OPERATIONS.md."""
    text = OPERATIONS.read_text(encoding="utf-8")
    found = re.search(
        rf"^`/opt/ledger/bin/{re.escape(name)}`:\n\n(?:<!--.*?-->\n)?```sh\n(.*?)^```$",
        text,
        re.MULTILINE | re.DOTALL,
    )
    assert found is not None, f"OPERATIONS.md has no script /opt/ledger/bin/{name}"
    return found.group(1)


def rewrite(body: str, url: str, srv: Path) -> str:
    """Only :data:`SUBSTITUTIONS`; each must occur (the test would otherwise test nothing)."""
    for old in SUBSTITUTIONS[3:]:
        assert old in body, old
    assert INGEST_URL in body or AUDITOR_URL in body
    body = body.replace(INGEST_URL, url).replace(AUDITOR_URL, url).replace(SEALER_URL, url)
    body = body.replace("/opt/ledger/venv/bin/ledger", str(LEDGER))
    return body.replace("/srv/", f"{srv}/")


LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ ledger-job: (.*)$", re.MULTILINE)


def test_the_scripts_are_posix_sh() -> None:
    for name in ("ledger-job", "ledger-audit"):
        body = script(name)
        assert body.startswith("#!/bin/sh\n")
        for bashism in ("[[", "$(<", "function ", "local ", "source ", "&>", "<<<", "${!"):
            assert bashism not in body, (name, bashism)
        checked = subprocess.run([SH, "-n"], input=body, text=True, capture_output=True)
        assert checked.returncode == 0, checked.stderr


class Site:
    """One installation in a temporary folder: the two scripts, the key pair, the feeds."""

    def __init__(self, tmp: Path, url: str) -> None:
        self.url = url
        self.srv = tmp / "srv"
        for folder in ("feeds/incoming", "feeds/done", "feeds/reports", "ledger/checkpoints"):
            (self.srv / folder).mkdir(parents=True)
        self.bin = tmp / "bin"
        self.bin.mkdir()
        for name in ("ledger-job", "ledger-audit"):
            (self.bin / name).write_text(rewrite(script(name), url, self.srv), encoding="utf-8")
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("LEDGER_")}
        assert self.ledger("init", "--db", url).returncode == 0
        key = self.srv / "ledger" / "seal.key"
        assert self.ledger("keygen", "--out", str(key)).returncode == 0

    def ledger(self, *args: str) -> subprocess.CompletedProcess[str]:
        """The test's own ``ledger ARGS`` (setting up and reading back), in this process and
        with no LEDGER_* variable; the scripts run the real command, as cron does."""
        from typer.testing import CliRunner

        from cli.main import app

        unset: dict[str, str | None] = {k: None for k in os.environ if k.startswith("LEDGER_")}
        done = CliRunner().invoke(app, list(args), env=unset)
        if done.exception is not None and not isinstance(done.exception, SystemExit):
            raise done.exception
        return subprocess.CompletedProcess([str(LEDGER), *args], done.exit_code, done.stdout, done.stderr)

    def run(self, name: str) -> int:
        """Run one script as cron would; its exit code."""
        time.sleep(1.1)  # the scripts name their reports by the second
        done = subprocess.run(
            [SH, str(self.bin / name)],
            env=self.env,
            cwd=self.srv,
            capture_output=True,
            text=True,
            timeout=600,
        )
        self.output = done.stdout + done.stderr
        return done.returncode

    def deliver(self, *feeds: Path) -> None:
        for feed in feeds:
            shutil.copy(feed, self.srv / "feeds" / "incoming" / feed.name)

    def newest(self, pattern: str) -> dict[str, Any]:
        found = sorted((self.srv / "feeds" / "reports").glob(pattern))
        assert found, pattern
        body: dict[str, Any] = json.loads(found[-1].read_text(encoding="utf-8"))
        return body

    def checkpoints(self) -> list[dict[str, Any]]:
        listed = self.ledger("seal", "--list", "--json", "--db", self.url)
        assert listed.returncode == 0, listed.stderr
        found: list[dict[str, Any]] = json.loads(listed.stdout)["checkpoints"]
        return found

    def tamper_before(self, position: int) -> None:
        """Change the amount of a bet stored before row ``position``, past the triggers."""
        if self.url.startswith("sqlite"):
            with sqlite3.connect(self.url[len("sqlite:///") :]) as conn:
                conn.execute("DROP TRIGGER IF EXISTS ledger_no_update")
                rowid, state = next(
                    (i, bytes(s))
                    for i, s in conn.execute(
                        "SELECT rowid, state FROM stored_events WHERE rowid < ? ORDER BY rowid", (position,)
                    )
                    if b"bet_placed" in bytes(s)
                )
                conn.execute(
                    "UPDATE stored_events SET state = ? WHERE rowid = ?",
                    (state.replace(b'"amount":"', b'"amount":"1', 1), rowid),
                )
            return
        import psycopg

        schema = parse_qs(urlsplit(self.url).query)["schema"][0]
        table = f'"{schema}".ledger_events'
        with psycopg.connect(self.url.split("?")[0], autocommit=True) as conn:
            conn.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER")
            rows = conn.execute(
                f"SELECT notification_id, state FROM {table} WHERE "
                "notification_id < %s ORDER BY notification_id",
                (position,),
            )
            nid, state = next((i, bytes(s)) for i, s in rows if b"bet_placed" in bytes(s))
            conn.execute(
                f"UPDATE {table} SET state = %s WHERE notification_id = %s",
                (state.replace(b'"amount":"', b'"amount":"1', 1), nid),
            )
            conn.execute(f"ALTER TABLE {table} ENABLE TRIGGER USER")


# On the page's store, PostgreSQL (about 20 real `ledger` processes under `sh`); the scripts run
# on SQLite in the bad-line test below.
@pytest.mark.slow
@pytest.mark.parametrize("db_url", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True)
def test_nightly_job_and_weekly_audit_end_to_end(db_url: str, tmp_path: Path, examples: Path) -> None:
    site = Site(tmp_path, db_url)

    # Night 1: the first run verifies everything, then stores checkpoint 1.
    site.deliver(examples / "fpc.jsonl", examples / "3cb.jsonl")
    assert site.run("ledger-job") == 0, site.output
    assert not list((site.srv / "feeds" / "incoming").iterdir())
    assert sorted(p.name for p in (site.srv / "feeds" / "done").iterdir()) == ["3cb.jsonl", "fpc.jsonl"]
    night1 = site.newest("verify-*.json")
    [first] = site.checkpoints()
    assert night1["since"] is None and night1["integrity"] == "ok"
    assert night1["events"] == first["position"]  # every row, up to the first seal
    written = sorted(p.name for p in (site.srv / "ledger" / "checkpoints").iterdir())
    assert len(written) == 3 and written[1] == written[0].replace(".json", ".note")  # C2SP note
    assert written[2] == written[0].replace(".json", ".snapshot.json")

    assert LOG_LINE.findall(site.output)[0] == "start"
    assert LOG_LINE.findall(site.output)[-1] == "exit 0"

    # Night 2: only the rows stored since checkpoint 1 are read; checkpoint 2 continues from 1.
    site.deliver(examples / "stud.jsonl", examples / "rl.jsonl")
    assert site.run("ledger-job") == 0, site.output
    night2 = site.newest("verify-*.json")
    assert night2["since"]["checkpoint"] == "last" and night2["since"]["number"] == 1
    assert night2["since"]["key_source"] == "public_key"
    one, second = site.checkpoints()
    assert one == first
    assert night2["events"] == second["position"] - first["position"]
    assert 0 < night2["events"] < first["position"]
    assert night2["rounds_checked"] < night1["rounds_checked"] + night2["rounds_checked"]
    assert night2["integrity"] == "ok" and not night2["findings"]

    # The weekly audit reads every row, by segments, and checks the newest checkpoint file.
    assert site.run("ledger-audit") == 0, site.output
    audit = site.newest("audit-*.json")
    assert audit["events"] == second["position"] and audit["integrity"] == "ok"
    assert audit["rounds_checked"] == night1["rounds_checked"] + night2["rounds_checked"]
    assert audit["checkpoint"]["head"] == second["head"]  # the newest file, not a snapshot

    # A row changed before the checkpoints: --since does not see it (the documented gap) ...
    site.tamper_before(first["position"])
    assert site.run("ledger-job") == 0, site.output
    night3 = site.newest("verify-*.json")
    assert night3["integrity"] == "ok" and night3["since"]["number"] == 2
    assert night3["events"] == 0
    # ... the weekly full audit does.
    assert site.run("ledger-audit") == 3, site.output
    audit = site.newest("audit-*.json")
    assert audit["integrity"] == "broken"
    assert any(f["code"] == "chain_broken" for f in audit["findings"])


@pytest.mark.slow  # one run of the nightly job: about five real `ledger` processes under `sh`
def test_a_bad_line_is_rejected_once_and_the_log_says_so(tmp_path: Path, examples: Path) -> None:
    """One night: a feed with a bad line, and a rejects file an older job left in the incoming
    folder (which matches ``*.jsonl``), which must never be taken for a feed."""
    site = Site(tmp_path, f"sqlite:///{tmp_path / 'ledger.db'}")
    lines = (examples / "rl.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    incoming = site.srv / "feeds" / "incoming"
    bad_line = '{"type": "bet_placed", "table": "RL-01"}\n'
    (incoming / "rl-bad.jsonl").write_text("".join(lines) + bad_line, encoding="utf-8")
    stale = incoming / "rl-old.jsonl.rejects.jsonl"
    stale.write_text(bad_line, encoding="utf-8")
    assert site.run("ledger-job") == 1, site.output
    logged = LOG_LINE.findall(site.output)
    assert "ingest rl-bad.jsonl: exit 1" in logged
    assert logged[-1] == "exit 1"
    # the feed is out of the incoming folder (nothing to ingest again); the old rejects file,
    # never a feed, is left where it was, neither ingested nor logged
    assert [p.name for p in incoming.iterdir()] == [stale.name]
    assert [line for line in logged if line.startswith("ingest ")] == ["ingest rl-bad.jsonl: exit 1"]
    assert not any("rejects" in line for line in logged)
    reports = site.srv / "feeds" / "reports"
    rejects = reports / "rl-bad.jsonl.rejects.jsonl"
    assert len(rejects.read_text(encoding="utf-8").splitlines()) == 1
    assert sorted(p.name for p in reports.glob("*rejects*")) == [rejects.name]
    assert len(site.checkpoints()) == 1  # sealed with the key the page says to make


@pytest.mark.slow  # a real `ledger report` process under `sh`, as cron runs it
def test_the_day_report_cron_line_names_its_store_and_logs_its_exit_code(
    tmp_path: Path, examples: Path
) -> None:
    """The line runs as cron runs it (``sh -c``, ``\\%`` unescaped, no LEDGER_* in the
    environment), with only its URL and paths rewritten."""
    from typer.testing import CliRunner

    from cli.main import app

    text = OPERATIONS.read_text(encoding="utf-8")
    [line] = [x for x in text.splitlines() if x.startswith("30 6 * * * ledger ")]
    command = line.removeprefix("30 6 * * * ledger ").replace("\\%", "%")
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    assert (
        CliRunner()
        .invoke(app, ["ingest", str(examples / "rl.jsonl"), "--db", url], env={"LEDGER_DB": None})
        .exit_code
        == 0
    )
    (tmp_path / "srv" / "reports").mkdir(parents=True)
    log = tmp_path / "ledger-report.log"
    command = (
        command.replace(AUDITOR_URL, url)
        .replace("/srv/", f"{tmp_path}/srv/")
        .replace("/opt/ledger/venv/bin/ledger", str(LEDGER))
        .replace("/var/log/ledger-report.log", str(log))
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEDGER_")}
    done = subprocess.run(
        [SH, "-c", command], env=env, cwd=tmp_path / "srv", capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    written = log.read_text(encoding="utf-8")
    found = re.search(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ ledger-report: exit (\d)$", written, re.MULTILINE)
    assert found is not None, written
    assert "no ledger at" not in written  # it found the store the line names
    assert found.group(1) in ("0", "1", "2"), written  # yesterday may hold no round (2)
