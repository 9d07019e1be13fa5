"""``python -m bench.day_replay`` runs on a tiny store of several days and writes its JSON: the
day report by position prints what the full pass prints, and replay what it printed before.

The bench times each command in a ``ledger`` child process of its own (about 50 of them, each
paying a second of start-up). Here the harness runs with its commands in this process
(typer's test runner, the same environments: the sealing key set or removed, and the pass from
the checkpoint as the bench's ``BEFORE`` makes it), so every comparison it writes is still
made; one command and one ``BEFORE`` replay run as the real child processes the bench starts,
and the ``BEFORE`` one must equal the in-process one. That is the slow tier's; by default only
the bench's timing of a real child runs."""

from __future__ import annotations

import json
import os
import resource
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import bench.day_replay as day_replay
import ledger.services.replay

TINY = ["--rounds", "60", "--tables", "1", "--minutes", "90", "--runs", "1"]


def _check(body: dict[str, Any]) -> None:
    assert body["store"]["days"] >= 3
    assert body["days"] and all(day["identical"] for day in body["days"])
    assert body["replay"] and all(row["same"] for row in body["replay"])
    assert {row["game"] for row in body["replay"]} == {"3CB", "SP9", "STUD"}


def _in_process(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Make ``bench.day_replay.cpu_of`` run ``ledger`` here; the commands it ran, in order."""
    runner, ran = CliRunner(), []
    from cli.main import app

    def cpu_of(args: list[str], env: dict[str, str], program: str = day_replay.LEDGER) -> tuple[float, bytes]:
        before = args[:2] == ["-c", day_replay.BEFORE]
        if before:
            args = args[2:]
        ran.append(["BEFORE", *args] if before else args)
        # exactly the child's environment: what it lacks is removed here too
        override: dict[str, str | None] = {k: None for k in os.environ if k not in env}
        override.update(env)
        start = resource.getrusage(resource.RUSAGE_SELF)
        with monkeypatch.context() as m:
            if before:
                m.setattr(ledger.services.replay, "_from_state_point", lambda *a, **k: None)
            result = runner.invoke(app, args, env=override)
        end = resource.getrusage(resource.RUSAGE_SELF)
        if result.exit_code not in (0, 1):
            raise RuntimeError(f"ledger {' '.join(args)}: exit {result.exit_code}: {result.output[-400:]}")
        return (end.ru_utime - start.ru_utime) + (end.ru_stime - start.ru_stime), result.stdout_bytes

    monkeypatch.setattr(day_replay, "cpu_of", cpu_of)
    # The bench sets LEDGER_SEAL_PUBLIC_KEY in this process: recorded here as it was (unset, or
    # its value), so that the test's end puts it back and no later test sees the bench's key.
    monkeypatch.setenv("LEDGER_SEAL_PUBLIC_KEY", "")
    monkeypatch.delenv("LEDGER_SEAL_PUBLIC_KEY")
    return ran


def test_the_bench_times_a_real_ledger_child() -> None:
    cpu, version = day_replay.cpu_of(["--version"], dict(os.environ))
    assert cpu > 0 and version.startswith(b"ledger ")


@pytest.mark.slow  # about 50 commands on a store of several sealed days: 6 s of CPU
def test_day_replay_harness_compares_what_it_should(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ran = _in_process(monkeypatch)
    out = tmp_path / "day-replay.json"
    assert day_replay.main([*TINY, "--workdir", str(tmp_path / "work"), "--out", str(out)]) == 0
    _check(json.loads(out.read_text(encoding="utf-8")))
    assert ran[[r[0] for r in ran].index("BEFORE")][:2] == ["BEFORE", "replay"]

    # The real child processes the bench starts: ``ledger`` itself, and the BEFORE script, whose
    # replay must equal the in-process one made with the same patch.
    built = day_replay._reused(tmp_path / "work")
    assert built is not None
    keyed, _ = day_replay._envs(built)
    target = next(r[2] for r in ran if r[0] == "BEFORE")
    monkeypatch.undo()
    cpu, version = day_replay.cpu_of(["--version"], keyed)
    assert cpu > 0 and version.startswith(b"ledger")
    _, real = day_replay.median_cpu(["replay", target, "--json"], keyed, 1, before=True)
    ran = _in_process(monkeypatch)
    _, here = day_replay.median_cpu(["replay", target, "--json"], keyed, 1, before=True)
    assert json.loads(real) == json.loads(here)
