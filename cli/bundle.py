"""``ledger export-round --bundle`` and ``ledger check-bundle``: offline proof of one round."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from cli.context import DbOption, open_app
from cli.contract import EXIT_INTEGRITY, fail
from cli.quorum import QuorumOption, WitnessKeyOption, asked, bundle_notes, notes_for, require
from cli.render import err, finding_lines, print_json
from ledger.domain.errors import BundleError, SealError
from ledger.proof.bundle import BundleCheck, bundle_items, check_bundle, export_round, parse_bundle
from ledger.proof.seal import Checkpoint, key_id, load_public_key, read_checkpoint
from ledger.witness.quorum import Quorum, QuorumRefused, require_witnessed


def export_round_command(
    target: Annotated[str, typer.Argument(metavar="TABLE/ROUND", help="The round, e.g. RL-01/000417.")],
    bundle: Annotated[str, typer.Option("--bundle", help="Where to write the proof bundle (JSON).")],
    db: DbOption = None,
    checkpoint: Annotated[
        str | None,
        typer.Option(
            help="Prove against this checkpoint (default: the store's newest link; the bundle then "
            "checks against any checkpoint sealed at or before it that covers the round)."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    merkle: Annotated[
        bool,
        typer.Option(
            "--merkle",
            help="Carry the Merkle inclusion proof of the round's last row to the "
            "checkpoint note of that seal (default: the newest) instead of the "
            "chain links: a few kilobytes however far the checkpoint is.",
        ),
    ] = False,
) -> None:
    """Write one round's stored events and the chain links that tie them to a checkpoint.

    Exit code 0: written. 2: no such round, or the store does not hold the checkpoint's head.
    """
    table, sep, round = target.partition("/")
    if not sep or not table or not round:
        fail("give the round as TABLE/ROUND")
    cp = _checkpoint(checkpoint) if checkpoint else None
    app = open_app(db)
    try:
        obj = export_round(app, table, round, cp, merkle=merkle)
    except BundleError as exc:
        fail(f"{exc}")
    finally:
        app.close()
    Path(bundle).write_text(json.dumps(obj, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    if merkle:
        proof = obj["merkle"]
        state = obj.get("state")
        typer.echo(
            f"wrote {bundle}: {len(bundle_items(obj))} events of {table}/{round}, Merkle proof "
            f"of leaf {proof['index']} in the tree of {proof['size']} rows "
            f"({len(proof['proof'])} hashes)"
            + (
                f"; the state it depends on ({', '.join(state['keys'])}) with "
                f"{len(state['rounds'])} other rounds since "
                + ("the log began" if state["before"] is None else "the note before it")
                if state
                else ""
            )
            + f"; {Path(bundle).stat().st_size} bytes"
        )
        return
    links = obj["links"]["items"]
    if as_json:
        print_json(
            {
                "bundle": bundle,
                "table": table,
                "round": round,
                "events": len(obj["events"]),
                "first_link": links[0]["version"],
                "last_link": links[-1]["version"],
            }
        )
        return
    typer.echo(
        f"wrote {bundle}: {len(obj['events'])} events of {table}/{round}, chain links "
        f"{links[0]['version']}-{links[-1]['version']}"
    )


export_round_command.__name__ = "export_round"


def check_bundle_command(
    bundle: Annotated[str, typer.Argument(metavar="FILE", help="A bundle from `ledger export-round`.")],
    checkpoint: Annotated[str, typer.Option(help="The signed checkpoint to prove against.")],
    public_key: Annotated[
        str | None,
        typer.Option(
            help="The sealer's public key (PEM). Without it, the key inside the checkpoint is used: "
            "that proves the files agree, not who sealed them."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    witness_key: WitnessKeyOption = None,
    quorum: QuorumOption = None,
) -> None:
    """Prove a round's events against a signed checkpoint, without any database.

    A bundle of `export-round --merkle` is also judged with its game's rules (3CB, SP9, STUD:
    from the part of the signed state it carries) and its findings printed as `ledger verify`
    gives them. Exit code 0: proven (and no error finding). 1: proven, with error findings.
    2: unreadable file. 3: the proof fails (changed events or state, wrong key, a bundle that
    does not reach the checkpoint, a round missing from the state part; with --witness-key, a
    checkpoint note, or the earlier note of the state part, without --quorum valid
    cosignatures by those witnesses).
    """
    witnesses = asked(witness_key, quorum)
    cp = _checkpoint(checkpoint)
    try:
        obj = parse_bundle(Path(bundle).read_bytes())
    except OSError as exc:
        fail(f"cannot read {bundle}: {exc.strerror or exc}")
    except BundleError as exc:
        fail(f"{exc}")
    try:
        key = cp.check_signature(load_public_key(public_key) if public_key else None)
    except SealError as exc:
        if as_json:
            print_json({"proof": "broken", "problems": [str(exc)]})
        else:
            err.print(f"proof broken: {exc}")
        raise typer.Exit(code=3) from None
    cosigners = require(
        witnesses, cp, key, notes_for(None, cp, checkpoint) + bundle_notes(obj), f"checkpoint {checkpoint}"
    )
    _require_earlier(witnesses, key, obj)
    result = check_bundle(obj, cp)
    if as_json:
        print_json(
            {
                **result.to_json(),
                "key_id": key_id(key),
                "checkpoint_links": cp.position.links,
                "public_key_given": public_key is not None,
            }
        )
    elif result.ok:
        typer.echo(
            f"proof ok: {result.table}/{result.round}, {result.events} events"
            f"{'' if result.closed else ' (round not closed)'}, in the store at link "
            f"{cp.position.links} sealed {cp.sealed_at} by key {key_id(key)}"
            f"{'' if public_key else ' (key taken from the checkpoint itself)'}"
            + (f"; checkpoint note cosigned by {', '.join(cosigners)}" if cosigners else "")
        )
        _print_judgement(result)
    else:
        for problem in result.problems:
            typer.echo(f"proof broken: {problem}")
    raise typer.Exit(code=3 if not result.ok else 1 if result.errors else 0)


def _require_earlier(witnesses: Quorum | None, key: Ed25519PublicKey, obj: dict[str, Any]) -> None:
    """With witness keys, the earlier note of a bundle's state part needs the quorum too: else
    the operator alone vouches for the state the round is judged from (exit 3)."""
    state = obj.get("state")
    before = state.get("before") if isinstance(state, dict) else None
    if witnesses is None or not isinstance(before, dict):
        return
    try:
        require_witnessed(str(before.get("note")), key, witnesses)
    except QuorumRefused as exc:
        fail(f"the state part's earlier note: {exc}", EXIT_INTEGRITY, prefix="integrity broken")


def _print_judgement(result: BundleCheck) -> None:
    if result.judged is None:
        return
    if not result.judged:
        typer.echo("not judged: the round is not closed, or its game needs rounds a bundle does not carry")
        return
    for f in result.findings:
        for line in finding_lines(f):
            typer.echo(line)
    state = (
        f" from the signed state of {', '.join(result.state_keys)} ({result.replayed} rounds replayed)"
        if result.state_keys
        else ""
    )
    errors = len(result.errors)
    typer.echo(
        f"judged{state}: {len(result.findings)} findings" + (f", {errors} of them errors" if errors else "")
    )


check_bundle_command.__name__ = "check_bundle"


def _checkpoint(path: str) -> Checkpoint:
    try:
        return read_checkpoint(path)
    except SealError as exc:
        fail(f"{exc}")


ORDER = 45
COMMANDS = [export_round_command, check_bundle_command]
