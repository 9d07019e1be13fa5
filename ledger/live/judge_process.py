"""The live judge in a process of its own, so judging runs on another core than storing.

A follower is one Python process: its storing, its broker connection and its judging share one
interpreter lock, and judging (the verify pass) costs about as much as storing. With
:class:`RemoteJudge` the judging runs in a child process (started with ``spawn``) that opens the
same store, holds the :class:`~ledger.live.judging.LiveJudge` and answers the follower's
requests over a socket pair (:mod:`multiprocessing.connection` framing): resume from a
checkpoint, judge the rows stored since the last request. The follower keeps everything else
(telling the findings, the told row). The child is ``python -m ledger.live.judge_process``
(not :mod:`multiprocessing`'s ``spawn``, which would run the follower's main script again).

The child runs at a lower priority (:data:`JUDGE_NICE`): on a machine whose cores are all busy
(the follower storing, its receiver, the broker), storing goes first and judging takes what is
left; a follower that is not behind leaves the cores idle most of the time, so its findings are
not later for it. While the follower is behind, judging is put off anyway (``judge_every``).
Where the kernel shares the CPU between sessions first (Linux's autogroup,
``/proc/sys/kernel/sched_autogroup_enabled``), a child in the follower's session takes its CPU
from the follower's one share, whatever its nice value says to the other sessions: on a busy
machine the storing thread then waited for a core most of its time. So the child starts a
session of its own: its judging comes out of a share of its own. That session keeps the usual
priority: lowered as well (``/proc/self/autogroup``), it got so little of a busy machine that
the judged rate fell by a third and the findings came later.

With ``tree=True`` the child also extends the store's Merkle tree (:class:`~ledger.live.tree.TreeKeeper`)
from the rows it has just read to judge, after answering: the storing process then neither
hashes them nor holds the write lock for the tree, and the findings do not wait for it. After an
answer that carries findings, the extension waits until the follower says their told row is
written (:meth:`RemoteJudge.told`; at the latest, at the stop): on SQLite
the tree's write would otherwise hold the lock the told row waits for, in the very instant in
which a killed follower tells its findings again (``ledger.live.told``).
The child ignores SIGTERM and SIGINT (the follower drains first, then closes the socket) and
ends when the socket closes, so it never outlives the follower, even one killed by SIGKILL.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
from multiprocessing.connection import Connection
from typing import Any

from ledger.domain.errors import StoreError, first_line
from ledger.games import GAMES
from ledger.live.judging import LiveFinding, LiveJudge, ResumeRefused
from ledger.live.tree import TreeKeeper
from ledger.storage.store import open_ledger


class RemoteJudge:
    """A :class:`~ledger.live.judging.LiveJudge` in a child process, with the attributes and
    calls the follower uses."""

    def __init__(self, url: str, *, tree: bool = False) -> None:
        mine, theirs = socket.socketpair()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        self._process = subprocess.Popen(
            [sys.executable, "-m", "ledger.live.judge_process", str(theirs.fileno())]
            + (["--tree"] if tree else []),
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
            env={**env, _URL_ENV: url},
            start_new_session=True,  # its own CPU share under autogroup (module docstring)
        )
        theirs.close()
        self._conn = Connection(mine.detach())
        self._sending = threading.Lock()
        """Requests are sent from the judging thread, :meth:`told` from the follower's loop."""
        self.position = 0
        self.rounds = 0
        self.resumed_from: int | None = None
        self.note: str | None = None
        self.told_through = 0
        self.tree_errors: list[tuple[str, str]] = []
        """Errors of the child's tree extensions since the last answer (kind, message; see
        :data:`ledger.live.tree.ErrorSink`), for the follower to count and say."""

    def resume_from_checkpoint(self, told: int | None = None) -> None:
        """As :meth:`LiveJudge.resume_from_checkpoint`, in the child."""
        self._call("resume", told)

    def advance(self) -> list[LiveFinding]:
        """As :meth:`LiveJudge.advance`, in the child."""
        found: list[LiveFinding] = self._call("advance", self.told_through)
        return found

    def told(self, position: int) -> None:
        """Say that the findings judged through ``position`` are told and their told row is
        written (or could not be): the child may extend the tree now. No answer is awaited."""
        with contextlib.suppress(OSError), self._sending:
            self._conn.send(("told", position))

    def close(self) -> None:
        """Tell the child to end, and wait for it."""
        with contextlib.suppress(OSError), self._sending:
            self._conn.send(("stop",))
        self._conn.close()
        try:
            self._process.wait(10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()

    def _call(self, *request: Any) -> Any:
        try:
            with self._sending:
                self._conn.send(request)
            kind, payload, state = self._conn.recv()
        except (EOFError, OSError) as exc:
            raise StoreError(f"the judging process ended: {exc or type(exc).__name__}") from None
        if state:
            self.position = state["position"]
            self.rounds += state["rounds"]
            self.resumed_from = state["resumed_from"]
            self.note = state["note"]
            self.tree_errors += state["tree_errors"]
        if kind == "refused":
            raise ResumeRefused(payload)
        if kind == "error":
            raise StoreError(payload)
        return payload


JUDGE_NICE = 5
"""How much the judging process lowers its scheduling priority (``os.nice``): storing is what
must keep up with the source; judging catches up once storing has."""
_URL_ENV = "LEDGER_JUDGE_STORE"
"""How the child is given the store's URL (not on its command line, where ``ps`` shows it)."""


def serve(url: str, conn: Connection, *, tree: bool = False) -> None:
    """The child: answer the follower's requests until the socket closes or says stop; with
    ``tree``, extend the Merkle tree from the rows each judging read, after answering."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(OSError, AttributeError):  # not on every platform
        os.nice(JUDGE_NICE)
    app = open_ledger(url, create=False)
    judge = LiveJudge(app)
    errors: list[tuple[str, str]] = []
    keeper = None
    if tree:
        keeper = TreeKeeper(app, lambda kind, message: errors.append((kind, message)))
        judge.keep_read = True
    warm_up()
    owed = -1
    """The position of the last answer with findings whose told row is not yet said written
    (``-1``: none): the tree waits for it (module docstring)."""

    def extend_tree() -> None:
        if keeper is not None:
            rows = judge.take_read()
            if rows or keeper.behind:
                keeper.extend(rows)

    try:
        while True:
            try:
                request = conn.recv()
            except (EOFError, OSError):
                return
            if request[0] == "stop":
                extend_tree()
                return
            if request[0] == "told":
                if owed >= 0 and request[1] >= owed:
                    owed = -1
                    extend_tree()
                continue
            answer = _answer(judge, request, errors)
            conn.send(answer)
            errors.clear()
            if answer[0] == "ok" and answer[1]:
                owed = judge.position
            elif owed < 0:
                extend_tree()
    finally:
        if keeper is not None:
            keeper.close()
        app.close()


def warm_up() -> None:
    """Load every game now (the registry loads a game on its first round), so the first rounds
    judged are not late by the imports."""
    for code in GAMES:
        GAMES[code]


def _answer(
    judge: LiveJudge, request: tuple[Any, ...], tree_errors: list[tuple[str, str]]
) -> tuple[str, Any, dict[str, Any] | None]:
    try:
        if request[0] == "resume":
            judge.resume_from_checkpoint(request[1])
            payload: Any = None
        else:
            judge.told_through = request[1]
            payload = judge.advance()
    except ResumeRefused as exc:
        return "refused", str(exc), None
    except Exception as exc:  # the store away, whichever the driver: the follower counts it
        return "error", first_line(exc), None
    state = {
        "position": judge.position,
        "rounds": judge.rounds,
        "resumed_from": judge.resumed_from,
        "note": judge.note,
        "tree_errors": list(tree_errors),
    }
    judge.rounds = 0
    return "ok", payload, state


if __name__ == "__main__":
    serve(os.environ.pop(_URL_ENV), Connection(int(sys.argv[1])), tree="--tree" in sys.argv[2:])
