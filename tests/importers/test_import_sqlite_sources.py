"""PtrClaw's and sclaw's SQLite ``memory.db`` through ``engram import`` (CLI, real SQLite files):
databases built in the test with each reference's schema (PtrClaw 000 "SqliteMemory", sclaw 001
"Database Schema"), detected by their tables, imported with their fields, links, history and
summaries; a second run imports nothing; a malformed row imports nothing and is named; and engram
refuses to open either as its own database."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from engram.engine import Engram
from engram.errors import ConfigError, SnapshotError, ValidationError
from engram.interfaces.cli.app import app

from .cli_runs import as_json, run, runner

PTRCLAW_SCHEMA = """
CREATE TABLE memories (
    id TEXT PRIMARY KEY,
    key TEXT UNIQUE NOT NULL,
    content TEXT NOT NULL,
    category TEXT NOT NULL,
    timestamp INTEGER NOT NULL,
    session_id TEXT NOT NULL,
    embedding BLOB,
    last_accessed INTEGER
);
CREATE VIRTUAL TABLE memories_fts USING fts5(key, content, content=memories, content_rowid=rowid);
CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, key, content) VALUES (new.rowid, new.key, new.content);
END;
CREATE TABLE memory_links (
    from_key TEXT NOT NULL,
    to_key TEXT NOT NULL,
    PRIMARY KEY (from_key, to_key)
);
"""
PTRCLAW_ROWS = """
INSERT INTO memories VALUES ('e1', 'user-prefers-python', 'User prefers Python for scripting', 'core',
                             1770631800, '', NULL, NULL);
INSERT INTO memories VALUES ('e2', 'project-uses-python', 'The billing project is written in Python 3.11',
                             'knowledge', 1770631900, 'sess_7', x'00000000', 1770700000);
INSERT INTO memories VALUES ('e3', 'lunch-talk', '  we talked about lunch  ', 'conversation', 1770632000, '', NULL, 0);
INSERT INTO memory_links VALUES ('user-prefers-python', 'project-uses-python');
INSERT INTO memory_links VALUES ('project-uses-python', 'user-prefers-python');
INSERT INTO memory_links VALUES ('lunch-talk', 'forgotten-key');
"""
SCLAW_SCHEMA = """
CREATE TABLE schema_version (version INTEGER PRIMARY KEY);
CREATE TABLE messages (
    session_id TEXT NOT NULL, seq INTEGER NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL DEFAULT '',
    name TEXT NOT NULL DEFAULT '', tool_id TEXT NOT NULL DEFAULT '', tool_calls TEXT NOT NULL DEFAULT '[]',
    is_error INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE summaries (
    session_id TEXT PRIMARY KEY, summary TEXT NOT NULL,
    updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
);
CREATE TABLE facts (
    id TEXT PRIMARY KEY, content TEXT NOT NULL, source TEXT NOT NULL DEFAULT '', tags TEXT NOT NULL DEFAULT '[]',
    metadata TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
);
CREATE VIRTUAL TABLE facts_fts USING fts5(content, content=facts, content_rowid=rowid);
INSERT INTO schema_version VALUES (1);
"""
SCLAW_ROWS = """
INSERT INTO facts VALUES ('1770631800000000000-0-1', 'User prefers dark mode', 'telegram:42:', '["preferences"]',
                          '{"kind": "preference"}', '2026-02-09T10:30:00.123456789Z');
INSERT INTO facts VALUES ('1770631800000000000-1-2', 'User''s name is Alice', '', '[]', '{}', '2026-02-09T10:31:00Z');
INSERT INTO messages VALUES ('telegram:42:', 1, 'user', 'What is the weather in Oslo?', '', '', '[]', 0,
                             '2026-02-09T10:30:00.100Z');
INSERT INTO messages VALUES ('telegram:42:', 2, 'assistant', '', '', '',
                             '[{"id": "c1", "name": "weather", "arguments": "{\\"city\\": \\"Oslo\\"}"}]', 0,
                             '2026-02-09T10:30:01Z');
INSERT INTO messages VALUES ('telegram:42:', 3, 'tool', 'sunny, 4 degrees', 'weather', 'c1', '[]', 0,
                             '2026-02-09T10:30:02Z');
INSERT INTO messages VALUES ('telegram:42:', 4, 'assistant', 'It is sunny in Oslo.', '', '', '[]', 0,
                             '2026-02-09T10:30:03Z');
INSERT INTO messages VALUES ('a1b2c3', 1, 'tool', 'a result whose call was trimmed', '', 'gone', '[]', 0,
                             '2026-02-09T09:00:00Z');
INSERT INTO messages VALUES ('a1b2c3', 2, 'user', 'Hello again', '', '', '[]', 0, '2026-02-09T09:00:01Z');
INSERT INTO summaries VALUES ('telegram:42:', 'Earlier the user asked about flights to Oslo.', '2026-02-09T10:29:00Z');
"""


def database(path: Path, schema: str, rows: str = "") -> Path:
    conn = sqlite3.connect(path)
    conn.executescript(schema + rows)
    conn.commit()
    conn.close()
    return path


@pytest.fixture(autouse=True)
def _no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_EMBEDDINGS__PROVIDER", "none")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("kind", [None, "ptrclaw-sqlite"])
def test_ptrclaw_memory_db_keys_categories_times_and_links(tmp_path: Path, kind: str | None) -> None:
    home = tmp_path / "home"
    db = database(tmp_path / "memory.db", PTRCLAW_SCHEMA, PTRCLAW_ROWS)
    before = digest(db)
    args = ["import", str(db), *(["--from", kind] if kind else [])]
    first = as_json(home, *args)
    assert (first["kind"], first["imported"], first["skipped"]) == ("ptrclaw-sqlite", 3, 0), first
    assert first["warnings"] == ["memory_links row 3: no memory has the key 'forgotten-key'; link not imported"]
    again = as_json(home, *args)
    assert (again["imported"], again["skipped"]) == (0, 3), again
    assert digest(db) == before  # read-only: the file is as it was

    by_key = {m["key"]: m for m in as_json(home, "list")}
    assert set(by_key) == {"user-prefers-python", "project-uses-python", "lunch-talk"}
    core, project, lunch = by_key["user-prefers-python"], by_key["project-uses-python"], by_key["lunch-talk"]
    assert (core["category"], core["type"], core["created_at"], core["source"]) == ("core", "learned", 1770631800.0,
                                                                                   "ptrclaw")
    assert (project["category"], project["last_accessed"]) == ("knowledge", 1770700000.0)
    assert project["metadata"] == {"session_id": "sess_7", "ptrclaw": {"id": "e2"}}
    assert (lunch["category"], lunch["type"], lunch["last_accessed"]) == ("conversation", "conversation", None)
    assert lunch["content"] == "  we talked about lunch  "  # byte for byte
    assert {m["key"] for m in as_json(home, "neighbours", "user-prefers-python")} == {"project-uses-python"}
    hits = as_json(home, "recall", "which language is the billing project written in")["hits"]
    assert hits[0]["memory"]["key"] == "project-uses-python"


@pytest.mark.parametrize("kind", [None, "sclaw"])
def test_sclaw_memory_db_facts_history_and_summaries(tmp_path: Path, kind: str | None) -> None:
    home = tmp_path / "home"
    db = database(tmp_path / "memory.db", SCLAW_SCHEMA, SCLAW_ROWS)
    args = ["import", str(db), *(["--from", kind] if kind else [])]
    first = as_json(home, *args)
    assert (first["kind"], first["imported"], first["messages_imported"], first["summaries_imported"]) == (
        "sclaw", 2, 5, 1), first
    assert first["warnings"] == [
        "messages row 5: the tool result for 'gone' has no call before it in sclaw:a1b2c3 (sclaw trimmed it); not imported"]
    again = as_json(home, *args)
    assert (again["imported"], again["skipped"], again["messages_imported"], again["messages_skipped"],
            again["summaries_imported"], again["summaries_skipped"]) == (0, 2, 0, 5, 0, 1), again

    [dark] = as_json(home, "list", "--meta", "kind=preference")  # sclaw's SearchByMetadata
    assert (dark["content"], dark["tags"], dark["source"]) == ("User prefers dark mode", ["preferences"], "sclaw")
    # (with the SHA-256 of the text the import brought: a re-import brings sclaw's rewrite unless engram changed it)
    assert dark["metadata"]["sclaw"] == {"id": "1770631800000000000-0-1", "source": "telegram:42:",
                                         "imported_text_sha256": hashlib.sha256(b"User prefers dark mode").hexdigest()}
    assert dark["created_at"] == pytest.approx(1770633000.123457)
    shown = as_json(home, "history", "show", "telegram:42")
    assert [(m["role"], m["content"]) for m in shown["messages"]] == [
        ("user", "What is the weather in Oslo?"), ("assistant", ""), ("tool", "sunny, 4 degrees"),
        ("assistant", "It is sunny in Oslo.")]
    assert shown["messages"][1]["tool_calls"][0]["name"] == "weather"
    assert shown["messages"][2]["tool_call_id"] == "c1" and shown["messages"][0]["created_at"] == 1770633000.1
    assert shown["summary"] == "Earlier the user asked about flights to Oslo."
    # A session id that is no channel:chat key is the chat sclaw:<id>.
    assert [m["content"] for m in as_json(home, "history", "show", "sclaw:a1b2c3")["messages"]] == ["Hello again"]


@pytest.mark.parametrize("system", ["ptrclaw", "sclaw"])
def test_a_wal_database_is_imported_without_a_file_left_beside_it(tmp_path: Path, system: str) -> None:
    # Both systems keep their memory.db in WAL mode. Opened read-only, SQLite made its -wal and -shm
    # files and could not remove them: an import left two files among the other system's.
    schema, rows = (PTRCLAW_SCHEMA, PTRCLAW_ROWS) if system == "ptrclaw" else (SCLAW_SCHEMA, SCLAW_ROWS)
    source = tmp_path / "source"
    source.mkdir()
    db = database(source / "memory.db", "PRAGMA journal_mode = WAL;" + schema, rows)
    before = digest(db)
    assert as_json(tmp_path / "home", "import", str(db))["imported"] >= 2
    assert sorted(p.name for p in source.iterdir()) == ["memory.db"] and digest(db) == before


def test_a_facts_own_sclaw_metadata_is_kept_beside_engrams_provenance(tmp_path: Path) -> None:
    # sclaw's metadata is the user's JSON: its own "sclaw" entry must not be overwritten by where
    # engram records the fact came from.
    home = tmp_path / "home"
    own = {"channel": "telegram", "note": "caf\u00e9 \u2615"}
    db = database(tmp_path / "memory.db", SCLAW_SCHEMA, SCLAW_ROWS + (
        "UPDATE facts SET metadata = '" + json.dumps({"kind": "name", "sclaw": own}) + "' WHERE rowid = 2;"))
    first = as_json(home, "import", str(db))
    assert first["imported"] == 2, first
    assert "facts row 2.metadata.sclaw: kept as metadata.sclaw.own (metadata.sclaw holds where the record came " \
           "from in sclaw)" in first["warnings"]
    [alice] = as_json(home, "list", "--meta", "kind=name")
    assert alice["metadata"] == {"kind": "name", "sclaw": {
        "id": "1770631800000000000-1-2", "own": own,
        "imported_text_sha256": hashlib.sha256(b"User's name is Alice").hexdigest()}}
    [dark] = as_json(home, "list", "--meta", "kind=preference")  # no own "sclaw": as before, no "own"
    assert "own" not in dark["metadata"]["sclaw"]


def test_a_summary_engram_already_holds_is_kept_and_named(tmp_path: Path) -> None:
    home = tmp_path / "home"
    db = database(tmp_path / "memory.db", SCLAW_SCHEMA, SCLAW_ROWS)
    run(home, "history", "summary", "telegram:42", "--set", "engram's own compaction")
    summary = as_json(home, "import", str(db))
    assert (summary["summaries_imported"], summary["summaries_skipped"]) == (0, 1)
    assert any(w.startswith("summaries row 1: telegram:42 already has another summary") for w in summary["warnings"])
    assert as_json(home, "history", "show", "telegram:42")["summary"] == "engram's own compaction"


def test_ptrclaw_category_of_its_own_is_knowledge_as_ptrclaw_reads_it(tmp_path: Path) -> None:
    """PtrClaw reads any category but ``core`` and ``conversation`` as knowledge (its
    ``category_from_string``): a database PtrClaw works with imports whole, such rows as knowledge
    with their own category kept in the metadata, and one warning per category with its rows."""
    home = tmp_path / "home"
    db = database(tmp_path / "memory.db", PTRCLAW_SCHEMA, PTRCLAW_ROWS + """
UPDATE memories SET category = 'Feelings' WHERE key IN ('lunch-talk', 'user-prefers-python');
UPDATE memories SET category = '' WHERE key = 'project-uses-python';
""")
    summary = as_json(home, "import", str(db))
    assert (summary["imported"], summary["skipped"]) == (3, 0), summary
    assert "memories: 2 rows of category \"Feelings\" imported as knowledge, as PtrClaw reads them (the category is" \
           " kept in metadata.ptrclaw.category)" in summary["warnings"], summary["warnings"]
    assert "memories: 1 row of category \"\" imported as knowledge, as PtrClaw reads it (the category is kept in" \
           " metadata.ptrclaw.category)" in summary["warnings"], summary["warnings"]
    by_key = {m["key"]: m for m in as_json(home, "list")}
    lunch = by_key["lunch-talk"]
    assert (lunch["category"], lunch["type"], lunch["content"]) == ("knowledge", "learned", "  we talked about lunch  ")
    assert lunch["metadata"]["ptrclaw"] == {"id": "e3", "category": "Feelings"}
    assert by_key["user-prefers-python"]["metadata"]["ptrclaw"] == {"id": "e1", "category": "Feelings"}
    assert by_key["project-uses-python"]["metadata"]["ptrclaw"] == {"id": "e2", "category": ""}
    assert as_json(home, "import", str(db))["skipped"] == 3


@pytest.mark.parametrize("shape", ["array", "object"])
def test_ptrclaw_json_file_reads_a_category_of_its_own_as_its_database_does(tmp_path: Path, shape: str) -> None:
    """PtrClaw's JSON memory file (``snapshot_export``'s array, or its JSON backend's
    ``{"entries", "embeddings"}``, entries as its ``entry_to_json`` writes them) with a category PtrClaw
    reads as knowledge imports whole, as its SQLite database does: knowledge, the name kept in
    ``metadata.ptrclaw.category``, one warning per category naming its entries. It was refused whole."""
    entries = [
        {"id": "e1", "key": "user-prefers-python", "content": "User prefers Python for scripting",
         "category": "Feelings", "timestamp": 1770631800, "session_id": ""},
        {"id": "e2", "key": "project-uses-python", "content": "The billing project is written in Python 3.11",
         "category": "knowledge", "timestamp": 1770631900, "session_id": "sess_7", "last_accessed": 1770700000,
         "links": ["user-prefers-python"]},
        {"id": "e3", "key": "lunch-talk", "content": "  we talked about lunch  ", "category": "Feelings",
         "timestamp": 1770632000, "session_id": ""},
        {"id": "e4", "key": "soul", "content": "Curious and kind", "category": "", "timestamp": 1770632100,
         "session_id": ""},
    ]
    source = tmp_path / "memory.json"
    document = entries if shape == "array" else {"entries": entries, "embeddings": {"soul": [0.5, 0.25]}}
    source.write_text(json.dumps(document, indent=2), encoding="utf-8")
    home = tmp_path / "home"
    summary = as_json(home, "import", str(source))
    assert (summary["imported"], summary["skipped"]) == (4, 0), summary
    assert "entries[0].category (and 1 more entry): 2 entries of category \"Feelings\" imported as knowledge, as " \
           "PtrClaw reads them (the category is kept in metadata.ptrclaw.category)" in summary["warnings"], summary
    assert "entries[3].category: 1 entry of category \"\" imported as knowledge, as PtrClaw reads it (the category " \
           "is kept in metadata.ptrclaw.category)" in summary["warnings"], summary
    by_key = {m["key"]: m for m in as_json(home, "list")}
    lunch = by_key["lunch-talk"]
    assert (lunch["category"], lunch["type"], lunch["content"]) == ("knowledge", "learned", "  we talked about lunch  ")
    assert lunch["metadata"] == {"ptrclaw": {"category": "Feelings"}}
    assert by_key["soul"]["metadata"] == {"ptrclaw": {"category": ""}}
    assert (by_key["project-uses-python"]["category"], by_key["project-uses-python"]["metadata"]) == (
        "knowledge", {"session_id": "sess_7"})  # an engram category: as before, nothing added
    assert as_json(home, "import", str(source))["skipped"] == 4


def test_engram_snapshot_still_refuses_a_category_engram_has_not(tmp_path: Path) -> None:
    """engram's own snapshot names only engram's categories: one that names another is malformed."""
    source = tmp_path / "snapshot.json"
    source.write_text(json.dumps({"format": "engram-snapshot", "version": 1, "memories": [
        {"content": "fine"}, {"content": "odd", "category": "Feelings"}]}), encoding="utf-8")
    done = runner.invoke(app, ["--home", str(tmp_path / "home"), "import", str(source)])
    assert isinstance(done.exception, SnapshotError) and str(done.exception).startswith(
        'memories[1].category: unknown category "Feelings"'), (done.output, done.exception)


MALFORMED = [
    ("ptrclaw", "UPDATE memories SET content = '   ' WHERE key = 'lunch-talk'", "memories row 3.content"),
    ("ptrclaw", "UPDATE memories SET timestamp = 'yesterday' WHERE key = 'user-prefers-python'",
     "memories row 1.timestamp"),
    ("ptrclaw", "UPDATE memories SET content = x'00ff' WHERE key = 'project-uses-python'", "memories row 2.content"),
    # SQLite keeps the bytes a program gives it: text that is not UTF-8 is named by row and column.
    ("ptrclaw", "UPDATE memories SET content = CAST(x'41ff42' AS TEXT) WHERE key = 'lunch-talk'",
     "memories row 3.content: is not UTF-8 text"),
    ("sclaw", "UPDATE messages SET content = CAST(x'41ff42' AS TEXT) WHERE seq = 4", "messages row 4.content"),
    ("sclaw", "UPDATE facts SET tags = '[\"unclosed' WHERE rowid = 2", "facts row 2.tags"),
    ("sclaw", "UPDATE facts SET metadata = '[1, 2]' WHERE rowid = 1", "facts row 1.metadata"),
    ("sclaw", "UPDATE messages SET created_at = 'soon' WHERE seq = 4", "messages row 4.created_at"),
    ("sclaw", "UPDATE messages SET role = 'narrator' WHERE seq = 1 AND session_id = 'telegram:42:'",
     "messages row 1.role"),
    ("sclaw", "UPDATE messages SET session_id = 'a b' WHERE session_id = 'a1b2c3'", "messages row 5.session_id"),
    ("sclaw", "UPDATE messages SET is_error = 'maybe' WHERE seq = 3", "messages row 3.is_error"),
]


@pytest.mark.parametrize(("system", "change", "named"), MALFORMED)
def test_a_malformed_row_imports_nothing_and_is_named(tmp_path: Path, system: str, change: str, named: str) -> None:
    home = tmp_path / "home"
    schema, rows = (PTRCLAW_SCHEMA, PTRCLAW_ROWS) if system == "ptrclaw" else (SCLAW_SCHEMA, SCLAW_ROWS)
    db = database(tmp_path / "memory.db", schema, rows + change + ";")
    result = runner.invoke(app, ["--home", str(home), "import", str(db)])
    assert isinstance(result.exception, SnapshotError) and named in str(result.exception), result.exception
    assert as_json(home, "count") == {"count": 0}
    assert as_json(home, "history", "list") == []


def test_a_table_without_its_columns_is_named(tmp_path: Path) -> None:
    home = tmp_path / "home"
    db = database(tmp_path / "memory.db", SCLAW_SCHEMA.replace("CREATE TABLE summaries (\n    session_id TEXT PRIMARY KEY"
                                                               ", summary TEXT NOT NULL",
                                                               "CREATE TABLE summaries (\n    session_id TEXT PRIMARY KEY"
                                                               ", text TEXT NOT NULL"))
    result = runner.invoke(app, ["--home", str(home), "import", str(db), "--from", "sclaw"])
    assert isinstance(result.exception, SnapshotError)
    assert str(result.exception).startswith("summaries: has no column summary"), result.exception


def test_other_sqlite_files_and_other_doors(tmp_path: Path) -> None:
    home = tmp_path / "home"
    other = database(tmp_path / "other.db", "CREATE TABLE notes (body TEXT);")
    result = runner.invoke(app, ["--home", str(home), "import", str(other)])
    assert isinstance(result.exception, SnapshotError) and "ptrclaw-sqlite, sclaw" in str(result.exception)
    # A .db file without SQLite's header (empty, encrypted, truncated at birth) is named as that,
    # not as a malformed JSON snapshot.
    for name, data in (("empty.db", b""), ("encrypted.sqlite", bytes(range(256)) * 8)):
        (tmp_path / name).write_bytes(data)
        refused = runner.invoke(app, ["--home", str(home), "import", str(tmp_path / name)])
        assert isinstance(refused.exception, SnapshotError), refused.output
        assert "is not a SQLite database: it does not start with SQLite's header" in str(refused.exception)
    ptr = database(tmp_path / "ptr.db", PTRCLAW_SCHEMA, PTRCLAW_ROWS)
    # Read as a document by mistake: named as a database, not a UTF-8 decoding error.
    wrong = runner.invoke(app, ["--home", str(home), "import", str(ptr), "--from", "snapshot"])
    assert isinstance(wrong.exception, SnapshotError) and "is a SQLite database" in str(wrong.exception)
    with Engram.from_settings(home=tmp_path / "lib") as mem:
        assert mem.import_from(ptr).imported == 3  # the library door, detected from the Path
        with pytest.raises(ValidationError) as refused:
            mem.import_from("[]", "sclaw")  # a database is a file, never text
        assert refused.value.field == "source"


@pytest.mark.parametrize("system", ["ptrclaw", "sclaw"])
def test_engram_refuses_another_systems_database_as_its_own(tmp_path: Path, system: str) -> None:
    schema, rows = (PTRCLAW_SCHEMA, PTRCLAW_ROWS) if system == "ptrclaw" else (SCLAW_SCHEMA, SCLAW_ROWS)
    db = database(tmp_path / "memory.db", schema, rows)
    before = digest(db)
    env = {**os.environ, "ENGRAM_HOME": str(tmp_path / "home"), "ENGRAM_PATH": str(db), "COLUMNS": "400"}
    done = subprocess.run([sys.executable, "-m", "engram", "list"], capture_output=True, text=True, env=env,
                          timeout=120)
    name = {"ptrclaw": "PtrClaw", "sclaw": "sclaw"}[system]
    assert done.returncode == 4, done.stderr
    assert f"is a {name} database" in done.stderr and f"engram import {db}" in done.stderr, done.stderr
    assert "already exists" not in done.stderr
    assert digest(db) == before  # no engram table was added to it
    with pytest.raises(ConfigError):
        Engram.from_settings(home=tmp_path / "lib", path=db)  # the library door
    assert digest(db) == before


def test_identical_messages_of_one_instant_are_each_imported(tmp_path: Path) -> None:
    # Two parallel tool calls answered "ok" in the same millisecond: two messages, each answering its call.
    home = tmp_path / "home"
    db = database(tmp_path / "memory.db", SCLAW_SCHEMA, """
INSERT INTO messages VALUES ('telegram:1:', 1, 'user', 'turn both lights off', '', '', '[]', 0, '2026-02-09T10:30:00Z');
INSERT INTO messages VALUES ('telegram:1:', 2, 'assistant', '', '', '',
    '[{"id": "c1", "name": "off", "arguments": "{}"}, {"id": "c2", "name": "off", "arguments": "{}"}]', 0,
    '2026-02-09T10:30:01Z');
INSERT INTO messages VALUES ('telegram:1:', 3, 'tool', 'ok', 'off', 'c1', '[]', 0, '2026-02-09T10:30:02.000Z');
INSERT INTO messages VALUES ('telegram:1:', 4, 'tool', 'ok', 'off', 'c2', '[]', 0, '2026-02-09T10:30:02.000Z');
INSERT INTO messages VALUES ('telegram:1:', 5, 'user', 'yes', '', '', '[]', 0, '2026-02-09T10:30:03Z');
INSERT INTO messages VALUES ('telegram:1:', 6, 'user', 'yes', '', '', '[]', 0, '2026-02-09T10:30:03Z');
""")
    first = as_json(home, "import", str(db))
    assert (first["messages_imported"], first["messages_skipped"]) == (6, 0), first
    shown = as_json(home, "history", "show", "telegram:1")["messages"]
    assert [(m["role"], m["content"], m.get("tool_call_id")) for m in shown[2:]] == [
        ("tool", "ok", "c1"), ("tool", "ok", "c2"), ("user", "yes", None), ("user", "yes", None)]
    again = as_json(home, "import", str(db))
    assert (again["messages_imported"], again["messages_skipped"]) == (0, 6), again
    assert len(as_json(home, "history", "show", "telegram:1")["messages"]) == 6


def test_messages_the_history_limit_trims_away_are_reported_not_counted(tmp_path: Path) -> None:
    home = tmp_path / "home"
    rows = "".join(f"INSERT INTO messages VALUES ('telegram:7:', {i}, '{'user' if i % 2 else 'assistant'}', "
                   f"'message {i}', '', '', '[]', 0, '2026-02-09T10:{i // 60:02d}:{i % 60:02d}Z');\n"
                   for i in range(1, 31))
    db = database(tmp_path / "memory.db", SCLAW_SCHEMA, rows)
    summary = as_json(home, "--config", str(_config(tmp_path, "history:\n  max_history_len: 20\n")), "import", str(db))
    assert summary["messages_imported"] == 20, summary
    assert summary["warnings"] == ["telegram:7: 10 older messages not kept: a conversation holds at most "
                                   "history.max_history_len (20) messages"]
    shown = as_json(home, "history", "show", "telegram:7")["messages"]
    assert [m["content"] for m in shown] == [f"message {i}" for i in range(11, 31)]


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "engram.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_tool_results_error_flag_written_as_text_is_read_as_it_says(tmp_path: Path) -> None:
    # SQLite keeps 'false' as text in sclaw's INTEGER is_error column: it must not read as an error.
    home = tmp_path / "home"
    db = database(tmp_path / "memory.db", SCLAW_SCHEMA, SCLAW_ROWS + """
UPDATE messages SET is_error = 'false' WHERE seq = 3 AND session_id = 'telegram:42:';
INSERT INTO messages VALUES ('telegram:42:', 5, 'assistant', '', '', '',
    '[{"id": "c2", "name": "weather", "arguments": "{}"}]', 0, '2026-02-09T10:30:04Z');
INSERT INTO messages VALUES ('telegram:42:', 6, 'tool', 'timeout', 'weather', 'c2', '[]', 'true', '2026-02-09T10:30:05Z');
""")
    as_json(home, "import", str(db))
    tools = [m for m in as_json(home, "history", "show", "telegram:42")["messages"] if m["role"] == "tool"]
    assert [(m["content"], m["metadata"]["sclaw"].get("is_error")) for m in tools] == [
        ("sunny, 4 degrees", None), ("timeout", True)]


def test_ptrclaw_category_is_read_case_sensitively_as_ptrclaw_does(tmp_path: Path) -> None:
    """PtrClaw's ``category_from_string`` knows ``core`` and ``conversation`` as written: ``Core``
    and ``CONVERSATION`` are knowledge to PtrClaw, so knowledge here too, their names kept. engram
    lowercased them, so a row PtrClaw lets decay became a permanent core memory."""
    home = tmp_path / "home"
    db = database(tmp_path / "memory.db", PTRCLAW_SCHEMA, PTRCLAW_ROWS + """
UPDATE memories SET category = 'Core' WHERE key = 'user-prefers-python';
UPDATE memories SET category = 'CONVERSATION' WHERE key = 'lunch-talk';
""")
    summary = as_json(home, "import", str(db))
    assert summary["imported"] == 3, summary
    assert 'memories: 1 row of category "Core" imported as knowledge, as PtrClaw reads it (the category is kept in' \
           " metadata.ptrclaw.category)" in summary["warnings"], summary["warnings"]
    by_key = {m["key"]: m for m in as_json(home, "list")}
    assert (by_key["user-prefers-python"]["category"], by_key["user-prefers-python"]["metadata"]["ptrclaw"]) == (
        "knowledge", {"id": "e1", "category": "Core"})
    assert (by_key["lunch-talk"]["category"], by_key["lunch-talk"]["type"]) == ("knowledge", "learned")
    assert by_key["project-uses-python"]["category"] == "knowledge"


def test_ptrclaw_json_file_reads_its_category_case_sensitively_as_its_database_does(tmp_path: Path) -> None:
    entries = [
        {"id": "e1", "key": "soul", "content": "Curious and kind", "category": "Core", "timestamp": 1770632100},
        {"id": "e2", "key": "rule", "content": "Answer briefly", "category": "core", "timestamp": 1770632200},
    ]
    source = tmp_path / "memory.json"
    source.write_text(json.dumps(entries), encoding="utf-8")
    home = tmp_path / "home"
    summary = as_json(home, "import", str(source))
    assert summary["imported"] == 2, summary
    assert 'entries[0].category: 1 entry of category "Core" imported as knowledge, as PtrClaw reads it (the category ' \
           "is kept in metadata.ptrclaw.category)" in summary["warnings"], summary
    by_key = {m["key"]: m for m in as_json(home, "list")}
    assert (by_key["soul"]["category"], by_key["soul"]["metadata"]) == ("knowledge", {"ptrclaw": {"category": "Core"}})
    assert (by_key["rule"]["category"], by_key["rule"]["metadata"]) == ("core", {})
