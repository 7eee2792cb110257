"""Inputs that name the wrong kind of thing (a folder for the database file, a database on standard
input, a backend without its URL): each refusal names the setting or argument and where it was given."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from engram.config import load_settings
from engram.errors import ConfigError


def run(home: Path, *args: str, env: dict[str, str] | None = None,
        stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    return subprocess.run([sys.executable, "-m", "engram", *args], capture_output=True, input=stdin, timeout=120,
                          env={**base, "ENGRAM_HOME": str(home), "HOME": str(home.parent / "user"), **(env or {})})


def test_a_folder_given_as_the_database_file_names_path_and_where_it_was_set(tmp_path: Path) -> None:
    # It said "cannot open SQLite database DIR: unable to open database file" (exit 1).
    folder = tmp_path / "folder"
    folder.mkdir()
    done = run(tmp_path / "home", "count", env={"ENGRAM_PATH": str(folder)})
    stderr = done.stderr.decode()
    assert done.returncode == 4, stderr
    assert f"path: {folder} is a folder, not a file (allowed: the path of the SQLite database file" in stderr, stderr
    assert "(from ENGRAM_PATH)" in stderr, stderr
    assert sorted(p.name for p in folder.iterdir()) == []
    with pytest.raises(ConfigError, match="path: .* is a folder, not a file .*JSON file"):
        load_settings(home=tmp_path / "home", backend="jsonfile", path=folder)


def test_a_sqlite_database_piped_to_import_is_named_as_one_with_its_path_asked_for(tmp_path: Path) -> None:
    # It said "standard input is not UTF-8 text (byte 20)", as if the document were damaged.
    import sqlite3

    database = tmp_path / "memory.db"
    with sqlite3.connect(database) as conn:
        conn.execute("CREATE TABLE memories (key TEXT, content TEXT, category TEXT, timestamp TEXT)")
    conn.close()
    done = run(tmp_path / "home", "import", "-", stdin=database.read_bytes())
    stderr = done.stderr.decode()
    assert done.returncode == 2, stderr
    assert "path: standard input is a SQLite database, not a document (allowed: the database's path instead" in stderr
    assert "not UTF-8" not in stderr
    # Other bytes that are not UTF-8 are still told as such.
    done = run(tmp_path / "home", "import", "-", stdin=b"\xff\xfe not text")
    assert done.returncode == 2
    assert "standard input is not UTF-8 text (byte 0)" in done.stderr.decode()


def test_the_postgres_backend_without_a_url_names_where_the_backend_was_chosen(tmp_path: Path) -> None:
    # It said "the postgres backend needs database_url" alone: set by whom, in which file or variable?
    config = tmp_path / "engram.toml"
    config.write_text('backend = "postgres"\n')
    cases = {("--backend", "postgres", "count"): ({}, "backend (from --backend)"),
             ("count",): ({"ENGRAM_BACKEND": "postgres"}, "backend (from ENGRAM_BACKEND)"),
             ("--config", str(config), "count"): ({}, f"backend (from config file {config})")}
    for args, (env, chosen) in cases.items():
        done = run(tmp_path / "home", *args, env=env)
        stderr = done.stderr.decode()
        assert done.returncode == 4, stderr
        assert f"error: the postgres backend, chosen by {chosen}, needs database_url" in stderr, stderr
    from engram import Engram

    with pytest.raises(ConfigError, match=r"chosen by backend \(from an argument\), needs database_url"):
        Engram.from_settings(home=tmp_path / "home", backend="postgres")


@pytest.mark.parametrize("url", ["sqlite:///x.db", "mysql://bob:s3cret@db/engram", "{home}/memory.db", ""])
def test_copying_into_what_is_no_postgresql_database_names_database_url_without_its_value(
        tmp_path: Path, url: str) -> None:
    # It said "database_url mysql://bob:***@db/engram is not a postgresql:// URL" (a ConfigError naming no
    # field), or for a path libpq's "missing '=' after ... in connection info string" (a StorageError).
    pytest.importorskip("psycopg")
    from engram import Engram
    from engram.db.transfer import copy_sqlite_to_postgres
    from engram.errors import ValidationError

    with Engram.from_settings(home=tmp_path) as engram:
        engram.remember("kept where it is")
    database = tmp_path / "memory.db"
    before = database.read_bytes()
    given = url.format(home=tmp_path)
    with pytest.raises(ValidationError) as refused:
        copy_sqlite_to_postgres(database, given)
    assert refused.value.field == "database_url"
    assert "postgresql://user:password@host:port/database" in str(refused.value)
    assert given == "" or given not in str(refused.value)
    assert "s3cret" not in str(refused.value)
    assert database.read_bytes() == before
