"""``ledger init``: create the store's tables and make stored events append-only."""

from __future__ import annotations

from typing import Annotated

import typer

from cli.context import DbOption, open_app
from cli.contract import fail, print_json
from ledger.domain.errors import SealError
from ledger.merkle.heads import OriginError, set_origin
from ledger.merkle.log import MerkleLog
from ledger.merkle.storage import merkle_sql
from ledger.proof.checkpoints import (
    SEAL_KEY_TABLE,
    SEAL_PUBLIC_KEY_ENV,
    CheckpointStore,
    checkpoints_sql,
    name_sealing_key,
    seal_key_sql,
)
from ledger.proof.seal import key_id, load_public_key
from ledger.services.db_admin import (
    AUDITOR_ROLE,
    INGEST_ROLE,
    SEALER_ROLE,
    Roles,
    append_only_sql,
    create_roles,
    events_table,
    execute,
    install_append_only,
    roles_sql,
)
from ledger.storage.sql import dialect_of
from ledger.storage.sql import quote as _quote
from ledger.storage.store import LOCK_FUNCTION, LedgerApp
from projections.updater import ViewStore
from projections.view_store import view_tables_sql


def init(
    db: DbOption = None,
    roles: Annotated[
        bool,
        typer.Option(
            help="PostgreSQL: also create an ingest role (SELECT; INSERT on the event columns "
            "only; no UPDATE or DELETE; the insert lock through the SECURITY DEFINER function "
            f"{LOCK_FUNCTION}(); column-level writes to the views), a sealer role (SELECT; "
            "INSERT on the checkpoints) and an auditor role (SELECT only)."
        ),
    ] = False,
    ingest_role: Annotated[str, typer.Option(help="Name of the ingest role.")] = INGEST_ROLE,
    auditor_role: Annotated[str, typer.Option(help="Name of the auditor role.")] = AUDITOR_ROLE,
    sealer_role: Annotated[str, typer.Option(help="Name of the sealer role (`ledger seal`).")] = SEALER_ROLE,
    role_prefix: Annotated[
        str | None,
        typer.Option(
            metavar="PREFIX",
            help="Name the roles PREFIX_ingest, PREFIX_auditor and PREFIX_sealer "
            "(roles are global to the server: one set per store or test).",
        ),
    ] = None,
    password: Annotated[
        str | None,
        typer.Option(
            envvar="LEDGER_ROLE_PASSWORD",
            help="Login password for the roles (default: none, for peer/cert authentication).",
        ),
    ] = None,
    print_sql: Annotated[
        bool,
        typer.Option(
            help="Only print the SQL, for the database owner "
            "to review and run: the append-only triggers, the "
            "view and checkpoints tables, and with --roles the "
            "roles and grants. Nothing else is changed (the "
            "events table is still created)."
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    seal_public_key: Annotated[
        str | None,
        typer.Option(
            "--seal-public-key",
            metavar="FILE",
            help="The sealing public key (ledger keygen's OUT.pub): recorded once in the store "
            f"(table {SEAL_KEY_TABLE}, which refuses a change), and every reader of a stored "
            f"checkpoint checks it with this key ({SEAL_PUBLIC_KEY_ENV}=FILE wins over it).",
        ),
    ] = None,
    origin: Annotated[
        str | None,
        typer.Option(
            metavar="NAME",
            help="The log's origin: the name on the first line of its checkpoint "
            "notes, which witnesses know it by (e.g. casino.example/ledger/"
            "floor-1; no spaces, no '+'). Set once; default: derived from the "
            "store at the first `ledger seal`.",
        ),
    ] = None,
) -> None:
    """Create the tables, install the append-only triggers and optionally the roles.

    The tables: the events, the views, the checkpoints (`ledger seal`; append-only too) and the
    Merkle log (its tree, origin, checkpoint notes and cosignatures; append-only too).

    With --seal-public-key, the key stored checkpoints are checked with is kept in the store:
    only the owner can write it (the roles read it), so it is as trustworthy as the owner.

    Run it once as the database owner, before any writer. Then `ingest` and `projections
    update` run as the ingest role, `seal` as the sealer role (or the owner) and every read
    command as the auditor role, e.g.
    --db postgresql://ledger_auditor@HOST/DB?schema=NAME. Exit code 0: done. 2: usage error.
    """
    names = Roles.prefixed(role_prefix) if role_prefix else Roles(ingest_role, auditor_role, sealer_role)
    if roles and len(set(names.all())) != 3:
        fail(
            f"the ingest, auditor and sealer roles must be three different names, not "
            f"{', '.join(names.all())}"
        )
    try:
        sealing = load_public_key(seal_public_key) if seal_public_key else None
    except SealError as exc:
        fail(str(exc))
    app = open_app(db, create=True)
    try:
        where = events_table(app)
        if roles and where.backend != "postgres":
            fail("--roles needs PostgreSQL (SQLite has no roles: protect the file)")
        if print_sql:
            dialect = dialect_of(app)
            statements = (
                append_only_sql(where)
                + view_tables_sql(dialect)
                + checkpoints_sql(dialect)
                + (seal_key_sql(dialect) if sealing else [])
                + merkle_sql(dialect)
            )
            if roles:
                statements += roles_sql(where, names, "***" if password else None)
            if as_json:
                print_json({"statements": [f"{s};" for s in statements]})
                return
            for statement in statements:
                typer.echo(statement + ";")
            return
        install_append_only(app)
        ViewStore(app).close()  # the view tables exist before any grant on them
        CheckpointStore(app).close()  # so does the checkpoints table
        if sealing is not None:
            name_sealing_key(app, sealing)
        MerkleLog(app).close()  # and the Merkle log's tables
        if origin is not None:
            set_origin(app, origin)
        if roles:
            create_roles(app, names, password)
            if sealing is not None:
                _grant_seal_key(app, names.all())
    except typer.Exit:
        raise
    except OriginError as exc:
        fail(f"{exc}")
    except Exception as exc:
        fail(f"{exc}")
    finally:
        app.close()
    if as_json:
        print_json(
            {
                "store": where.qualified(),
                "backend": where.backend,
                "append_only": True,
                "roles": {"ingest": names.ingest, "auditor": names.auditor, "sealer": names.sealer}
                if roles
                else None,
            }
        )
        return
    typer.echo(
        f"initialised {where.qualified()} ({where.backend}): UPDATE and DELETE of stored "
        "events are refused"
        + (
            f"; roles {names.ingest} (ingest), {names.sealer} (sealer) and {names.auditor} (auditor) granted"
            if roles
            else ""
        )
        + (f"; sealing public key {key_id(sealing)}" if sealing else "")
    )


def _grant_seal_key(app: LedgerApp, roles: tuple[str, ...]) -> None:
    """The roles read the sealing public key; neither may write it."""
    table = dialect_of(app).qualified(SEAL_KEY_TABLE)
    execute(
        app,
        [
            f"REVOKE ALL ON {table} FROM {', '.join(_quote(r) for r in roles)}",
            f"GRANT SELECT ON {table} TO {', '.join(_quote(r) for r in roles)}",
        ],
    )


ORDER = 5
COMMANDS = [init]
