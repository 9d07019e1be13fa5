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
    SEALER_ROLE,
    Roles,
    append_only_sql,
    create_roles,
    events_table,
    install_append_only,
    roles_sql,
)
from ledger.sql import dialect_of
from ledger.store import LOCK_FUNCTION
from projections.updater import ViewStore
from projections.view_store import view_tables_sql


def init(
    db: DbOption = None,
    roles: Annotated[bool, typer.Option(
        help="PostgreSQL: also create an ingest role (SELECT; INSERT on the event columns "
             "only; no UPDATE or DELETE; the insert lock through the SECURITY DEFINER function "
             f"{LOCK_FUNCTION}(); column-level writes to the views), a sealer role (SELECT; "
             "INSERT on the checkpoints) and an auditor role (SELECT only).")
    ] = False,
    ingest_role: Annotated[str, typer.Option(help="Name of the ingest role.")] = INGEST_ROLE,
    auditor_role: Annotated[str, typer.Option(help="Name of the auditor role.")] = AUDITOR_ROLE,
    sealer_role: Annotated[str, typer.Option(help="Name of the sealer role (`ledger seal`).")
                           ] = SEALER_ROLE,
    role_prefix: Annotated[str | None, typer.Option(
        metavar="PREFIX", help="Name the roles PREFIX_ingest, PREFIX_auditor and PREFIX_sealer "
                               "(roles are global to the server: one set per store or test).")
    ] = None,
    password: Annotated[str | None, typer.Option(
        envvar="LEDGER_ROLE_PASSWORD", help="Login password for the roles (default: none, "
        "for peer/cert authentication).")] = None,
    print_sql: Annotated[bool, typer.Option(help="Only print the SQL, for the database owner "
                                            "to review and run: the append-only triggers, the "
                                            "view and checkpoints tables, and with --roles the "
                                            "roles and grants. Nothing else is changed (the "
                                            "events table is still created).")] = False,
) -> None:
    """Create the tables, install the append-only triggers and optionally the roles.

    The tables: the events, the views and the checkpoints (`ledger seal`; append-only too).

    Run it once as the database owner, before any writer. Then `ingest` and `projections
    update` run as the ingest role, `seal` as the sealer role (or the owner) and every read
    command as the auditor role, e.g.
    --db postgresql://ledger_auditor@HOST/DB?schema=NAME. Exit code 0: done. 2: usage error.
    """
    names = (Roles.prefixed(role_prefix) if role_prefix
             else Roles(ingest_role, auditor_role, sealer_role))
    if roles and len(set(names.all())) != 3:
        fail(f"the ingest, auditor and sealer roles must be three different names, not "
             f"{', '.join(names.all())}")
    app = open_app(db, create=True)
    try:
        where = events_table(app)
        if roles and where.backend != "postgres":
            fail("--roles needs PostgreSQL (SQLite has no roles: protect the file)")
        if print_sql:
            dialect = dialect_of(app)
            statements = (append_only_sql(where) + view_tables_sql(dialect)
                          + checkpoints_sql(dialect))
            if roles:
                statements += roles_sql(where, names, "***" if password else None)
            for statement in statements:
                typer.echo(statement + ";")
            return
        install_append_only(app)
        ViewStore(app).close()  # the view tables exist before any grant on them
        CheckpointStore(app).close()  # so does the checkpoints table
        if roles:
            create_roles(app, names, password)
    except typer.Exit:
        raise
    except Exception as exc:
        fail(f"{exc}")
    finally:
        app.close()
    typer.echo(f"initialised {where.qualified()} ({where.backend}): UPDATE and DELETE of stored "
               "events are refused" + (f"; roles {names.ingest} (ingest), {names.sealer} "
                                       f"(sealer) and {names.auditor} (auditor) granted"
                                       if roles else ""))

ORDER = 5
COMMANDS = [init]
