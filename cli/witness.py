"""``ledger witness``: the regulator's witness (docs/WITNESS.md).

``keygen`` makes its key, ``serve`` answers C2SP ``tlog-witness`` requests over HTTP, ``cosign``
answers one request from a file, for a witness with no network (an air-gapped regulator).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Annotated

import typer

from cli.contract import EXIT_FINDINGS, EXIT_INTEGRITY, EXIT_USAGE, fail, print_json
from ledger.proof.note import Verifier
from ledger.witness.core import Witness
from ledger.witness.keys import (
    WitnessKey,
    WitnessKeyError,
    load_signing_key,
    parse_log_option,
    write_key_files,
)
from ledger.witness.protocol import (
    BAD_REQUEST,
    CONFLICT,
    FORBIDDEN,
    NOT_FOUND,
    OK,
    TOO_LARGE,
    UNPROCESSABLE,
    Answer,
)
from ledger.witness.server import serve as serve_http
from ledger.witness.state import StateError, WitnessState, write_atomically

witness = typer.Typer(
    name="witness",
    no_args_is_help=True,
    help="The regulator's witness: cosigns a log's checkpoints only when they "
    "extend the last one it cosigned (docs/WITNESS.md).",
)

KeyOption = Annotated[
    str, typer.Option("--key", metavar="FILE", help="The witness's private key (ledger witness keygen).")
]
LogOption = Annotated[
    list[str],
    typer.Option(
        "--log",
        metavar="ORIGIN=OPERATOR.pub",
        help="A log to follow: its origin and its operator's public key (repeatable).",
    ),
]
StateOption = Annotated[
    str,
    typer.Option(
        "--state", metavar="DIR", help="The state directory: the latest checkpoint cosigned per log."
    ),
]
InitOption = Annotated[
    bool,
    typer.Option(
        "--init",
        help="Create a new, empty state in DIR (a new or empty directory); refused over an existing one.",
    ),
]
NameOption = Annotated[
    str | None,
    typer.Option(
        "--name",
        help="The witness's name in its cosignatures (default: from KEY.vkey, else derived from the key).",
    ),
]

EXIT_OF_STATUS = {
    OK: 0,
    CONFLICT: EXIT_FINDINGS,
    BAD_REQUEST: EXIT_USAGE,
    NOT_FOUND: EXIT_USAGE,
    TOO_LARGE: EXIT_USAGE,
    FORBIDDEN: EXIT_INTEGRITY,
    UNPROCESSABLE: EXIT_INTEGRITY,
}


@witness.command("keygen")
def keygen(
    out: Annotated[
        str,
        typer.Option(
            "--out",
            metavar="FILE",
            help="The private key to write (PEM, mode 0600); also FILE.pub (PEM) and FILE.vkey.",
        ),
    ],
    name: Annotated[
        str | None,
        typer.Option(help="The witness's name (no spaces, no '+'; default: derived from the key)."),
    ] = None,
    force: Annotated[bool, typer.Option(help="Overwrite existing files.")] = False,
) -> None:
    """Make a witness key pair: FILE (private), FILE.pub and FILE.vkey (give these to auditors)."""
    try:
        key = write_key_files(out, name, force=force)
    except WitnessKeyError as exc:
        fail(str(exc))
    typer.echo(
        f"wrote {out} (private, keep it on the witness), {out}.pub and {out}.vkey "
        f"(public); witness {key.vkey()}"
    )


def _open(
    key: str, logs: list[str], state: str, init: bool, name: str | None
) -> tuple[WitnessKey, dict[str, Verifier], WitnessState]:
    try:
        signing = load_signing_key(key, name)
        followed = dict(parse_log_option(value) for value in logs)
    except WitnessKeyError as exc:
        fail(str(exc))
    if not followed:
        fail("give at least one --log ORIGIN=OPERATOR.pub")
    try:
        opened = WitnessState(state, init=init, witness=signing.vkey())
    except StateError as exc:
        fail(str(exc))
    return signing, followed, opened


def _listen(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        fail(f"--listen {value!r}: expected HOST:PORT (PORT 0 picks a free one)")
    return host.strip("[]"), int(port)


@witness.command("serve")
def serve(
    key: KeyOption,
    log: LogOption,
    state: StateOption,
    listen: Annotated[
        str, typer.Option(metavar="HOST:PORT", help="Where to listen (port 0: a free port, printed).")
    ] = "127.0.0.1:7380",
    init: InitOption = False,
    name: NameOption = None,
) -> None:
    """Serve C2SP tlog-witness: POST /add-checkpoint answers 200 with the cosignature, 400
    malformed, 403 bad operator signature, 404 unknown log, 409 stale size (text/x.tlog.size),
    413 too large, 422 inconsistent proof. Prints the URL it listens on; stops on SIGINT/SIGTERM.
    """
    host, port = _listen(listen)
    signing, followed, opened = _open(key, log, state, init, name)
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(message)s")
    witness_ = Witness(signing, followed, opened)
    try:
        sizes = witness_.sizes()
    except StateError as exc:
        opened.close()
        fail(str(exc))

    def ready(addresses: list[str]) -> None:
        logs = ", ".join(f"{origin} at size {size}" for origin, size in sizes.items())
        typer.echo(f"witness {signing.name} listening on {' '.join(addresses)} (logs: {logs})")
        sys.stdout.flush()

    try:
        serve_http(witness_, host, port, ready)
    except OSError as exc:
        fail(f"cannot listen on {listen}: {exc.strerror or exc}")
    finally:
        opened.close()


def _response_path(request: str) -> str:
    return request.removesuffix(".request") + ".response"


@witness.command("cosign")
def cosign(
    key: KeyOption,
    log: LogOption,
    state: StateOption,
    in_: Annotated[
        str,
        typer.Option(
            "--in",
            metavar="PATH",
            help="The request file (an "
            "add-checkpoint body, as `seal --witness DIR` writes it), "
            "or a directory: every *.request in it not yet answered.",
        ),
    ],
    out: Annotated[
        str | None,
        typer.Option(
            metavar="FILE",
            help="Where to write the answer "
            "(default: the request's name, .request -> "
            ".response; not with a directory).",
        ),
    ] = None,
    init: InitOption = False,
    name: NameOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Answer witness requests offline, file in and file out, with the same checks as serve.

    Exit code 0: cosigned (the answer holds the cosignature line). 1: a request's old size is
    not this witness's (the answer holds the witness's size; the log asks again from it). 2: a
    malformed request or a log this witness does not follow. 3: refused: not signed by the
    operator, or not consistent with what this witness cosigned. With a directory, the highest.
    """
    requests = _requests(in_, out)
    signing, followed, opened = _open(key, log, state, init, name)
    results: list[tuple[str, str, Answer]] = []
    try:
        witness_ = Witness(signing, followed, opened)
        for request in requests:
            target = out if out is not None else _response_path(request)
            results.append((request, target, _answer(witness_, request, target)))
    except StateError as exc:
        fail(str(exc))
    finally:
        opened.close()
    raise typer.Exit(_report(results, as_json))


def _requests(in_: str, out: str | None) -> list[str]:
    folder = Path(in_)
    if not folder.is_dir():
        return [in_]
    if out is not None:
        fail("--out names one answer: not with a directory of requests")
    return [str(p) for p in sorted(folder.glob("*.request")) if not Path(_response_path(str(p))).exists()]


def _answer(witness_: Witness, request: str, target: str) -> Answer:
    try:
        body = Path(request).read_bytes()
    except OSError as exc:
        fail(f"cannot read the request {request}: {exc.strerror or exc}")
    answer = witness_.add_checkpoint(body)
    text = answer.body if answer.status in (OK, CONFLICT) else f"{answer.status} {answer.body}"
    try:
        write_atomically(Path(target), text.encode("utf-8"))
    except OSError as exc:
        fail(f"cannot write the answer {target}: {exc.strerror or exc}")
    return answer


def _report(results: list[tuple[str, str, Answer]], as_json: bool) -> int:
    worst = 0
    for request, target, answer in results:
        code = EXIT_OF_STATUS.get(answer.status, EXIT_USAGE)
        worst = max(worst, code)
        if answer.status == OK:
            message = f"{request}: cosigned -> {target}"
        elif answer.status == CONFLICT:
            message = (
                f"{request}: this witness cosigned size {answer.body.strip()} last, not "
                f"the request's old size -> {target} (the log asks again from it)"
            )
        else:
            prefix = "integrity broken" if code == EXIT_INTEGRITY else "error"
            sys.stderr.write(
                f"{prefix}: {request}: refused ({answer.status}): {answer.body.strip()} -> {target}\n"
            )
            continue
        if not as_json:
            typer.echo(message)
    if as_json:
        print_json(
            {
                "answers": [
                    {"request": request, "status": answer.status, "answer": target, "body": answer.body}
                    for request, target, answer in results
                ]
            }
        )
    elif not results:
        typer.echo("no request waiting")
    return worst


ORDER = 45
COMMANDS = [witness]
