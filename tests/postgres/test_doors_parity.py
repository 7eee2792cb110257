"""What the doors show on a PostgreSQL store, against what they show on SQLite for the same data:
an agent's stats (CLI and HTTP), the audit trail's changed/previous fields, PtrClaw's and sclaw's
memory.db imported into the PostgreSQL history, history switched off, ClawCode's MCP ``remember``
context and hour phrases (the SDK's client over a real ``engram mcp``), the mem0 facade's import and
``remember_many``'s keyed update. Real subprocesses, a real server, no fakes but the embedder."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
from mcp import Client

from engram.compat.mem0 import Memory
from engram.db.postgres import PgDatabase
from engram.engine import Engram
from engram.store.base import MemoryStore
from engram.store.postgres import PostgresMemoryStore
from engram.store.sqlite import SqliteMemoryStore
from engram.testing.fakes import HashingEmbedder
from tests.importers.test_import_sqlite_sources import PTRCLAW_ROWS, PTRCLAW_SCHEMA, SCLAW_ROWS, SCLAW_SCHEMA
from tests.interfaces.test_mcp import _data, _error_text, _stdio
from tests.postgres.test_two_servers import Server

ENGRAM = [sys.executable, "-c", "from engram.interfaces.cli.app import main; main()"]
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "import"


def _cli(home: Path, url: str | None, *args: str, **env: str) -> Any:
    """``engram --json ARGS`` as a process on ``home`` (and the PostgreSQL ``url``); its JSON."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    full.update(ENGRAM_HOME=str(home), ENGRAM_EMBEDDINGS__PROVIDER="none", COLUMNS="200", **env)
    if url:
        full["ENGRAM_DATABASE_URL"] = url
    done = subprocess.run([*ENGRAM, "--json", *args], env=full, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, (args, done.stderr)
    return json.loads(done.stdout)


def _fill(store: MemoryStore) -> None:
    """The same memories on any store: two agents, sessions, global, links, superseded, types
    engram does not know, and memories stored without a vector."""
    embedder = HashingEmbedder()
    alice, s1 = Engram(store, agent="alice", embedder=embedder), Engram(store, agent="alice", session="s1", embedder=embedder)
    bob = Engram(store, agent="bob", embedder=embedder)
    types = ["experience", "conversation", "learned", "decision", "recipe"]
    categories = ["core", "knowledge", "conversation"]
    for i in range(12):
        alice.remember(f"alice fact {i}", key=f"a{i}", type=types[i % 5], category=categories[i % 3])
        s1.remember(f"alice session note {i}", key=f"s{i}", scope="session", type=types[(i + 1) % 5])
        bob.remember(f"bob fact {i}", key=f"b{i}")
    for i in range(3):
        alice.remember(f"global truth {i}", key=f"g{i}", scope="global", type=types[(i + 2) % 5])
        Engram(store, agent="alice").remember(f"alice without a vector {i}", key=f"nv{i}")
    for i in range(0, 8, 2):
        alice.link(f"a{i}", f"a{i + 1}")
    alice.link("a0", "g0")
    s1.link("s0", "a3")
    bob.link("b0", "g1")
    alice.supersede("a10", "a11")
    s1.supersede("s5", "s6")


def test_agent_stats_show_the_same_figures_as_on_sqlite(pg_url: str, tmp_path: Path) -> None:
    _fill(SqliteMemoryStore(tmp_path / "sqlite" / "memory.db"))
    pg_store = PostgresMemoryStore(PgDatabase.connect(pg_url))
    _fill(pg_store)
    pg_store.close()
    with psycopg.connect(pg_url) as conn:  # schema step 0013: the index the count reads
        assert conn.execute("SELECT 1 FROM pg_indexes WHERE indexname = 'memories_scope_kind'").fetchone()

    def figures(shown: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in shown.items() if k not in ("backend", "location", "latency")}

    for view in (("--agent", "alice"), ("--agent", "alice", "--session", "s1"), ("--agent", "bob"),
                 ("--agent", "nobody")):
        on_sqlite = _cli(tmp_path / "sqlite", None, *view, "stats")
        on_postgres = _cli(tmp_path / "pg", pg_url, *view, "stats")
        assert on_postgres["backend"] == "postgres" and on_postgres["location"].endswith(pg_url.rsplit("/", 1)[1])
        assert figures(on_postgres) == figures(on_sqlite), view
    alices = figures(_cli(tmp_path / "pg", pg_url, "--agent", "alice", "stats"))
    assert (alices["memories"], alices["links"], alices["vectors"]) == (17, 5, 14)
    assert alices["by_scope"] == {"agent:alice": 14, "global": 3, "session:alice/s1": 11}

    token = _cli(tmp_path / "pg", pg_url, "token", "create", "--agent", "alice")["token"]
    server = Server(pg_url, tmp_path / "serve")
    try:
        with server.client(token) as http:
            shown = http.get("/api/v1/stats").json()
        assert figures(shown) == {k: v for k, v in alices.items() if k != "location"}
    finally:
        server.stop()


def test_an_update_names_what_changed_and_keeps_what_it_replaced(pg_url: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    _cli(home, pg_url, "--agent", "alice", "remember", "Deploys run on Fridays", "--key", "deploy",
         "--tags", "ops,ci", "--entity", "ci", "--importance", "0.4")
    _cli(home, pg_url, "--agent", "alice", "update", "deploy", "--tags", "ops", "--entity", "jenkins")
    _cli(home, pg_url, "--agent", "alice", "update", "deploy", "--content", "Deploys run on Mondays",
         "--importance", "0.9")
    updates = [e for e in _cli(home, pg_url, "--agent", "alice", "audit") if e["action"] == "updated"]
    assert [(e["detail"]["changed"], e["detail"]["previous"]) for e in updates] == [
        (["content", "importance"], {"content": "Deploys run on Fridays", "importance": 0.4}),
        (["tags", "related_entity"], {}),
    ]


def _database(path: Path, schema: str, rows: str) -> Path:
    conn = sqlite3.connect(path)
    conn.executescript(schema + rows)
    conn.commit()
    conn.close()
    return path


def _history_rows(pg_url: str) -> tuple[int, int]:
    with psycopg.connect(pg_url) as conn:
        messages = conn.execute("SELECT COUNT(*) FROM history_messages").fetchone()[0]
        summaries = conn.execute("SELECT COUNT(*) FROM history_summaries").fetchone()[0]
    return int(messages), int(summaries)


def test_ptrclaw_and_sclaw_databases_import_into_postgres(pg_url: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    ptrclaw = _database(tmp_path / "ptrclaw.db", PTRCLAW_SCHEMA, PTRCLAW_ROWS)
    first = _cli(home, pg_url, "import", str(ptrclaw))
    assert (first["kind"], first["imported"], first["skipped"]) == ("ptrclaw-sqlite", 3, 0), first
    assert _cli(home, pg_url, "import", str(ptrclaw))["skipped"] == 3
    assert [m["key"] for m in _cli(home, pg_url, "neighbours", "user-prefers-python")] == ["project-uses-python"]

    # Two tool results "ok" of one instant, the first answering c1, the second c2: both kept.
    sclaw = _database(tmp_path / "sclaw.db", SCLAW_SCHEMA, SCLAW_ROWS + """
INSERT INTO messages VALUES ('telegram:1:', 1, 'assistant', '', '', '',
    '[{"id": "c1", "name": "off", "arguments": "{}"}, {"id": "c2", "name": "off", "arguments": "{}"}]', 0,
    '2026-02-09T10:30:01Z');
INSERT INTO messages VALUES ('telegram:1:', 2, 'tool', 'ok', 'off', 'c1', '[]', 0, '2026-02-09T10:30:02Z');
INSERT INTO messages VALUES ('telegram:1:', 3, 'tool', 'ok', 'off', 'c2', '[]', 'false', '2026-02-09T10:30:02Z');
""")
    summary = _cli(home, pg_url, "import", str(sclaw))
    assert (summary["kind"], summary["imported"], summary["messages_imported"], summary["summaries_imported"]) == (
        "sclaw", 2, 8, 1), summary
    assert _history_rows(pg_url) == (8, 1)  # in the PostgreSQL history, not a file of the home
    again = _cli(home, pg_url, "import", str(sclaw))
    assert (again["imported"], again["messages_skipped"], again["summaries_skipped"]) == (0, 8, 1), again
    shown = _cli(home, pg_url, "history", "show", "telegram:42")
    assert shown["summary"] == "Earlier the user asked about flights to Oslo."
    assert [(m["role"], m["content"]) for m in shown["messages"]][2:] == [
        ("tool", "sunny, 4 degrees"), ("assistant", "It is sunny in Oslo.")]
    tools = [m for m in _cli(home, pg_url, "history", "show", "telegram:1")["messages"] if m["role"] == "tool"]
    assert [(m["tool_call_id"], m["metadata"]["sclaw"].get("is_error")) for m in tools] == [("c1", None), ("c2", None)]

    # A 20-message limit keeps the last 20 of 30 and says so.
    rows = "".join(f"INSERT INTO messages VALUES ('telegram:7:', {i}, '{'user' if i % 2 else 'assistant'}', "
                   f"'message {i}', '', '', '[]', 0, '2026-02-09T10:00:{i:02d}Z');\n" for i in range(1, 31))
    trimmed = _cli(home, pg_url, "import", str(_database(tmp_path / "long.db", SCLAW_SCHEMA, rows)),
                   ENGRAM_HISTORY__MAX_HISTORY_LEN="20")
    assert trimmed["messages_imported"] == 20 and "10 older messages not kept" in trimmed["warnings"][0], trimmed


def test_history_switched_off_stores_no_message_in_postgres(pg_url: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    _cli(home, pg_url, "history", "append", "cli:c1", "kept from before")
    off = {"ENGRAM_HISTORY__ENABLED": "false"}
    assert _cli(home, pg_url, "history", "append", "cli:c1", "hello", **off)["stored"] is False
    sclaw = _database(tmp_path / "sclaw.db", SCLAW_SCHEMA, SCLAW_ROWS)
    summary = _cli(home, pg_url, "import", str(sclaw), **off)
    assert (summary["imported"], summary["messages_imported"], summary["summaries_imported"]) == (2, 0, 0)
    assert "conversation history is off" in summary["warnings"][-1]
    assert _history_rows(pg_url) == (1, 0)
    assert [m["content"] for m in _cli(home, pg_url, "history", "show", "cli:c1", **off)["messages"]] == [
        "kept from before"]


def test_mcp_remember_context_and_hour_phrases_on_postgres(pg_url: str, tmp_path: Path) -> None:
    params = _stdio(tmp_path / "home", "alice", tools=None)
    params.env.update(ENGRAM_DATABASE_URL=pg_url, ENGRAM_EMBEDDINGS__PROVIDER="none",
                      ENGRAM_TIME__ZONE="Asia/Kolkata")  # hours starting at :30 UTC
    now = time.time()
    left = 3600 - (now - 1800) % 3600
    if left < 120:  # the phrases read clock hours: keep the test inside one
        time.sleep(left + 1)
        now = time.time()
    hour_start = now - (now - 1800) % 3600  # the clock hour in Asia/Kolkata (+05:30) holding now
    two_hours_back = hour_start - 2 * 3600 + 60

    async def run() -> None:
        async with Client(params) as client:
            stored = _data(await client.call_tool("remember", {
                "content": "User prefers Python for scripting tasks", "tags": ["preferences"],
                "context": {"session_id": "sess_123", "timestamp": "2026-02-09T10:30:00Z", "source": "chat"}}))
            found = _data(await client.call_tool("recall", {
                "query": "programming language prefer", "filters": {"session_id": "sess_123"}}))["results"]
            assert [(r["memory_id"], r["timestamp"]) for r in found] == [(stored["memory_id"], "2026-02-09T10:30:00Z")]
            assert (found[0]["context"]["scope"], found[0]["context"]["source"]) == ("session:alice/sess_123", "chat")
            exact = _data(await client.call_tool("remember", {
                "content": "The standup is at nine", "context": {"timestamp": "2026-02-09T16:00:00.25+05:30"}}))
            got = _data(await client.call_tool("get", {"memory_id": exact["memory_id"]}))
            assert (got["created_at"], got["scope"]) == (1770633000.25, "agent:alice")
            other = _data(await client.call_tool("recall", {"query": "programming language prefer",
                                                            "filters": {"session_id": "sess_999"}}))
            assert other["results"] == []
            refused = _error_text(await client.call_tool("remember", {"content": "not stored",
                                                                      "context": {"timestamp": "0001-01-01"}}))
            assert "context.timestamp" in refused

            _data(await client.call_tool("remember", {"content": "The parser was deployed",
                                                      "context": {"timestamp": two_hours_back}}))
            _data(await client.call_tool("remember", {"content": "The parser was reverted",
                                                      "context": {"timestamp": hour_start + 1}}))
            recalled = _data(await client.call_tool("recall", {"query": "parser", "since": "2 hours ago",
                                                               "until": "2 hours ago"}))["results"]
            assert [r["content"] for r in recalled] == ["The parser was deployed"]
            listed = _data(await client.call_tool("list", {"since": "an hour ago"}))["memories"]
            assert [m["content"] for m in listed] == ["The parser was reverted"]
            assert len(_data(await client.call_tool("list", {}))["memories"]) == 3  # the session's one not listed

    asyncio.run(run())


def test_mem0_import_and_remember_many_keep_fields_on_postgres(new_database: Callable[[], str], tmp_path: Path) -> None:
    m = Memory.from_config({"database_url": new_database(), "home": str(tmp_path / "mem0"),
                            "embeddings": {"provider": "none"}})
    try:
        export = (FIXTURES / "mem0.json").read_text(encoding="utf-8")
        assert m.import_mem0(export) == {"imported": 3, "skipped": 0, "forgotten": 0}
        paris = next(r for r in m.get_all(user_id="alex")["results"] if r["memory"].startswith("Is travelling"))
        assert paris["created_at"].startswith("2024-02-26T06:57:00")
        m.update(paris["id"], "Is travelling to Paris in July")
        assert m.import_mem0(export) == {"imported": 0, "skipped": 3, "forgotten": 0}
        assert m.get(paris["id"])["memory"] == "Is travelling to Paris in July"
    finally:
        m.close()

    mem = Engram.from_settings(database_url=new_database(), home=tmp_path / "lib", embeddings={"provider": "none"})
    try:
        mem.remember("first wording", key="plan", tags=["work"], metadata={"owner": "ana"})
        (kept,) = mem.remember_many([{"content": "second wording", "key": "plan"}])
        assert kept.action == "updated" and kept.previous is not None and kept.previous.content == "first wording"
        assert (mem.get("plan").tags, mem.get("plan").metadata) == (("work",), {"owner": "ana"})
        mem.remember_many([{"content": "third", "key": "plan", "tags": []},
                           {"content": "fourth", "key": "plan", "metadata": {"owner": "bo"}}])
        stored = mem.get("plan")
        assert (stored.content, stored.tags, stored.metadata) == ("fourth", (), {"owner": "bo"})
    finally:
        mem.close()


def test_mem0_filters_and_a_deleted_memorys_history_on_postgres(new_database: Callable[[], str], tmp_path: Path) -> None:
    # The facade's operators reach PostgreSQL's SQL (store/where_sql.py), and a deleted memory's
    # history comes from the shared database's audit trail.
    m = Memory.from_config({"database_url": new_database(), "home": str(tmp_path / "mem0"),
                            "embeddings": {"provider": "none"}})
    try:
        for text, priority in (("Ship the alpha release", 9), ("Write the beta docs", 5), ("Plan the offsite", 2)):
            m.add(text, user_id="pm", metadata={"priority": priority, "title": text.upper()}, infer=False)
        found = m.get_all(filters={"user_id": "pm", "OR": [{"priority": {"gte": 9}}, {"title": {"icontains": "beta"}}]})
        assert sorted(r["memory"] for r in found["results"]) == ["Ship the alpha release", "Write the beta docs"]
        offsite = m.get_all(filters={"user_id": "pm", "priority": {"lt": 3}})["results"][0]["id"]
        m.update(offsite, "Plan the offsite in May")
        m.delete(offsite)
        assert [(h["event"], h["new_memory"]) for h in m.history(offsite)] == [
            ("ADD", "Plan the offsite"), ("UPDATE", "Plan the offsite in May"), ("DELETE", None)]
    finally:
        m.close()
