"""``engram migrate --from PATH`` naming nothing to copy is bad input on ``--from`` (exit 2, one
line naming the option and what it takes), before any database is reached: the target here is a
port nothing listens on, so reaching it would fail otherwise. The real entry point in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

UNREACHABLE = "postgresql://engram@127.0.0.1:1/nowhere"


@pytest.mark.parametrize(("given", "said"), [
    # It exited 3 with "SQLite store not found", naming no option.
    ("missing.db", 'does not exist (allowed: a path to engram\'s SQLite file to copy)'),
    # A folder failed opening as a database (exit 1), and "/" as "internal error: ValueError".
    ("folder", "is a folder (allowed: engram's SQLite file (memory.db))"),
    ("/", "is a folder (allowed: engram's SQLite file (memory.db))"),
])
def test_a_from_naming_no_sqlite_file_exits_2_naming_the_option(isolated_home: Path, tmp_path: Path,
                                                                given: str, said: str) -> None:
    (tmp_path / "folder").mkdir()
    # Given relative to the folder it runs in: an error shows a long value cut short, and a test
    # folder's absolute path is long under some runners (pytest-xdist's).
    path = given
    env = {**os.environ, "ENGRAM_HOME": str(isolated_home)}
    done = subprocess.run([sys.executable, "-m", "engram", "--json", "migrate", "--from", path, "--to", UNREACHABLE],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr == f'error: --from: "{path}" {said}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["folder"]  # nothing made: no home, no file beside


@pytest.mark.parametrize("given", ["", "  "])
def test_an_empty_from_exits_2_naming_the_option_as_home_and_config_do(isolated_home: Path, given: str) -> None:
    """``engram migrate --from ''`` was read as ``.`` (the current folder, "is a folder"): empty or
    blank is a usage error naming ``--from``, as ``--home ''`` and ``--config ''`` are (``parsing.path_option``)."""
    env = {**os.environ, "ENGRAM_HOME": str(isolated_home)}
    done = subprocess.run([sys.executable, "-m", "engram", "migrate", "--from", given, "--to", UNREACHABLE],
                          env=env, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr == ("error: --from: must not be empty (allowed: engram's SQLite file to copy, or a PostgreSQL"
                           " URL to copy back from; leave --from out for the configured file)\n")


@pytest.mark.parametrize(("given", "said"), [
    # A copy back into a SQLite file was handed to libpq: "PostgreSQL error on back.db: missing "="
    # after ... in connection info string", exit 1, naming no option.
    ("{folder}/back.db", "not a PostgreSQL URL"),
    # Refused as database_url (exit 4), its value shown with a slash lost: "sqlite:/back.db".
    ("sqlite:///{folder}/back.db", 'a "sqlite" URL is not a PostgreSQL database'),
])
def test_a_to_naming_no_postgresql_database_exits_2_naming_the_option(isolated_home: Path, tmp_path: Path,
                                                                      given: str, said: str) -> None:
    source = tmp_path / "memory.db"
    source.write_bytes(b"")
    env = {**os.environ, "ENGRAM_HOME": str(isolated_home)}
    done = subprocess.run([sys.executable, "-m", "engram", "--json", "migrate", "--from", str(source), "--to",
                           given.format(folder=tmp_path)], env=env, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr == (f"error: --to: {said}: --to names the PostgreSQL database to copy into (a copy back into a"
                           " SQLite file is --from postgresql://… --to FILE) (allowed:"
                           " postgresql://user:password@host:port/database, or libpq's key=value form)\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memory.db"]  # no back.db made


def test_a_copy_back_into_a_database_url_exits_2_without_the_password(isolated_home: Path) -> None:
    """``--from postgresql://user:secret@host/db`` is the copy back into an SQLite file: a ``--to``
    naming a database then is refused naming ``--to``, before anything is reached, the password
    never said (read as a path, it was said back: ``"postgresql:/user:secret@host/db" does not exist``)."""
    env = {**os.environ, "ENGRAM_HOME": str(isolated_home)}
    done = subprocess.run([sys.executable, "-m", "engram", "migrate", "--from", "postgresql://engram:s3cret@db/engram",
                           "--to", UNREACHABLE], env=env, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr == ("error: --to: is a database URL: a copy from PostgreSQL goes into an SQLite file"
                           " (allowed: a path for engram's SQLite file; leave --to out for the configured one)\n")
    assert "s3cret" not in done.stderr


@pytest.mark.parametrize(("to", "variable", "named"), [
    (["--to", UNREACHABLE], None, "--to"),
    ([], UNREACHABLE, "database_url (from ENGRAM_DATABASE_URL)"),
])
def test_a_target_it_cannot_reach_is_named_by_where_it_was_given(isolated_home: Path, tmp_path: Path, to: list[str],
                                                                variable: str | None, named: str) -> None:
    """It said "PostgreSQL URL is unreachable" alone, where a store opened on the same URL names the
    setting and where it was set (docs/postgres.md): which option, variable or file to fix."""
    source = tmp_path / "memory.db"
    source.write_bytes(b"")  # an empty SQLite database
    env = {**{k: v for k, v in os.environ.items() if k != "ENGRAM_DATABASE_URL"}, "ENGRAM_HOME": str(isolated_home),
           **({"ENGRAM_DATABASE_URL": variable} if variable else {})}
    done = subprocess.run([sys.executable, "-m", "engram", "migrate", "--from", str(source), *to],
                          env=env, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (1, ""), done.stderr
    assert done.stderr.startswith(f"error: {named}: PostgreSQL postgresql://engram@127.0.0.1:1/nowhere is unreachable:")
