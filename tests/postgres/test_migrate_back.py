"""``engram migrate --from postgresql://… --to FILE``: leaving PostgreSQL. Everything the copy up
carries comes back into an SQLite file (memories, links, versions, vectors, history, summaries,
the exchange index, audit trail, tokens), verified by counts and checksums; an interrupted copy
resumes, a second run reports every row as already there, and a file holding other rows is
refused before anything is written."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from engram.audit import AuditQuery, SqliteAuditLog
from engram.auth import TokenStore
from engram.db import transfer_rows
from engram.db.transfer import KNOWN_TABLES, copy_sqlite_to_postgres
from engram.db.transfer_back import copy_postgres_to_sqlite
from engram.engine import Engram
from engram.errors import ValidationError
from engram.history.semantic import ExchangeIndex
from engram.history.sqlite import SqliteHistoryStore
from engram.model import Exchange, make_message
from engram.store.sqlite import SqliteMemoryStore
from engram.testing.fakes import HashingEmbedder

ENGRAM = [sys.executable, "-c", "from engram.interfaces.cli.app import main; main()"]


class _Interrupt(Exception):
    pass


def _build(path: Path) -> str:
    """A SQLite store holding a row of every table the copy carries; returns a live token."""
    store = SqliteMemoryStore(path)
    embedder = HashingEmbedder()
    engram = Engram(store, agent="alice", embedder=embedder)
    engram.subscribe(SqliteAuditLog(store.db))
    kept = engram.remember("the office wifi is on channel 11 ☃", key="wifi", tags=["net"],
                           metadata={"floor": 3, "half": 0.5, "name": "Zoë"}).memory
    other = engram.remember("the printer is on floor 2", key="printer").memory
    engram.remember("the office wifi is on channel 6", key="wifi")  # a version row
    engram.link(kept.id, other.id)
    Engram(store, agent="bob", embedder=embedder).remember("bob's own note", key="note")
    history = SqliteHistoryStore.on(store.db)
    calls = [{"id": "c1", "name": "lookup", "arguments": '{"q": "wifi"}'}]
    history.append_many("web:u1", [
        make_message("user", f"message {i} ☃", created_at=1.7e9 + i, metadata={"i": i, "ü": i / 2})
        if i % 5 else make_message("assistant", "", created_at=1.7e9 + i, tool_calls=calls)
        for i in range(2500)
    ])
    history.discard("web:u1", 0, 10)  # numbering with a gap: positions survive the move back
    history.for_agent("bob").append("telegram:9", make_message("user", "hello", created_at=1.7e9))
    history.set_summary("web:u1", "a long chat about wifi")
    ExchangeIndex(store.db, embedder).add([Exchange("web:u1:", "what channel?", "Channel 11.", 1.7e9)])
    tokens = TokenStore(store.db)
    token, _ = tokens.create("alice", "laptop")
    revoked, _ = tokens.create("bob")
    tokens.revoke(revoked)
    engram.close()
    return token


def _rows(path: Path) -> dict[str, list[bytes]]:
    """Every carried table's rows of a file, as the copy compares them."""
    with closing(sqlite3.connect(path)) as conn:
        return {table: [transfer_rows.canonical(table, tuple(row))
                        for row in conn.execute(transfer_rows.QUERIES[table][0])] for table in KNOWN_TABLES}


@pytest.fixture
def moved_up(pg_url: str, tmp_path: Path) -> tuple[Path, str]:
    original = tmp_path / "before.db"
    token = _build(original)
    assert copy_sqlite_to_postgres(original, pg_url).verified
    return original, token


def test_a_copy_back_holds_every_row_of_the_database_and_the_file_works(pg_url: str, tmp_path: Path,
                                                                          moved_up: tuple[Path, str]) -> None:
    original, token = moved_up
    back = tmp_path / "back" / "memory.db"
    seen: dict[str, tuple[int, int]] = {}

    def progress(table: str, done: int, total: int) -> None:
        seen[table] = (done, total)

    report = copy_postgres_to_sqlite(pg_url, back, progress=progress)
    assert report.verified, {n: t for n, t in report.tables.items() if not t.verified}
    assert seen["history_messages"] == (2491, 2491) and set(seen) == set(KNOWN_TABLES)
    assert report.tables["memories"].copied == 3 and report.tables["history_messages"].copied == 2491
    assert all(t.skipped == 0 for t in report.tables.values())
    assert report.embedding_identity is not None
    assert _rows(back) == _rows(original)  # every table, every row, as the copy compares them
    for query in ("SELECT id, content, tags, metadata FROM memories ORDER BY id",  # the stored text itself
                  "SELECT seq, content, tool_calls, metadata FROM history_messages ORDER BY agent, conversation, seq",
                  "SELECT seq, detail FROM audit_log ORDER BY seq"):
        with closing(sqlite3.connect(original)) as before, closing(sqlite3.connect(back)) as after:
            assert after.execute(query).fetchall() == before.execute(query).fetchall(), query
    store = SqliteMemoryStore(back)
    try:
        engram = Engram(store, agent="alice", embedder=HashingEmbedder())
        wifi = engram.get("wifi")
        assert wifi.content == "the office wifi is on channel 6" and dict(wifi.metadata)["name"] == "Zoë"
        assert [v.content for v in engram.versions("wifi")] == ["the office wifi is on channel 11 ☃"]
        assert engram.recall("printer floor").hits[0].memory.key == "printer"  # full text and vectors
        assert Engram(store, agent="bob").get("note").content == "bob's own note"
        history = SqliteHistoryStore.on(store.db)
        assert history.get_summary("web:u1") == "a long chat about wifi"
        before = SqliteMemoryStore(original)
        try:  # every message as read back: role, content, tool calls, metadata, time, position
            assert history.get_all("web:u1") == SqliteHistoryStore.on(before.db).get_all("web:u1")
        finally:
            before.close()
        assert history.get_all("web:u1")[0].tool_calls[0].name == "lookup"
        assert TokenStore(store.db).verify(token) is not None
        assert SqliteAuditLog(store.db).query(AuditQuery(limit=5))
    finally:
        store.close()


def test_an_interrupted_copy_back_resumes_and_a_second_run_finds_everything_there(
        pg_url: str, tmp_path: Path, moved_up: tuple[Path, str]) -> None:
    original, _ = moved_up
    back = tmp_path / "memory.db"

    def stop_early(table: str, done: int, total: int) -> None:
        if table == "history_messages" and done >= 1000:
            raise _Interrupt

    with pytest.raises(_Interrupt):
        copy_postgres_to_sqlite(pg_url, back, progress=stop_early)
    resumed = copy_postgres_to_sqlite(pg_url, back)
    assert resumed.verified
    assert (resumed.tables["history_messages"].copied, resumed.tables["history_messages"].skipped) == (1491, 1000)
    again = copy_postgres_to_sqlite(pg_url, back)
    assert again.verified and all(t.copied == 0 and t.skipped == t.source for t in again.tables.values())
    assert _rows(back) == _rows(original)


def test_a_file_holding_other_rows_is_refused_before_anything_is_written(pg_url: str, tmp_path: Path,
                                                                         moved_up: tuple[Path, str]) -> None:
    other = tmp_path / "other.db"
    store = SqliteMemoryStore(other)
    Engram(store, agent="carol").remember("carol's own memory", key="mine")
    store.close()
    before = _rows(other)
    with pytest.raises(ValidationError) as refused:
        copy_postgres_to_sqlite(pg_url, other)
    assert refused.value.field == "to" and "1 memories row the database does not hold" in str(refused.value)
    assert _rows(other) == before


def _run(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ENGRAM, *args], env={**os.environ, "ENGRAM_HOME": str(home), "ENGRAM_FILES__ENABLED": "false",
                                                 "COLUMNS": "200", **env},
                          capture_output=True, text=True, timeout=600)


def test_the_cli_copies_back_into_the_configured_file_and_reports_a_rerun(pg_url: str, tmp_path: Path,
                                                                          moved_up: tuple[Path, str]) -> None:
    home = tmp_path / "home"
    first = _run(home, "--json", "migrate", "--from", pg_url)
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert report["verified"] is True and report["target"] == str(home / "memory.db")
    assert report["tables"]["memories"]["copied"] == 3 and "password" not in report["source"]
    again = _run(home, "migrate", "--from", pg_url)
    assert again.returncode == 0, again.stderr
    assert "already there" in again.stdout and "2491" in again.stdout
    listed = _run(home, "--json", "-a", "alice", "list")
    assert sorted(m["key"] for m in json.loads(listed.stdout)) == ["printer", "wifi"]
    per_agent = _run(home, "migrate", "--from", pg_url, ENGRAM_PER_AGENT_DATABASES="true")
    assert per_agent.returncode == 2 and "per_agent_databases" in per_agent.stderr, per_agent.stderr


def test_the_copy_back_draws_its_bars_on_stderr_and_keeps_stdout_for_the_report(
        pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, moved_up: tuple[Path, str]) -> None:
    from typer.testing import CliRunner

    from engram.interfaces.cli import render
    from engram.interfaces.cli.app import app

    # Rich draws bars only on a terminal: stderr's console made one, stdout's left as it is.
    monkeypatch.setitem(render._consoles, "errors", render._clean_console(stderr=True, force_terminal=True))
    back = tmp_path / "back.db"
    result = CliRunner().invoke(app, ["--home", str(tmp_path / "home"), "migrate", "--from", pg_url, "--to", str(back)],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "2491/2491" in result.stderr and "━" in result.stderr  # the messages table's bar
    assert "2491/2491" not in result.stdout
    assert f"→ {back}" in result.stdout and "differs" not in result.stdout  # the report's table


def test_a_row_changed_on_postgresql_since_a_copy_back_refuses_the_file_unchanged(
        pg_url: str, tmp_path: Path, moved_up: tuple[Path, str]) -> None:
    from engram.db.postgres import PgDatabase
    from engram.store.postgres import PostgresMemoryStore

    back = tmp_path / "memory.db"
    assert copy_postgres_to_sqlite(pg_url, back).verified
    db = PgDatabase.connect(pg_url)
    try:
        Engram(PostgresMemoryStore(db), agent="bob").update("note", content="bob's note, changed on PostgreSQL")
    finally:
        db.close()
    before = _rows(back)
    with pytest.raises(ValidationError) as refused:
        copy_postgres_to_sqlite(pg_url, back)
    assert refused.value.field == "to" and "memories row (" in str(refused.value) and "holds other content" in str(refused.value)
    assert _rows(back) == before  # nothing written


def test_libpq_key_value_form_in_from_copies_back_as_a_url_does(pg_url: str, tmp_path: Path) -> None:
    # --to took "host=... password=..."; --from read it as a file path and echoed it back, password
    # included: '--from: "host=... password=s3cret" does not exist'.
    from psycopg.conninfo import conninfo_to_dict

    dsn = " ".join(f"{k}={v}" for k, v in conninfo_to_dict(pg_url).items()) + " password=s3cret"
    done = _run(tmp_path / "home", "--json", "migrate", "--from", dsn, "--to", str(tmp_path / "back.db"))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["verified"] is True and "s3cret" not in done.stdout
    wrong = _run(tmp_path / "home", "migrate", "--from", "host=127.0.0.1 port=1 dbname=x password=s3cret")
    assert wrong.returncode == 1 and wrong.stderr.startswith("error: --from: PostgreSQL "), wrong.stderr
    assert "s3cret" not in wrong.stderr
