"""Migration 0007 (history belongs to an agent) on a database written before it: every
conversation is kept, under the default agent, or under the owner of a per-agent database."""

from __future__ import annotations

from pathlib import Path

from engram.config import load_settings
from engram.db.sqlite import Database
from engram.history.sqlite import SqliteHistoryStore
from engram.root import open_backend, open_history
from tests.migration_steps import sqlite_steps_before


def old_database(path: Path) -> None:
    """A database at schema 6 (the release before 0007) holding two conversations."""
    db = Database(path)
    with db.write() as conn:
        sqlite_steps_before(conn, 7)
        rows = [("telegram:42:", 1, "user", "hello"), ("telegram:42:", 2, "assistant", "hi there"),
                ("slack:C1:", 1, "user", "standup at nine")]
        conn.executemany("INSERT INTO history_messages (conversation, seq, role, content, created_at) "
                         "VALUES (?, ?, ?, ?, 1.0)", rows)
        conn.execute("INSERT INTO history_summaries VALUES ('telegram:42:', 'greetings', 1.0)")
        conn.execute("INSERT INTO history_exchanges (conversation, user_text, assistant_text, created_at, fingerprint)"
                     " VALUES ('telegram:42:', 'hello', 'hi there', 1.0, 'f1')")
    db.close()


def test_existing_conversations_move_to_the_default_agent_losing_none(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    old_database(path)
    store = SqliteHistoryStore.open(path)
    try:
        assert store.agent == "default"
        assert [m.content for m in store.get_all("telegram:42")] == ["hello", "hi there"]
        assert [m.content for m in store.get_all("slack:C1")] == ["standup at nine"]
        assert store.get_summary("telegram:42") == "greetings"
        assert store.conversations() == ["slack:C1:", "telegram:42:"]
        assert store.for_agent("alice").conversations() == []
        store.for_agent("alice").append("telegram:42", store.get_all("telegram:42")[0])  # same key, another agent
        assert store.count("telegram:42") == 2
        with store.db.read() as conn:
            assert conn.execute("SELECT agent, COUNT(*) FROM history_exchanges GROUP BY agent").fetchall() == [
                ("default", 1)]
    finally:
        store.close()


def test_a_per_agent_database_gives_its_conversations_to_its_agent(tmp_path: Path) -> None:
    settings = load_settings(home=tmp_path, per_agent_databases=True, agent="alice")
    path = settings.database_path("alice")
    path.parent.mkdir(parents=True)
    old_database(path)
    backend = open_backend(settings, "alice")
    history = open_history(settings, "alice", backend)
    try:
        assert history.agent == "alice"
        assert [m.content for m in history.all("telegram:42")] == ["hello", "hi there"]
        assert history.summary("telegram:42") == "greetings"
        assert history.for_agent("default").conversations() == []
    finally:
        history.close()
        backend.close()


def test_the_default_agents_own_conversations_in_a_per_agent_database_stay_its_own(tmp_path: Path) -> None:
    # `engram -a alice serve` with per_agent_databases: a token of agent `default` writes through a
    # view of alice's engine, into alice's file. Alice's next start handed those conversations to alice.
    from engram.engine import Engram

    settings = {"home": tmp_path, "per_agent_databases": True, "embeddings": {"provider": "none"}}
    path = load_settings(**settings, agent="alice").database_path("alice")
    path.parent.mkdir(parents=True)
    old_database(path)
    with Engram.from_settings(agent="alice", **settings) as alice:
        alice.for_agent("default").history.append("web:private", "user", "the default agent's own words")
        assert alice.history.conversations() == ["slack:C1", "telegram:42"]
    for adopted_by_an_earlier_version in (False, True):
        if adopted_by_an_earlier_version:  # which kept no mark of it
            db = Database(path)
            with db.write() as conn:
                conn.execute("DELETE FROM engram_meta WHERE name = 'history_adopted_by'")
            db.close()
        with Engram.from_settings(agent="alice", **settings) as alice:
            assert alice.history.conversations() == ["slack:C1", "telegram:42"]
            assert [m.content for m in alice.for_agent("default").history.all("web:private")] == [
                "the default agent's own words"]
