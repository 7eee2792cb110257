"""``engram migrate --to postgresql://…`` moves a 10,000-memory SQLite store: counts and
checksums verify, an interrupted copy resumes, and recall answers the same on both."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from engram.db.postgres import PgDatabase
from engram.db.transfer import copy_sqlite_to_postgres
from engram.engine import Engram
from engram.model import Memory, Scope
from engram.store.postgres import PostgresMemoryStore
from engram.store.sqlite import SqliteMemoryStore
from engram.testing.fakes import HashingEmbedder

N = 10_000
ENGRAM = [sys.executable, "-c", "from engram.interfaces.cli.app import main; main()"]
WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec"
         " romeo sierra tango uniform victor whiskey xray yankee zulu amber cobalt crimson indigo ivory jade lemon"
         " maroon olive orchid pearl ruby salmon silver teal violet").split()


def _build_sqlite(path: Path) -> SqliteMemoryStore:
    rng = random.Random(7)
    store = SqliteMemoryStore(path)
    memories = []
    for i in range(N):
        content = " ".join(rng.sample(WORDS, 6)) + f" note{i}"
        scope = Scope("alice") if i % 3 else Scope()
        links = (f"m{i - 1:05d}",) if i % 10 == 1 else ()
        memories.append(Memory(
            id=f"m{i:05d}", key=f"k{i}", content=content, scope=scope, tags=("t" + str(i % 7),),
            metadata={"n": i, "half": i * 0.5}, importance=(i % 10) / 10, created_at=1.7e9 + i,
            updated_at=1.7e9 + i, last_accessed=None if i % 2 else 1.7e9 + i + 0.25, recall_count=i % 4,
            links=links, superseded_by=f"m{i + 1:05d}" if i % 97 == 0 else None,
        ))
    assert store.import_memories(memories).imported == N
    embedder = HashingEmbedder()
    vectors = embedder.embed([m.content for m in memories])
    store.set_vectors(str(embedder.identity), list(zip([m.id for m in memories], vectors, strict=True)))
    Engram(store, agent="alice").remember("first version of k1", key="k1")  # a version row
    return store


class _Interrupt(Exception):
    pass


def test_migrate_10k_resumes_verifies_and_recalls_the_same(pg_url: str, tmp_path: Path) -> None:
    sqlite_path = tmp_path / "memory.db"
    _build_sqlite(sqlite_path).close()

    # An interrupted first run: stop after three batches of memories.
    def stop_early(table: str, done: int, total: int) -> None:
        if table == "memories" and done >= 3000:
            raise _Interrupt

    with pytest.raises(_Interrupt):
        copy_sqlite_to_postgres(sqlite_path, pg_url, progress=stop_early)

    env = {**os.environ, "ENGRAM_HOME": str(tmp_path / "home"), "COLUMNS": "200"}
    run = subprocess.run(
        [*ENGRAM, "--json", "migrate", "--from", str(sqlite_path), "--to", pg_url],
        env=env, capture_output=True, text=True, timeout=600,
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["verified"] is True
    memories = report["tables"]["memories"]
    assert (memories["source"], memories["target"], memories["skipped"], memories["copied"]) == (N, N, 3000, N - 3000)
    assert report["tables"]["memory_links"]["target"] == 2 * (N // 10)
    assert report["tables"]["memory_versions"]["target"] == 1
    assert report["tables"]["memory_vectors"]["target"] == N - 1  # updating k1 dropped its stale vector
    assert report["embedding_identity"] == "test:hashing:64"

    # Running again once the copy verified reads nothing into the target (transfer_record).
    again = subprocess.run(
        [*ENGRAM, "migrate", "--from", str(sqlite_path), "--to", pg_url],
        env=env, capture_output=True, text=True, timeout=600,
    )
    assert again.returncode == 0, again.stderr
    assert "already copied on " in again.stdout and "unchanged since; nothing copied" in again.stdout

    sqlite = Engram(SqliteMemoryStore(sqlite_path), agent="alice", embedder=HashingEmbedder())
    postgres = Engram(PostgresMemoryStore(PgDatabase.connect(pg_url)), agent="alice", embedder=HashingEmbedder())
    try:
        rng = random.Random(11)
        for i in rng.sample(range(2, N), 6):  # few: SQLite text search costs seconds at 10k (see report)
            query = sqlite.get(f"k{i}").content if i % 3 else sqlite.for_agent("bob").get(f"k{i}").content
            on_sqlite = sqlite.recall(query, limit=5, touch=False)
            on_postgres = postgres.recall(query, limit=5, touch=False)
            assert on_sqlite.mode == on_postgres.mode == "hybrid"
            if i % 97:
                assert on_sqlite.hits[0].memory.id == on_postgres.hits[0].memory.id == f"m{i:05d}"
            assert on_sqlite.hits[0].memory == on_postgres.hits[0].memory
    finally:
        sqlite.close()
        postgres.close()


def test_migrate_copies_history_audit_and_tokens_and_resumes(pg_url: str, tmp_path: Path) -> None:
    from engram.audit import AuditQuery, PostgresAuditLog, SqliteAuditLog
    from engram.auth import PostgresTokenStore, TokenStore
    from engram.history.pg_semantic import PgExchangeIndex
    from engram.history.postgres import PostgresHistoryStore
    from engram.history.semantic import ExchangeIndex
    from engram.history.sqlite import SqliteHistoryStore
    from engram.model import make_message

    sqlite_path = tmp_path / "memory.db"
    store = SqliteMemoryStore(sqlite_path)
    engram = Engram(store, agent="alice")
    engram.subscribe(SqliteAuditLog(store.db))
    kept = engram.remember("the office wifi is on channel 11", key="wifi").memory
    gone = engram.remember("temporary door code 4411", key="door").memory
    engram.link(kept.id, gone.id)
    engram.forget(gone.id, reason="expired")
    history = SqliteHistoryStore.on(store.db)
    calls = [{"id": "c1", "name": "lookup", "arguments": '{"q": "wifi"}'}]
    history.append_many("web:u1", [
        make_message("user", f"message {i} ☃", created_at=1.7e9 + i, metadata={"i": i, "half": i / 2})
        if i % 5 else make_message("assistant", "", created_at=1.7e9 + i, tool_calls=calls)
        for i in range(2500)
    ])
    history.append("telegram:9", make_message("user", "hello", created_at=1.7e9))
    history.discard("web:u1", 0, 10)  # numbering with a gap: positions must survive the move
    history.set_summary("web:u1", "a long chat about wifi")
    index = ExchangeIndex(store.db, HashingEmbedder())
    from engram.model import Exchange

    index.add([Exchange("web:u1:", "what channel?", "Channel 11.", 1.7e9)])
    tokens = TokenStore(store.db)
    token, info = tokens.create("alice", "laptop")
    revoked, _ = tokens.create("bob")
    tokens.revoke(revoked)
    expected_messages = history.get_all("web:u1")
    expected_audit = SqliteAuditLog(store.db).query(AuditQuery(limit=1000))
    engram.close()

    def stop_early(table: str, done: int, total: int) -> None:
        if table == "history_messages" and done >= 1000:
            raise _Interrupt

    with pytest.raises(_Interrupt):
        copy_sqlite_to_postgres(sqlite_path, pg_url, progress=stop_early)
    report = copy_sqlite_to_postgres(sqlite_path, pg_url)
    assert report.verified and report.unknown_tables == [], {n: t for n, t in report.tables.items() if not t.verified}
    counts = {name: (t.source, t.target, t.copied, t.skipped) for name, t in report.tables.items()}
    assert counts["history_messages"] == (2491, 2491, 1491, 1000)
    assert counts["history_summaries"] == (1, 1, 1, 0)
    assert counts["history_exchanges"] == (1, 1, 1, 0)
    assert counts["api_tokens"] == (2, 2, 2, 0)
    assert counts["audit_log"][:2] == (len(expected_audit), len(expected_audit))
    assert report.tables["audit_log"].source_checksum == report.tables["audit_log"].target_checksum

    db = PgDatabase.connect(pg_url)
    pg_history = PostgresHistoryStore(db, owns_db=False)
    try:
        assert pg_history.get_all("web:u1") == expected_messages
        assert pg_history.get_summary("web:u1") == "a long chat about wifi"
        assert pg_history.conversations() == ["telegram:9:", "web:u1:"]
        pg_history.append("web:u1", make_message("user", "after the move"))
        assert pg_history.get_recent("web:u1", 2) == [expected_messages[-1], make_message("user", "after the move")]
        semantic = PgExchangeIndex(db, HashingEmbedder())
        assert semantic.recall("what channel?").exchanges[0].assistant == "Channel 11."
        pg_tokens = PostgresTokenStore(db)
        assert pg_tokens.verify(token) is not None and pg_tokens.verify(token).id == info.id
        assert pg_tokens.verify(revoked) is None
        trail = PostgresAuditLog(db)
        assert trail.query(AuditQuery(limit=1000)) == expected_audit
        # New entries are numbered after the copied ones.
        moved = Engram(PostgresMemoryStore(db), agent="alice")
        moved.subscribe(trail)
        moved.remember("written after the move", key="after")
        newest = trail.query(AuditQuery(limit=1))[0]
        assert newest.memory_key == "after" and newest.seq > expected_audit[0].seq
        assert trail.query(AuditQuery(memory="door"))[0].detail["content"] == "temporary door code 4411"
    finally:
        db.close()


def test_migrate_into_a_database_holding_another_stores_memories_writes_nothing(pg_url: str, tmp_path: Path) -> None:
    from engram.errors import ValidationError

    other = PostgresMemoryStore(PgDatabase.connect(pg_url))
    Engram(other, agent="alice").remember("Python 3.11 on the old laptop", key="python-version")
    other.close()
    sqlite_path = tmp_path / "memory.db"
    store = SqliteMemoryStore(sqlite_path)
    mine = Engram(store, agent="alice")
    a = mine.remember("Python 3.12 on this one", key="python-version").memory
    b = mine.remember("Deploys on Fridays", key="deploy-day").memory
    mine.link(a.id, b.id)
    store.close()
    with pytest.raises(ValidationError) as raised:
        copy_sqlite_to_postgres(sqlite_path, pg_url)
    assert raised.value.field == "to" and "python-version" in str(raised.value)
    target = PostgresMemoryStore(PgDatabase.connect(pg_url))
    try:
        assert [m.content for m in Engram(target, agent="alice").list()] == ["Python 3.11 on the old laptop"]
    finally:
        target.close()


def test_migrate_keeps_cleared_fields_slash_keys_and_accents_byte_for_byte(pg_url: str, tmp_path: Path) -> None:
    from engram.config import Settings, load_settings

    def settings(**more: str) -> Settings:
        return load_settings(home=tmp_path / "home", agent="alice", embeddings={"provider": "none"}, **more)

    source = Engram.from_settings(settings())
    source.remember("Café  notes\t kept\r\n", key="notes/today", tags=["a"], metadata={"f": 1.0, "s": "ü"},
                    related_entity="Zoë", source="chat", search_context="ctx é", valid_until="2030-01-01")
    source.update("notes/today", clear=["tags", "metadata", "related_entity", "source", "valid_until"])
    source.replace("notes/today", "Cafe\u0301 au lait, José's 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ")  # a decomposed é, an astral letter
    other = source.remember("100% done", key="100%/a%2Fb").memory
    source.remember("first", key=other.id)  # a key spelled as another memory's id
    source.history.append("web:a/b", "user", "hello Zoë  ", metadata={"x": 1.5})
    expected = {m.key: (m, source.versions(m.id)) for m in source.list(limit=100)}
    expected_stats = source.visible_stats()
    source.close()

    report = copy_sqlite_to_postgres(tmp_path / "home" / "memory.db", pg_url)
    assert report.verified, {n: t for n, t in report.tables.items() if not t.verified}

    moved = Engram.from_settings(settings(database_url=pg_url))
    try:
        assert moved.store.name == "postgres"
        for key, (memory, versions) in expected.items():
            assert moved.get_by_key(key) == memory and moved.versions(memory.id) == versions
        assert moved.get_by_key("notes/today").content == "Cafe\u0301 au lait, José's 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 "
        assert moved.get_by_key(other.id).content == "first"
        assert [h.memory.key for h in moved.recall("cafe jose", touch=False)] == ["notes/today"]  # folded there too
        assert moved.history.conversations() == ["web:a/b"]
        [message] = moved.history.all("web:a/b")
        assert (message.content, message.metadata) == ("hello Zoë  ", {"x": 1.5})
        seen = moved.visible_stats()
        assert (seen.memories, seen.by_category, seen.by_scope, seen.links) == (
            expected_stats.memories, expected_stats.by_category, expected_stats.by_scope, expected_stats.links)
    finally:
        moved.close()


def test_migrate_carries_the_maintenance_schedule_so_nothing_reruns_early(pg_url: str, tmp_path: Path) -> None:
    from engram.config import load_settings
    from engram.root import maintenance_for

    home = tmp_path / "home"

    def settings(**more: str):  # noqa: ANN202 - a Settings
        return load_settings(home=home, embeddings={"provider": "none"}, **more)

    source = Engram.from_settings(settings())
    source.for_agent("alice").remember("alice keeps notes", key="notes")
    store_wide = maintenance_for(source, settings()).run()
    alices = maintenance_for(source.for_agent("alice"), settings(agent="alice")).run()
    assert {r.job for r in store_wide.ran} >= {"hygiene", "decay"} and {r.job for r in alices.ran} >= {"hygiene"}
    source.close()

    env = {**os.environ, "ENGRAM_HOME": str(home), "ENGRAM_EMBEDDINGS__PROVIDER": "none", "COLUMNS": "200"}
    run = subprocess.run([*ENGRAM, "--json", "migrate", "--to", pg_url], env=env, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["verified"] is True and report["schedule"] is not None
    assert Path(report["schedule"]).parent == home / "state"

    moved = Engram.from_settings(settings(database_url=pg_url))
    try:
        assert moved.store.name == "postgres"
        # The first passes on PostgreSQL find nothing due: the schedule came along (it ran every job).
        again = maintenance_for(moved, settings(database_url=pg_url)).run()
        assert again.ran == [] and set(again.skipped.values()) <= {"not due", "disabled", "not a SQLite store"}
        alice_again = maintenance_for(moved.for_agent("alice"), settings(database_url=pg_url, agent="alice")).run()
        assert alice_again.ran == [], [r.job for r in alice_again.ran]
        # Another agent never ran a pass, on either store: its jobs are due.
        assert maintenance_for(moved.for_agent("bob"), settings(database_url=pg_url, agent="bob")).due(moved.clock())
    finally:
        moved.close()


def test_the_carried_schedule_is_found_under_another_spelling_of_the_database(pg_url: str, tmp_path: Path) -> None:
    # migrate --to and the later ENGRAM_DATABASE_URL name one database in two spellings (scheme alias,
    # parameters that choose no database): maintain must find the schedule migrate carried.
    from engram.config import load_settings
    from engram.root import maintenance_for

    home = tmp_path / "home"
    source = Engram.from_settings(load_settings(home=home, embeddings={"provider": "none"}))
    source.remember("a fact to maintain", key="fact")
    assert maintenance_for(source, load_settings(home=home, embeddings={"provider": "none"})).run().ran
    source.close()
    spelled = pg_url.replace("postgresql://", "postgres://") + "?application_name=engram-migrate&connect_timeout=10"
    env = {**os.environ, "ENGRAM_HOME": str(home), "ENGRAM_EMBEDDINGS__PROVIDER": "none", "COLUMNS": "200"}
    run = subprocess.run([*ENGRAM, "--json", "migrate", "--to", spelled], env=env, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["schedule"] is not None

    maintained = subprocess.run([*ENGRAM, "--json", "maintain"], env={**env, "ENGRAM_DATABASE_URL": pg_url},
                                capture_output=True, text=True, timeout=600)
    assert maintained.returncode == 0, maintained.stderr
    assert json.loads(maintained.stdout)["ran"] == []  # nothing due: the schedule was found


def test_the_cli_leaves_stderr_empty_off_a_terminal(pg_url: str, tmp_path: Path) -> None:
    # rich's Progress printed an empty line on stop to a pipe or log, with --json too.
    home = tmp_path / "home"
    with Engram.from_settings(home=home, embeddings={"provider": "none"}) as source:
        source.remember_many([{"content": f"note {i} about the garden"} for i in range(5)])
    env = {**os.environ, "ENGRAM_HOME": str(home), "ENGRAM_EMBEDDINGS__PROVIDER": "none", "COLUMNS": "200"}
    # The second run finds the first's verified copy (nothing copied) and says so.
    for args, said in ((("migrate", "--to", pg_url), "memories"), (("--json", "migrate", "--to", pg_url), '"already_copied": "')):
        run = subprocess.run([*ENGRAM, *args], env=env, capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stderr
        assert run.stderr == "", (args, run.stderr)
        assert said in run.stdout


def test_the_cli_draws_the_copy_on_stderr_and_keeps_stdout_for_the_report(
        pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from engram.interfaces.cli import render
    from engram.interfaces.cli.app import app

    home = tmp_path / "home"
    with Engram.from_settings(home=home, embeddings={"provider": "none"}) as source:
        source.remember_many([{"content": f"note {i} about the garden"} for i in range(40)])
    # Rich draws bars only on a terminal: stderr's console made one, stdout's left as it is.
    monkeypatch.setitem(render._consoles, "errors", render._clean_console(stderr=True, force_terminal=True))
    result = CliRunner().invoke(app, ["--home", str(home), "migrate", "--to", pg_url], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "40/40" in result.stderr and "━" in result.stderr  # the memories table's bar
    assert "40/40" not in result.stdout  # (the report's table draws its own rules)
    assert "memories" in result.stdout and "differs" not in result.stdout  # the report's table


def test_an_encrypted_store_migrates_with_its_key(pg_url: str, tmp_path: Path) -> None:
    # The copy opened the SQLite file without the configured key: an encrypted home could not move.
    pytest.importorskip("sqlcipher3")
    home = tmp_path / "home"
    key_file = tmp_path / "key"
    key_file.write_bytes(b"correct horse battery\r\n")
    with Engram.from_settings(home=home, embeddings={"provider": "none"},
                              privacy={"encryption_key_file": str(key_file)}) as source:
        source.remember("the vault code is in the blue book", key="vault")
    env = {**os.environ, "ENGRAM_HOME": str(home), "ENGRAM_EMBEDDINGS__PROVIDER": "none",
           "ENGRAM_PRIVACY__ENCRYPTION_KEY_FILE": str(key_file), "COLUMNS": "200"}
    run = subprocess.run([*ENGRAM, "--json", "migrate", "--to", pg_url], env=env, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["verified"] is True
    target = PostgresMemoryStore(PgDatabase.connect(pg_url))
    try:
        assert [m.content for m in target.iter_all()] == ["the vault code is in the blue book"]
    finally:
        target.close()


def test_a_key_with_the_postgres_backend_is_refused_before_anything_reaches_the_server(
        pg_url: str, tmp_path: Path) -> None:
    # The key encrypts a SQLite file; set beside database_url it was ignored and the memory went
    # into PostgreSQL in clear while its owner believed it encrypted. After `engram migrate` the key
    # has to go (the doc says so), and the refusal says why.
    env = {**os.environ, "ENGRAM_HOME": str(tmp_path / "home"), "ENGRAM_EMBEDDINGS__PROVIDER": "none",
           "ENGRAM_PRIVACY__ENCRYPTION_KEY": "correct horse battery", "ENGRAM_DATABASE_URL": pg_url}
    run = subprocess.run([*ENGRAM, "remember", "the vault code is in the blue book"], env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 4, run.stdout + run.stderr
    said = " ".join(run.stderr.split())
    assert 'privacy.encryption_key is set but backend = "postgres"' in said and "cannot encrypt" in said
    assert "(from ENGRAM_DATABASE_URL)" in said  # which setting chose PostgreSQL, and where it was set
    target = PostgresMemoryStore(PgDatabase.connect(pg_url))
    try:
        assert list(target.iter_all()) == []
    finally:
        target.close()


def test_migrate_without_to_copies_into_the_configured_database_url(pg_url: str, tmp_path: Path) -> None:
    # `ENGRAM_DATABASE_URL=postgresql://... engram migrate` (the variable docs/postgres.md exports
    # first) stopped at "Missing option '--to'": the database engram is to use is where the copy goes.
    home = tmp_path / "home"
    with Engram.from_settings(home=home, embeddings={"provider": "none"}) as source:
        source.remember("the boiler is serviced every October", key="boiler")
    env = {**os.environ, "ENGRAM_HOME": str(home), "ENGRAM_EMBEDDINGS__PROVIDER": "none", "ENGRAM_DATABASE_URL": pg_url}
    run = subprocess.run([*ENGRAM, "--json", "migrate"], env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0 and run.stderr == "", run.stderr
    report = json.loads(run.stdout)
    assert report["verified"] is True and report["source"] == str(home / "memory.db")
    assert report["tables"]["memories"]["copied"] == 1
    got = subprocess.run([*ENGRAM, "--json", "get", "boiler"], env=env, capture_output=True, text=True, timeout=600)
    assert got.returncode == 0, got.stderr
    assert json.loads(got.stdout)["content"] == "the boiler is serviced every October"  # read back from PostgreSQL
    with Engram.from_settings(home=home, database_url=pg_url, embeddings={"provider": "none"}) as moved:
        assert moved.store.name == "postgres" and moved.get("boiler").content == "the boiler is serviced every October"
