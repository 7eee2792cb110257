"""Settings switch to PostgreSQL by URL; the DSN's password never reaches a message; bad
input and unreachable servers become engram errors."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from engram.config import load_settings
from engram.db.postgres import PgDatabase, database_identity, redact_dsn
from engram.engine import Engram
from engram.errors import ConfigError, StorageError, ValidationError

ENGRAM = [sys.executable, "-c", "from engram.interfaces.cli.app import main; main()"]


def test_database_url_switches_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_DATABASE_URL", "postgresql://u:pw@db.example:5432/engram")
    assert load_settings().backend == "postgres"
    monkeypatch.setenv("ENGRAM_DATABASE_URL", "sqlite:///x.db")  # refused: tests/unit/test_config.py
    with pytest.raises(ConfigError, match="database_url"):
        load_settings()


def test_postgres_backend_without_url_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="database_url"):
        Engram.from_settings(backend="postgres")


@pytest.mark.parametrize(
    ("dsn", "redacted"),
    [
        ("postgresql://bob:s3cret@host:5432/db", "postgresql://bob:***@host:5432/db"),
        ("postgresql://bob:s3cret@host/db?sslmode=require&password=s3cret", "postgresql://bob:***@host/db?sslmode=require&password=***"),
        ("host=h user=bob password=s3cret dbname=db", "host=h user=bob password=*** dbname=db"),
        ("host=h password='with space' dbname=db", "host=h password=*** dbname=db"),
        ("postgresql://bob@host/db", "postgresql://bob@host/db"),
    ],
)
def test_redact_dsn(dsn: str, redacted: str) -> None:
    assert redact_dsn(dsn) == redacted
    assert "s3cret" not in redact_dsn(dsn)


@pytest.mark.parametrize(
    ("dsn", "redacted"),
    [
        # libpq reads a backslash as escaping the next character of an unquoted value: "s3c ret".
        ("host=h password=s3c\\ ret dbname=db", "host=h password=*** dbname=db"),
        # libpq takes "?" and "#" into a password (it ends at the "@" before any "/"), and a "/" in
        # one ends the host instead; any "@" of a password unescaped: all of it hidden either way.
        ("postgresql://bob:s3c?ret@host/db", "postgresql://bob:***@host/db"),
        ("postgresql://bob:s3c#ret@host/db", "postgresql://bob:***@host/db"),
        ("postgresql://bob:s3c/ret@host/db", "postgresql://bob:***@host/db"),
        ("postgresql://bob:s3c@ret@host/db", "postgresql://bob:***@host/db"),
        # Not a URL Python's urlsplit can read (it raised ValueError: "internal error"), kept as written.
        ("postgresql://bob:s3cret@[::1:1/db", "postgresql://bob:***@[::1:1/db"),
        # An empty host is kept ("postgresql:/db" named no host at all), and a query's spaces.
        ("postgresql:///db?host=h&password=s3c ret", "postgresql:///db?host=h&password=***"),
        ("postgresql://h:5432/db?user=bob@corp&options=-c x=1", "postgresql://h:5432/db?user=bob@corp&options=-c x=1"),
    ],
)
def test_redact_dsn_hides_every_password_libpq_may_read(dsn: str, redacted: str) -> None:
    assert redact_dsn(dsn) == redacted
    assert "s3c" not in redact_dsn(dsn) and "ret" not in redact_dsn(dsn)


@pytest.mark.parametrize("url", [
    "postgresql://bob:s3cret@[::1:1/db",  # psycopg's error quotes the whole URI
    "postgresql://bob:s3c ret@127.0.0.1:1/db",  # psycopg's error quotes the password
])
def test_a_url_libpq_cannot_read_is_named_as_database_url_without_its_password(tmp_path: Path, url: str) -> None:
    env = {**os.environ, "ENGRAM_HOME": str(tmp_path), "ENGRAM_DATABASE_URL": url}
    run = subprocess.run([*ENGRAM, "count"], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 1 and run.stdout == "", run.stderr
    assert run.stderr.startswith("error: database_url (from ENGRAM_DATABASE_URL): PostgreSQL "), run.stderr
    assert "postgresql://bob:***@" in run.stderr and "s3c" not in run.stderr and "internal error" not in run.stderr
    with pytest.raises(StorageError) as raised:
        PgDatabase.connect(url)
    assert "s3c" not in str(raised.value) and "***" in str(raised.value)


def test_an_at_sign_left_in_a_password_is_refused_naming_database_url(tmp_path: Path) -> None:
    # libpq ends the password at the first "@" and read the rest as the host: "failed to resolve
    # host 'ret@127.0.0.1'" showed the end of the password, and never said what was wrong.
    url = "postgresql://bob:s3c@ret@127.0.0.1:1/db"
    env = {**os.environ, "ENGRAM_HOME": str(tmp_path), "ENGRAM_DATABASE_URL": url}
    run = subprocess.run([*ENGRAM, "count"], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode != 0 and "database_url" in run.stderr and "%40" in run.stderr, run.stderr
    assert "s3c" not in run.stderr and "ret" not in run.stderr
    with pytest.raises(ConfigError, match="%40") as raised:
        PgDatabase.connect(url)
    assert "s3c" not in str(raised.value) and "ret" not in str(raised.value)
    # engram migrate --to names it so, without the hint for a SQLite file given there.
    del env["ENGRAM_DATABASE_URL"]
    run = subprocess.run([*ENGRAM, "migrate", "--to", url], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and run.stderr.startswith('error: --to: its user name or password holds an "@"'), run.stderr
    assert "copy back" not in run.stderr and "s3c" not in run.stderr and "ret" not in run.stderr


SAME_DATABASE = [
    "postgresql://bob:s3cret@db.example:5432/engram",
    "postgres://bob@db.example/engram",
    "postgresql://bob:other@db.example:5432/engram?sslmode=require&application_name=x&connect_timeout=5",
    "host=db.example user=bob password=s3cret dbname=engram",
    "host=db.example port=5432 user=bob dbname=engram sslmode=disable",
]
OTHER_DATABASES = [
    "postgresql://bob@db.example:5433/engram", "postgresql://bob@db.example/engram2",
    "postgresql://alice@db.example/engram", "postgresql://bob@other.example/engram",
    "postgresql://bob@db.example/engram/",  # libpq reads the database "engram/"
    "postgresql://bob@db.example/engram?options=-csearch_path%3Dother",
]


def test_database_identity_is_one_per_database_and_keeps_no_password() -> None:
    # Files kept for a PostgreSQL database (its maintenance schedule) are named after it: every
    # spelling of one database must give one name, and another database another.
    assert len({database_identity(dsn) for dsn in SAME_DATABASE}) == 1
    assert "s3cret" not in database_identity(SAME_DATABASE[0]) and "other" not in database_identity(SAME_DATABASE[2])
    names = {database_identity(dsn) for dsn in OTHER_DATABASES}
    assert len(names) == len(OTHER_DATABASES) and database_identity(SAME_DATABASE[0]) not in names
    assert database_identity("postgresql://bob@db.example/") == database_identity("postgresql://bob@db.example")


def test_an_omitted_port_is_the_one_libpq_would_use(monkeypatch: pytest.MonkeyPatch) -> None:
    # With PGPORT set, a DSN without a port reaches that port: not the database on 5432.
    monkeypatch.setenv("PGPORT", "5433")
    assert database_identity("postgresql://bob@db.example/engram") == database_identity(
        "postgresql://bob@db.example:5433/engram")
    assert database_identity("postgresql://bob@db.example/engram") != database_identity(
        "postgresql://bob@db.example:5432/engram")


def test_unreachable_server_is_a_storage_error_without_the_password(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with pytest.raises(StorageError) as err:
        PgDatabase.connect("postgresql://bob:s3cret@127.0.0.1:1/db", None)
    assert "s3cret" not in str(err.value) and "***" in str(err.value)
    assert "s3cret" not in caplog.text


def test_an_unreachable_database_names_database_url_and_where_it_was_set(tmp_path: Path) -> None:
    # A wrong host, port or password: the operator must find which variable or file gave the URL.
    url = "postgresql://bob:s3cret@127.0.0.1:1/db"
    env = {**os.environ, "ENGRAM_HOME": str(tmp_path), "ENGRAM_DATABASE_URL": url}
    run = subprocess.run([*ENGRAM, "count"], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 1 and run.stdout == ""  # storage failure (docs/cli.md)
    assert run.stderr.startswith("error: database_url (from ENGRAM_DATABASE_URL): PostgreSQL "
                                 "postgresql://bob:***@127.0.0.1:1/db is unreachable: "), run.stderr
    config = tmp_path / "config.toml"
    config.write_text(f'database_url = "{url}"\n')
    del env["ENGRAM_DATABASE_URL"]
    run = subprocess.run([*ENGRAM, "count"], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 1
    assert run.stderr.startswith(f"error: database_url (from config file {config}): PostgreSQL "), run.stderr
    assert "s3cret" not in run.stderr + run.stdout
    with pytest.raises(StorageError, match=r"^database_url \(from an argument\): PostgreSQL postgresql://bob:\*\*\*@"):
        Engram.from_settings(database_url=url, home=tmp_path)


def test_nul_in_content_is_refused_and_nothing_stored(pg_url: str) -> None:
    mem = Engram.from_settings(database_url=pg_url, agent="a")
    try:
        mem.remember("kept")
        with pytest.raises(ValidationError) as err:
            mem.remember("bad \x00 byte")
        assert err.value.field == "content"
        assert [m.content for m in mem.list()] == ["kept"]
    finally:
        mem.close()


def test_content_past_the_full_text_index_limit_is_refused_naming_content(pg_url: str, tmp_path: Path) -> None:
    # A tsvector holds at most 1 MB: a memory of ~80k distinct words (max_content_chars allows up to
    # 1,000,000 characters) is stored on SQLite, and PostgreSQL refused it with its own "string is
    # too long for tsvector" as a StorageError (exit 1, "PostgreSQL error on ..."), naming no field.
    words = " ".join(f"w{i:07d}x" for i in range(100_000))[:1_000_000]
    for where in ({}, {"batch": True}):
        mem = Engram.from_settings(database_url=pg_url, home=tmp_path, max_content_chars=1_000_000,
                                   embeddings={"provider": "none"}, files={"enabled": False})
        try:
            mem.remember("kept", key="kept")
            with pytest.raises(ValidationError) as err:
                if where:  # in a batch, the other memories are still stored
                    mem.remember_many([{"content": "also kept", "key": "also"}, {"content": words, "key": "big"}])
                else:
                    mem.remember(words, key="big")
            assert err.value.field == "content" and "full-text" in str(err.value) and "1 MB" in str(err.value)
            assert mem.find("big") is None and mem.get("kept").content == "kept"
        finally:
            mem.close()


def test_several_processes_opening_at_once_migrate_once(new_database, pg) -> None:
    # A bare database (not the migrated template): concurrent opens race to migrate it.
    import threading

    pg.execute("CREATE DATABASE engram_bare")
    url = pg.url("engram_bare")
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            PgDatabase.connect(url).close()
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    import psycopg

    from engram.db.migrate import available

    with psycopg.connect(url) as conn:
        steps = conn.execute("SELECT version, name FROM schema_migrations ORDER BY version").fetchall()
    assert steps == [(m.version, m.name) for m in available("postgres")]
    assert steps[0] == (1, "memories") and len(steps) >= 5


def test_an_error_the_server_answered_is_not_called_unreachable(pg_url: str) -> None:
    # psycopg files a program limit (and a full disk...) under OperationalError, as it files a lost
    # connection; a 3,072-d vector index was reported as "the database is unreachable".
    from engram.db.postgres import translate_errors

    with pytest.raises(StorageError) as err, translate_errors("the-db"), psycopg.connect(pg_url) as conn:
        conn.execute("SELECT array_fill(1, ARRAY[1,1,1,1,1,1,1])")  # 7 dimensions: past the limit of 6
    assert isinstance(err.value.__cause__, psycopg.errors.ProgramLimitExceeded)
    assert str(err.value).startswith("PostgreSQL error on the-db: ") and "unreachable" not in str(err.value), err.value
    with pytest.raises(StorageError, match=r"^PostgreSQL the-db is unreachable: "), translate_errors("the-db"):
        psycopg.connect(pg_url.replace(pg_url.split("@", 1)[1].split("/", 1)[0], "127.0.0.1:1"))


def test_a_role_that_may_not_create_pgvector_is_told_how_to_get_it(pg) -> None:  # noqa: ANN001
    # pgvector is not a trusted extension: the database's owner alone may not create it. PostgreSQL
    # said "permission denied to create extension" and no more.
    pg.execute("CREATE ROLE plain_owner LOGIN")
    pg.execute("CREATE DATABASE owned_plainly OWNER plain_owner")
    url = pg.url("owned_plainly").replace("postgres@", "plain_owner@")
    with pytest.raises(StorageError) as err:
        PgDatabase.connect(url)
    assert str(err.value) == (
        "the pgvector extension is not installed in database 'owned_plainly' and this role may not create it"
        ' (permission denied to create extension "vector"): create it once as a superuser'
        " (psql -d owned_plainly -c 'CREATE EXTENSION IF NOT EXISTS vector'), then start engram again")
    with psycopg.connect(pg.url("owned_plainly")) as conn:  # nothing of engram's was made
        assert conn.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").fetchone()[0] == 0
    pg.execute("CREATE EXTENSION vector", database="owned_plainly")
    PgDatabase.connect(url).close()  # once created, the owner migrates the rest itself
