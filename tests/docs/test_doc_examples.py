"""Every shell example of README.md and docs/**/*.md runs as shown.

Each fenced ``sh``, ``bash`` or ``console`` block is run, in the order of its document, in one
scratch folder per document that holds what the documents name (``tests/examples/`` and
``docs/examples/``) and a ``.venv/bin/ledger`` (and ``python``) that resolve to this
environment's; ``ledger`` and ``.venv/bin/ledger`` both resolve to it, before and after
``. .venv/bin/activate``.

- ``sh``/``bash``: each command (a line, with its ``\\`` continuations) must exit 0, or the
  code its comment names (``# exit 1``, ``# exit code 1``).
- ``console``: each ``$ `` line is a command; the lines under it are its output, compared line
  by line (``...`` stands for any number of lines); a command followed by ``$ echo $?`` must
  exit with the code shown, any other with 0 (or its comment's code).

Commands made only of ``ledger …``, ``export``, ``cd``, ``echo`` (of words and ``$?``),
``test $? = N``, ``true``, ``K=V`` prefixes, ``&&``, ``||``, ``;``, ``> FILE`` and ``$(cat FILE)``
of a file that is there (read, then quoted or split as ``bash`` would) run in this process
(typer's test runner: no second of imports per command); anything else runs in ``bash`` with
the scratch ``.venv/bin`` first on ``PATH``.

A block the test cannot run says why just above it, ``<!-- not run: why -->``; a long one is
marked ``<!-- slow: why -->`` and runs only in the slow tier (``-m slow``, ``--all``,
``CI=true``), where its document runs whole, once: the case without the slow blocks is then
left out, as the whole document covers it (tests/docs/conftest.py). :data:`NOT_RUN` lists the
skipped blocks per document by their first command, and the documents must agree with it — a
new block runs unless someone marks it and says why.

Each command has :data:`TIMEOUT` seconds (``LEDGER_DOC_TIMEOUT`` changes it); one that takes
longer fails the test with the document, the block's line and the command named.
"""

from __future__ import annotations

import glob
import itertools
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app

ROOT = Path(__file__).resolve().parents[2]
LEDGER = Path(sys.executable).with_name("ledger")
slow = pytest.mark.slow
"""Registered in pyproject by the test-tier work; only applied here."""
TIMEOUT = float(os.environ.get("LEDGER_DOC_TIMEOUT", "120"))
"""Seconds one command of a document may take."""

NOT_RUN: dict[str, list[str]] = {
    "README.md": [
        "python3 -m venv .venv && .venv/bin/pip install -e .",
        "python3 -m venv .venv && .venv/bin/pip install -e '.[test]' && "
        ".venv/bin/python -m pytest --all -n 3 --dist loadscope",
    ],
    "docs/OPERATIONS.md": [
        "python3 -m venv /opt/ledger/venv",
        "createdb ledger",
        "ledger keygen --out /srv/ledger/seal.key     # seal.key (private, mode 0600) and seal.key.pub",
        "#!/bin/sh",
        "#!/bin/sh",
        "ledger verify --since last --public-key /srv/ledger/seal.key.pub --json   # or --since cp-….json",
        "ledger seal --list                               # say checkpoints 1 … 40 exist",
        "nats-server -js -a 127.0.0.1 -p 4222 -sd /tmp/ledger-nats > /tmp/ledger-nats.log 2>&1 &",
        "ledger ingest --follow nats://127.0.0.1:4222/TABLES --seal-every 5m --witness "
        "https://w1.regulator.example --witness https://w2.regulator.example --quorum 2",
        "ledger seal --key /srv/ledger/seal.key --out /srv/ledger/checkpoints/cp.json --witness "
        "https://w1.regulator.example --witness https://w2.regulator.example --quorum 2",
        "ledger verify --since last --public-key seal.key.pub --witness-key w1.key.vkey "
        "--witness-key w2.key.vkey --quorum 2",
    ],
    "docs/SURVEILLANCE.md": [
        "python -m bench.surveillance --runs 400 --seed 1 --json surveillance.json",
        "python -m bench.surveillance --runs 2000 --seed 1 --power-only --json power.json",
    ],
    "docs/SECURITY.md": [
        "ledger init --db postgresql://owner@db/ledger?schema=ledger --roles    # once, as the owner",
    ],
}
"""The blocks each document marks ``<!-- not run: … -->``, by their first command line."""

SLOW: dict[str, list[str]] = {
    "README.md": [". .venv/bin/activate"],
    "docs/SURVEILLANCE.md": [
        "ledger simulate --out demo.jsonl --game RL,FPC,STUD --rounds 500 --tables 2 --seed 5 "
        "--bias RL-01:17=4 --bias FPC-02:d1.6=2 --bias STUD-01:missing=QH --croupier-error-rate "
        "D-RL-03=0.3 --error-rate 0.02",
        "ledger simulate --out wheel.jsonl --game RL --tables 2 --rounds 5000 --seed 1 --bias RL-01:17=1.5",
    ],
    "docs/games/3CB.md": [
        "ledger simulate --game 3CB --rounds 200 --tables 3 --error-rate 0.05 --out 3cb-sim.jsonl",
    ],
    "docs/games/SP9.md": [
        "ledger simulate --game SP9 --rounds 200 --tables 3 --seed 5 --error-rate 0.05 --out sim.jsonl",
    ],
    "docs/games/STUD.md": [
        "ledger simulate --game STUD --tables 3 --rounds 100 --seed 3 --error-rate 0.1 --out stud.jsonl",
    ],
}
"""The blocks each document marks ``<!-- slow: … -->`` (run only with ``-m slow``)."""

FENCE = re.compile(r"^```(sh|bash|console)[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
MARK = re.compile(r"(?:^|\n)<!-- *(not run|slow): *([^\n]+?) *-->\s*\Z")
EXIT_COMMENT = re.compile(r"\bexit(?: code)? (\d)\b")
CAT = re.compile(r'(?<!\S)(?:"\$\(cat ([\w./-]+)\)"|\$\(cat ([\w./-]+)\))(?!\S)')
"""A command substitution of a file's text that is a whole word, quoted (one word) or not (split
into words); inside a longer word or string it is left to ``bash``."""
PLAIN = {"&&", ";", ">"}
runner = CliRunner()


@dataclass
class Command:
    """One command line of a block: its text, the exit code it must give, the output shown."""

    line: str
    exit_code: int = 0
    output: list[str] | None = None


@dataclass
class Block:
    """One fenced block of a document, with its mark (``not run`` or ``slow``) if any."""

    doc: str
    line: int
    lang: str
    body: str
    mark: str | None = None
    why: str = ""
    commands: list[Command] = field(default_factory=list)

    @property
    def first(self) -> str:
        return next(line.strip() for line in self.body.splitlines() if line.strip()).removeprefix("$ ")


def documents() -> list[str]:
    found = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
    return [str(p.relative_to(ROOT)) for p in found if FENCE.search(p.read_text("utf-8"))]


def split_comment(line: str) -> tuple[str, str]:
    """The command and its trailing ``# comment`` (a ``#`` outside quotes after a blank)."""
    quote = ""
    for i, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i].rstrip(), line[i + 1 :]
    return line.rstrip(), ""


def logical_lines(lines: list[str]) -> Iterator[str]:
    """Lines with their ``\\`` continuations joined."""
    pending = ""
    for raw in lines:
        if raw.rstrip().endswith("\\"):
            pending += raw.rstrip()[:-1] + " "
            continue
        yield pending + raw
        pending = ""
    if pending:
        yield pending


def parse(block: Block) -> list[Command]:
    if block.lang != "console":
        commands = []
        for line in logical_lines(block.body.splitlines()):
            text, comment = split_comment(line)
            if text.strip():
                found = EXIT_COMMENT.search(comment)
                commands.append(Command(text.strip(), int(found.group(1)) if found else 0))
        return commands
    commands = []
    lines = block.body.splitlines()
    i = 0
    while i < len(lines):
        if not lines[i].startswith("$ "):
            assert commands, f"{block.doc}:{block.line}: output before any $ command"
            commands[-1].output = [*(commands[-1].output or []), lines[i]]
            i += 1
            continue
        joined = [lines[i][2:]]
        while joined[-1].rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            joined.append(lines[i])
        text, comment = split_comment(next(logical_lines(joined)))
        found = EXIT_COMMENT.search(comment)
        commands.append(Command(text.strip(), int(found.group(1)) if found else 0))
        i += 1
    for before, after in itertools.pairwise(commands):
        if after.line == "echo $?" and after.output:
            before.exit_code = int(after.output[0])
    return commands


def blocks_of(doc: str) -> list[Block]:
    text = (ROOT / doc).read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        block = Block(doc, text.count("\n", 0, match.start()) + 1, match.group(1), match.group(2))
        mark = MARK.search(text[: match.start()])
        if mark:
            block.mark, block.why = mark.group(1), mark.group(2)
        block.commands = parse(block)
        found.append(block)
    return found


def matches(expected: list[str], actual: list[str]) -> bool:
    """Line by line, trailing blanks ignored; a line ``...`` stands for any number of lines."""
    if not expected:
        return not actual
    head, rest = expected[0].rstrip(), expected[1:]
    if head.strip() == "...":
        return any(matches(rest, actual[i:]) for i in range(len(actual) + 1))
    return bool(actual) and actual[0].rstrip() == head and matches(rest, actual[1:])


class CommandTimeout(Exception):
    """A document's command ran longer than :data:`TIMEOUT`."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`CommandTimeout` in this (main) thread after ``seconds``; elsewhere (no
    signals off the main thread) the block runs unbounded."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise CommandTimeout(f"took more than {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class Shell:
    """The scratch folder of one document and the state its commands share (cwd, exports)."""

    def __init__(self, scratch: Path, timeout: float = TIMEOUT) -> None:
        self.home = scratch
        self.timeout = timeout
        self.cwd = scratch
        self.exports: dict[str, str] = {}
        self.last = 0
        for folder in ("tests/examples", "docs/examples"):
            shutil.copytree(ROOT / folder, scratch / folder)
        bin_dir = scratch / ".venv" / "bin"
        bin_dir.mkdir(parents=True)
        for name, target in (
            ("ledger", LEDGER),
            ("python", Path(sys.executable)),
            ("python3", Path(sys.executable)),
        ):
            (bin_dir / name).write_text(f'#!/bin/sh\nexec "{target}" "$@"\n', encoding="utf-8")
            (bin_dir / name).chmod(0o755)
        (bin_dir / "activate").write_text(f'PATH="{bin_dir}:$PATH"; export PATH\n', encoding="utf-8")
        self.bin = bin_dir

    def environment(self, extra: dict[str, str]) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("LEDGER_")}
        env.update(self.exports, **extra)
        env["PATH"] = f"{self.bin}:{LEDGER.parent}:{env.get('PATH', '')}"
        env["PYTHONPATH"] = str(ROOT)
        return env

    def run(self, line: str) -> tuple[int, str]:
        """Run one command line; :class:`CommandTimeout` if it outlasts ``self.timeout``."""
        segments = self.plain(line)
        if segments is None:
            try:
                done = subprocess.run(
                    ["bash", "-c", line],
                    cwd=self.cwd,
                    capture_output=True,
                    text=True,
                    env=self.environment({}),
                    timeout=self.timeout,
                )
            except subprocess.TimeoutExpired as exc:
                raise CommandTimeout(f"took more than {self.timeout:g} s") from exc
            self.last = done.returncode
            return done.returncode, done.stdout + done.stderr
        output = ""
        with time_limit(self.timeout):
            for joiner, words in segments:
                # an and-or list as sh runs it: a skipped command leaves $? as it was
                if (joiner == "&&" and self.last != 0) or (joiner == "||" and self.last == 0):
                    continue
                self.last, out = self.simple(words)
                output += out
        return self.last, output

    def plain(self, line: str) -> list[tuple[str, list[str]]] | None:
        """The line as (joiner, words) segments if this process can run it, else None."""
        substituted = self.substituted(line)
        if substituted is None:
            return None
        line = substituted
        if any(c in line.replace("||", "") for c in "|<`") or "$(" in line or "${" in line:
            return None
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        segments: list[tuple[str, list[str]]] = []
        joiner = ""
        words: list[str] = []
        for token in lexer:
            if token in ("&&", ";", "||"):
                segments.append((joiner, words))
                joiner, words = token, []
            elif set(token) <= set("();<>|&") and token != ">":
                return None
            else:
                words.append(token)
        segments.append((joiner, words))
        for _, words in segments:
            program = next((w for w in words if "=" not in w), "")
            if program not in ("ledger", ".venv/bin/ledger", "export", "cd", "echo", ".", "test", "true"):
                return None
            if program in ("echo", "test", "true") and (program != words[0] or ">" in words):
                return None
            if program == "test" and (len(words) != 4 or words[1] != "$?" or words[2] not in ("=", "-eq")):
                return None
            if any("$" in w.replace("$?", "") for w in words):
                return None
        return segments

    def substituted(self, line: str) -> str | None:
        """The line with each ``$(cat FILE)`` replaced by FILE's text as ``bash`` would put it
        (trailing newlines dropped; one word inside double quotes, else split at blanks); None
        if such a FILE is not there (``bash`` then runs the line and says so)."""
        missing = False

        def text(match: re.Match[str]) -> str:
            nonlocal missing
            path = self.cwd / (match.group(1) or match.group(2))
            if not path.is_file():
                missing = True
                return match.group(0)
            body = path.read_text(encoding="utf-8").rstrip("\n")
            return shlex.quote(body) if match.group(1) else " ".join(map(shlex.quote, body.split()))

        line = CAT.sub(text, line)
        return None if missing else line

    def simple(self, words: list[str]) -> tuple[int, str]:
        if words[0] == "export":
            self.exports.update(w.split("=", 1) for w in words[1:])  # type: ignore[misc]
            return 0, ""
        if words[0] == "cd":
            self.cwd = (self.cwd / words[1]).resolve()
            return (0, "") if self.cwd.is_dir() else (1, f"cd: {words[1]}: no such folder\n")
        if words[0] == "echo":
            return 0, " ".join(w.replace("$?", str(self.last)) for w in words[1:]) + "\n"
        if words[0] == "true":
            return 0, ""
        if words[0] == "test":  # test $? = N (or -eq)
            return (0 if str(self.last) == words[3] else 1), ""
        if words[0] == ".":
            return 0, ""  # the scratch .venv/bin is on PATH already
        assigned = {}
        while "=" in words[0]:
            key, value = words.pop(0).split("=", 1)
            assigned[key] = value
        target = None
        if ">" in words:
            at = words.index(">")
            target, words = self.cwd / words[at + 1], words[:at] + words[at + 2 :]
        args = [a for w in words[1:] for a in self.expand(w)]
        env: dict[str, str | None] = {k: None for k in os.environ if k.startswith("LEDGER_")}
        env.update(self.exports, **assigned)
        env.setdefault("COLUMNS", "200")
        here = Path.cwd()
        os.chdir(self.cwd)
        try:
            result = runner.invoke(app, args, env=env)
        finally:
            os.chdir(here)
        if result.exception and not isinstance(result.exception, SystemExit):
            raise result.exception
        if target is not None:
            target.write_text(result.stdout, encoding="utf-8")
            return result.exit_code, result.stderr
        return result.exit_code, result.output

    def expand(self, word: str) -> list[str]:
        if not any(c in word for c in "*?["):
            return [word]
        found = sorted(glob.glob(word, root_dir=self.cwd))
        return found or [word]


def run_document(doc: str, scratch: Path, with_slow: bool) -> None:
    shell = Shell(scratch)
    failures = []
    for block in blocks_of(doc):
        if block.mark == "not run" or (block.mark == "slow" and not with_slow):
            continue
        for command in block.commands:
            where = f"{doc}:{block.line}: $ {command.line}"
            try:
                code, output = shell.run(command.line)
            except CommandTimeout as exc:
                pytest.fail(f"{where}\n  {exc} (the block at line {block.line} of {doc}; LEDGER_DOC_TIMEOUT)")
            if code != command.exit_code:
                failures.append(f"{where}\n  exit {code}, the document says {command.exit_code}\n{output}")
            elif command.output is not None and not matches(command.output, output.rstrip("\n").splitlines()):
                failures.append(
                    f"{where}\n  printed:\n{output}\n  the document shows:\n" + "\n".join(command.output)
                )
    assert not failures, "\n\n".join(failures)


def _params() -> list[object]:
    params: list[object] = []
    for doc in documents():
        params.append(pytest.param(doc, False, id=doc))
        if any(b.mark == "slow" for b in blocks_of(doc)):
            params.append(pytest.param(doc, True, id=f"{doc}+slow", marks=slow))
    return params


@pytest.mark.parametrize(("doc", "with_slow"), _params())
def test_document_examples_run_as_shown(doc: str, with_slow: bool, tmp_path: Path) -> None:
    run_document(doc, tmp_path, with_slow)


def test_skipped_and_slow_blocks_are_the_known_lists() -> None:
    for doc in documents():
        skipped = [b.first for b in blocks_of(doc) if b.mark == "not run"]
        assert skipped == NOT_RUN.get(doc, []), (doc, skipped)
        slow_ones = [b.first for b in blocks_of(doc) if b.mark == "slow"]
        assert slow_ones == SLOW.get(doc, []), (doc, slow_ones)
        assert all(b.why for b in blocks_of(doc) if b.mark), doc


def test_the_parser_reads_exit_codes_outputs_and_marks(tmp_path: Path) -> None:
    doc = tmp_path / "x.md"
    doc.write_text(
        "<!-- not run: needs a host -->\n```sh\nledger x\n```\n<!-- slow: long -->\n\n"
        "```console\n$ ledger y \\\n    --z\nline\n...\n$ echo $?\n1\n```\n"
        "```sh\nledger a   # exit 1\n```\n",
        encoding="utf-8",
    )
    found = blocks_of(os.path.relpath(doc, ROOT))
    assert [(b.mark, b.why) for b in found] == [("not run", "needs a host"), ("slow", "long"), (None, "")]
    y, echo = found[1].commands
    assert (y.line, y.exit_code, y.output) == ("ledger y      --z", 1, ["line", "..."])
    assert echo.output == ["1"]
    assert found[2].commands[0].exit_code == 1
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert not matches(["a", "...", "d"], ["a", "b"])
    assert not matches(["a"], ["a", "b"])


def test_the_shell_runs_ledger_in_process_and_the_rest_in_bash(tmp_path: Path) -> None:
    shell = Shell(tmp_path)
    assert shell.plain("ledger ingest tests/examples/rl.jsonl") is not None
    assert shell.plain("ledger seal --out cp-$(date +%s).json") is None
    assert shell.run("ledger ingest tests/examples/rl.jsonl")[0] == 0
    assert shell.run("ledger export --to out/ --until 2026-11-20")[0] == 2  # a wrong option
    code, out = shell.run("ledger verify --json > v.json && echo $?")
    assert (code, out) == (0, "0\n")
    assert '"integrity"' in (tmp_path / "v.json").read_text(encoding="utf-8")
    assert shell.run("ledger --version | grep -c .")[0] == 0  # bash, through the .venv shim
    assert shell.run("nosuchcommand-xyz")[0] == 127
    # an and-or list, as sh runs it, in this process
    assert shell.plain("ledger verify --game XX || test $? = 2") is not None
    assert shell.run("ledger verify --game XX || test $? = 2")[0] == 0
    assert shell.run("ledger verify --game XX || test $? = 1")[0] == 1
    assert shell.run('ledger verify --game XX || echo "exit $? (2: usage)"')[1].endswith(
        "exit 2 (2: usage)\n"
    )
    code, out = shell.run("ledger verify --game XX && ledger nosuch; echo $?")
    assert code == 0 and out.endswith("\n2\n") and "nosuch" not in out  # skipped, $? kept
    assert shell.run("ledger verify --json > v2.json || true")[0] == 0
    assert shell.plain("echo $HOME || true") is None and shell.plain("ledger verify | cat") is None
    # the text of a file that is there, as bash substitutes it
    assert shell.plain('ledger seal --witness "$(cat w.url)"') is None  # no such file yet
    (tmp_path / "w.url").write_text("http://h:1/a b\n\n", encoding="utf-8")
    words = ["ledger", "seal", "--witness", "http://h:1/a b", "--witness", "http://h:1/a", "b"]
    assert shell.plain('ledger seal --witness "$(cat w.url)" --witness $(cat w.url)') == [("", words)]
    assert shell.plain("ledger seal --out $(cat w.url).json") is None  # part of a word: bash
    assert shell.plain('ledger seal --note "at $(cat w.url)"') is None
    assert shell.plain("kill $(cat w.url)") is None  # not a command this process runs


def test_a_command_that_outlasts_the_timeout_fails_naming_the_document_and_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    line = "sleep 3"
    doc = tmp_path / "slow.md"
    doc.write_text(f"Text.\n\n```sh\nledger --version\n{line}\n```\n", encoding="utf-8")
    name = os.path.relpath(doc, ROOT)
    monkeypatch.setattr(Shell, "__init__", _quick_shell)
    with pytest.raises(pytest.fail.Exception) as failed:
        run_document(name, tmp_path / "scratch", with_slow=False)
    message = str(failed.value)
    assert f"{name}:3: $ {line}" in message and "took more than 0.5 s" in message


def test_an_in_process_command_is_stopped_by_the_time_limit() -> None:
    with pytest.raises(CommandTimeout), time_limit(0.2):
        while True:
            pass


def _quick_shell(self: Shell, scratch: Path, timeout: float = TIMEOUT) -> None:
    """A shell with a 0.5 s limit and no copied examples (the timeout test needs none)."""
    scratch.mkdir(parents=True, exist_ok=True)
    self.home = self.cwd = scratch
    self.timeout = 0.5
    self.exports, self.last = {}, 0
    self.bin = scratch
