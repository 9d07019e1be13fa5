"""``ledger init``: create the store's tables and make stored events append-only."""

from __future__ import annotations

from typing import Annotated

import typer

from cli.context import DbOption, open_app
from cli.contract import fail
from ledger.checkpoints import CheckpointStore, checkpoints_sql
from ledger.db_admin import (
    AUDITOR_ROLE,
    INGEST_ROLE,
    append_only_sql,
    create_roles,
    events_table,
    install_append_only,
    roles_sql,
)
from ledger.merkle.heads import OriginError, set_origin
from ledger.merkle.log import MerkleLog
from ledger.merkle.storage import merkle_sql
from ledger.sql import dialect_of
from ledger.store import LOCK_FUNCTION
from projections.updater import ViewStore
from projections.view_store import view_tables_sql


def init(
    db: DbOption = None,
    roles: Annotated[bool, typer.Option(
        help="PostgreSQL: also create an ingest role (SELECT; INSERT on the event columns "
             "only; no UPDATE or DELETE; the insert lock through the SECURITY DEFINER function "
             f"{LOCK_FUNCTION}(); writes to the views) and an auditor role (SELECT).")
    ] = False,
    ingest_role: Annotated[str, typer.Option(help="Name of the ingest role.")] = INGEST_ROLE,
    auditor_role: Annotated[str, typer.Option(help="Name of the auditor role.")] = AUDITOR_ROLE,
    role_prefix: Annotated[str | None, typer.Option(
        metavar="PREFIX", help="Name the roles PREFIX_ingest and PREFIX_auditor (roles are "
                               "global to the server: one pair per store or test).")] = None,
    password: Annotated[str | None, typer.Option(
        envvar="LEDGER_ROLE_PASSWORD", help="Login password for both roles (default: none, "
        "for peer/cert authentication).")] = None,
    print_sql: Annotated[bool, typer.Option(help="Only print the SQL, for the database owner "
                                            "to review and run: the append-only triggers, the "
                                            "view and checkpoints tables, and with --roles the "
                                            "roles and grants. Nothing else is changed (the "
                                            "events table is still created).")] = False,
    origin: Annotated[str | None, typer.Option(
        metavar="NAME", help="The log's origin: the name on the first line of its checkpoint "
                             "notes, which witnesses know it by (e.g. casino.example/ledger/"
                             "floor-1; no spaces, no '+'). Set once; default: derived from the "
                             "store at the first `ledger seal`.")] = None,
) -> None:
    """Create the tables, install the append-only triggers and optionally the roles.

    The tables: the events, the views, the checkpoints (`ledger seal`; append-only too) and the
    Merkle log (its tree, origin, checkpoint notes and cosignatures; append-only too).

    Run it once as the database owner, before any writer. Then `ingest` and `projections
    update` run as the ingest role and every read command as the auditor role, e.g.
    --db postgresql://ledger_auditor@HOST/DB?schema=NAME. Exit code 0: done. 2: usage error.
    """
    if role_prefix:
        ingest_role, auditor_role = f"{role_prefix}_ingest", f"{role_prefix}_auditor"
    app = open_app(db, create=True)
    try:
        where = events_table(app)
        if roles and where.backend != "postgres":
            fail("--roles needs PostgreSQL (SQLite has no roles: protect the file)")
        if print_sql:
            dialect = dialect_of(app)
            statements = (append_only_sql(where) + view_tables_sql(dialect)
                          + checkpoints_sql(dialect) + merkle_sql(dialect))
            if roles:
                statements += roles_sql(where, ingest_role, auditor_role,
                                        "***" if password else None)
            for statement in statements:
                typer.echo(statement + ";")
            return
        install_append_only(app)
        ViewStore(app).close()  # the view tables exist before any grant on them
        CheckpointStore(app).close()  # so does the checkpoints table
        MerkleLog(app).close()  # and the Merkle log's tables
        if origin is not None:
            set_origin(app, origin)
        if roles:
            create_roles(app, ingest_role, auditor_role, password)
    except typer.Exit:
        raise
    except OriginError as exc:
        fail(f"{exc}")
    except Exception as exc:
        fail(f"{exc}")
    finally:
        app.close()
    typer.echo(f"initialised {where.qualified()} ({where.backend}): UPDATE and DELETE of stored "
               "events are refused" + (f"; roles {ingest_role} (ingest) and {auditor_role} "
                                       "(auditor) granted" if roles else ""))

ORDER = 5
COMMANDS = [init]
