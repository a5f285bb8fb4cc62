"""``guandan admin``: give or take the admin role of the web server's moderation pages (issue 25 item 8).

``guandan admin grant NAME`` / ``guandan admin revoke NAME`` with ``--db`` as ``guandan serve``; ``guandan admin
list`` names the admins. Every change is written to the moderation log (``moderation_log``, shown on the
admin page) as done from the command line. Rules: :mod:`guandan.server.moderation`.
"""

from __future__ import annotations

import typer

from .app import app
from .output import error_text

admin_app = typer.Typer(
    help="Moderation admins of the web server: `grant NAME`, `revoke NAME`, `list` (docs/phrases-and-moderation.md).",
    no_args_is_help=True,
)
app.add_typer(admin_app, name="admin")

DB_HELP = ("Database: a SQLite file path (guandan.db) or URL, or a PostgreSQL URL (postgresql://user@127.0.0.1:5432/db); "
           "default: $GUANDAN_DATABASE_URL, else sqlite:///./guandan.db (the same as guandan serve).")


def _session(db: str | None):  # type: ignore[no-untyped-def]
    """A session on the migrated database of ``--db`` (exits 2 with one line on a bad value)."""
    from rich.console import Console

    from guandan.server.db import database_url, make_engine, make_session_factory, migrate
    from guandan.server.settings import Settings

    try:
        url = database_url(db if db is not None else Settings().db_url)
    except ValueError as e:
        Console(stderr=True, soft_wrap=True).print(error_text(str(e)))
        raise typer.Exit(2) from None
    migrate(url)  # a no-op at the newest schema
    return make_session_factory(make_engine(url))()


def _set(name: str, on: bool, db: str | None, why: str) -> None:
    from rich.console import Console

    from guandan.server import moderation_store
    from guandan.server.models import utcnow

    with _session(db) as session:
        try:
            user, changed = moderation_store.set_admin(session, name, on, utcnow(), why)
        except (LookupError, ValueError) as e:
            Console(stderr=True, soft_wrap=True).print(error_text(str(e).strip('"')))
            raise typer.Exit(1) from None
        session.commit()
    what = "is now an admin" if on else "is no longer an admin"
    if not changed:
        what = "was an admin already" if on else "was not an admin"
    typer.echo(f"{user.name} {what}")


@admin_app.command("grant")
def grant(name: str = typer.Argument(..., help="The account's name (as registered; case ignored)."),
          db: str = typer.Option(None, "--db", help=DB_HELP),
          why: str = typer.Option("", "--why", help="Logged with the change (default: none; the admin page then says \"set from the command line\").")) -> None:
    """Make the account NAME an admin: it sees reports and can mute phrases or suspend accounts."""
    _set(name, True, db, why)


@admin_app.command("revoke")
def revoke(name: str = typer.Argument(..., help="The account's name."),
           db: str = typer.Option(None, "--db", help=DB_HELP),
           why: str = typer.Option("", "--why", help="Logged with the change.")) -> None:
    """Take the admin role from the account NAME."""
    _set(name, False, db, why)


@admin_app.command("list")
def list_admins(db: str = typer.Option(None, "--db", help=DB_HELP)) -> None:
    """Print the admins' names, one a line."""
    from sqlalchemy import select

    from guandan.server.models import AccountModeration, User

    with _session(db) as session:
        names = session.scalars(select(User.name).join(AccountModeration, AccountModeration.user_id == User.id)
                                .where(AccountModeration.is_admin.is_(True)).order_by(User.name)).all()
    for n in names:
        typer.echo(n)
