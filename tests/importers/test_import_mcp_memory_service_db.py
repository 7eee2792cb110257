"""mcp-memory-service's own ``sqlite_vec.db`` through ``engram import`` (CLI, real SQLite files).

The database is built here in the shape the service's SQLite-vec backend gives it: its ``memories``
table (tags joined by commas, metadata as JSON text, REAL epoch seconds beside ISO texts, newer
versions' ``deleted_at`` tombstones, ``last_accessed``, ``superseded_by``, ...), its trigram FTS
table, and ``memory_embeddings``, a sqlite-vec ``vec0`` virtual table. Python's ``sqlite3`` here
cannot load sqlite-vec, as a user's may not, so that table's schema row is written as the
extension writes it (``PRAGMA writable_schema``), beside ordinary tables standing for its shadow
tables: reading the file must never need the module."""

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
from engram.errors import ConfigError

from .cli_runs import as_json

SCHEMA = """
CREATE TABLE metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE memories (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    content_hash TEXT UNIQUE NOT NULL,
    content TEXT NOT NULL,
    tags TEXT,
    memory_type TEXT,
    metadata TEXT,
    created_at REAL,
    updated_at REAL,
    created_at_iso TEXT,
    updated_at_iso TEXT,
    deleted_at REAL DEFAULT NULL
, parent_id TEXT, version INTEGER DEFAULT 1, confidence REAL DEFAULT 1.0, last_accessed INTEGER, superseded_by TEXT);
CREATE VIRTUAL TABLE memory_content_fts USING fts5(content, content='memories', content_rowid='id', tokenize='trigram');
CREATE TABLE memory_embeddings_info (key TEXT PRIMARY KEY, value ANY);
CREATE TABLE memory_embeddings_chunks (chunk_id INTEGER PRIMARY KEY AUTOINCREMENT, size INTEGER NOT NULL,
                                       validity BLOB NOT NULL, rowids BLOB NOT NULL);
CREATE TABLE memory_embeddings_rowids (rowid INTEGER PRIMARY KEY AUTOINCREMENT, id, chunk_id INTEGER, chunk_offset INTEGER);
CREATE TABLE memory_graph (source_hash TEXT NOT NULL, target_hash TEXT NOT NULL, similarity REAL NOT NULL,
                           connection_types TEXT NOT NULL DEFAULT '[]', metadata TEXT, created_at REAL NOT NULL,
                           relationship_type TEXT DEFAULT 'related', PRIMARY KEY (source_hash, target_hash));
INSERT INTO metadata VALUES ('embedding_model', 'all-MiniLM-L6-v2'), ('embedding_dimension', '384');
"""
# An older service's table: no tombstones, no access times or versions.
OLD_SCHEMA = """
CREATE TABLE memories (
    id INTEGER PRIMARY KEY AUTOINCREMENT, content_hash TEXT UNIQUE NOT NULL, content TEXT NOT NULL, tags TEXT,
    memory_type TEXT, metadata TEXT, created_at REAL, updated_at REAL, created_at_iso TEXT, updated_at_iso TEXT
);
"""
VEC0 = "CREATE VIRTUAL TABLE memory_embeddings USING vec0(content_embedding FLOAT[384] distance_metric=cosine)"

DEPLOYS = "Deploys go out on Tuesdays"
DARK = "Alex prefers dark mode\n"


def content_hash(text: str) -> str:
    return hashlib.sha256(text.strip().encode()).hexdigest()  # as the service hashes a memory's text


def build(path: Path, schema: str = SCHEMA) -> Path:
    conn = sqlite3.connect(path)
    conn.executescript(schema)
    conn.execute("PRAGMA writable_schema = ON")  # sqlite-vec's table, as the extension records it
    conn.execute("INSERT INTO sqlite_master (type, name, tbl_name, rootpage, sql) "
                 "VALUES ('table', 'memory_embeddings', 'memory_embeddings', 0, ?)", (VEC0,))
    conn.execute("PRAGMA writable_schema = OFF")
    newer = schema == SCHEMA
    rows = [
        (DEPLOYS, "ops,deploy", "note", '{"source": "claude-desktop", "priority": 2}', 1730000000.5, 1730000100.25,
         "2024-10-27T03:33:20.500000Z", "2024-10-27T03:35:00.250000Z", None, 1730500000),
        (DARK, "", None, "{}", None, None, "2024-11-07T17:20:00Z", "2024-11-07T17:20:00Z", None, None),
        ("A memory deleted in the service", "old", "note", "{}", 1729000000.0, 1729000000.0,
         "2024-10-15T13:46:40Z", "2024-10-15T13:46:40Z", 1731000000.0, None),
    ]
    for text, tags, kind, meta, created, updated, created_iso, updated_iso, deleted, seen in rows:
        if not newer and deleted is not None:
            continue
        columns = ["content_hash", "content", "tags", "memory_type", "metadata", "created_at", "updated_at",
                   "created_at_iso", "updated_at_iso"]
        values = [content_hash(text), text, tags, kind, meta, created, updated, created_iso, updated_iso]
        if newer:
            columns += ["deleted_at", "last_accessed"]
            values += [deleted, seen]
        conn.execute(f"INSERT INTO memories ({', '.join(columns)}) VALUES ({', '.join('?' * len(values))})", values)
    if newer:  # an association both ways, and one to the deleted memory
        deploys, dark, gone = content_hash(DEPLOYS), content_hash(DARK), content_hash("A memory deleted in the service")
        for source, target in ((deploys, dark), (dark, deploys), (deploys, gone)):
            conn.execute("INSERT INTO memory_graph VALUES (?, ?, 0.8, '[\"semantic\"]', NULL, 1730600000.0, 'related')",
                         (source, target))
    conn.commit()
    conn.close()
    return path


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(autouse=True)
def _no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_EMBEDDINGS__PROVIDER", "none")


@pytest.mark.parametrize("kind", [None, "mcp-memory-service"])
def test_sqlite_vec_db_imports_its_memories_tags_metadata_and_times(tmp_path: Path, kind: str | None) -> None:
    home = tmp_path / "home"
    db = build(tmp_path / "sqlite_vec.db")
    before = digest(db)
    args = ["import", str(db), *(["--from", kind] if kind else [])]
    first = as_json(home, *args)
    assert (first["kind"], first["imported"], first["skipped"]) == ("mcp-memory-service", 2, 0), first
    assert any("1 deleted memory" in w for w in first["warnings"]), first["warnings"]
    assert "memory_graph: 1 link to a memory not imported (deleted in the service) not imported" in first["warnings"]
    again = as_json(home, *args)
    assert (again["imported"], again["skipped"]) == (0, 2), again
    assert digest(db) == before  # read-only

    by_text = {m["content"]: m for m in as_json(home, "list")}
    assert set(by_text) == {DEPLOYS, DARK}  # the tombstone is not brought back; text byte for byte
    deploys, dark = by_text[DEPLOYS], by_text[DARK]
    assert (deploys["type"], deploys["tags"]) == ("note", ["ops", "deploy"])
    assert deploys["metadata"] == {"source": "claude-desktop", "priority": 2, "mcp_memory_service": {
        "content_hash": content_hash(DEPLOYS), "memory_type": "note", "version": 1, "confidence": 1.0,
        # what this import brought, for a later one to tell the service's changes from engram's (apply._changes)
        "imported_text_sha256": hashlib.sha256(DEPLOYS.encode()).hexdigest(), "imported_tags": ["ops", "deploy"],
        "imported_keys": ["priority", "source"]}}
    assert (deploys["created_at"], deploys["updated_at"], deploys["last_accessed"]) == (1730000000.5, 1730000100.25,
                                                                                         1730500000.0)
    assert (dark["type"], dark["tags"], dark["last_accessed"]) == ("learned", [], None)
    assert dark["created_at"] == 1731000000.0  # from created_at_iso when the REAL is NULL
    assert deploys["links"] == [dark["id"]] and dark["links"] == [deploys["id"]]  # the service's association


def test_an_older_table_and_the_json_export_of_the_same_memories(tmp_path: Path) -> None:
    home = tmp_path / "home"
    db = build(tmp_path / "sqlite_vec.db", OLD_SCHEMA)
    assert as_json(home, "import", str(db))["imported"] == 2
    export = {"export_metadata": {"source_machine": "laptop", "export_timestamp": "2024-12-01T10:00:00",
                                  "total_memories": 1, "exporter_version": "4.6.1"},
              "memories": [{"content": DEPLOYS, "content_hash": content_hash(DEPLOYS), "tags": ["ops", "deploy"],
                            "created_at": 1730000000.5, "updated_at": 1730000100.25, "memory_type": "note",
                            "metadata": {}, "export_source": "laptop"}]}
    path = tmp_path / "laptop_memories_export.json"
    path.write_text(json.dumps(export))
    done = as_json(home, "import", str(path))
    assert (done["imported"], done["skipped"]) == (0, 1), done  # the same memory, by its content hash


def test_engram_refuses_the_services_database_as_its_own(tmp_path: Path) -> None:
    db = build(tmp_path / "sqlite_vec.db")
    before = digest(db)
    env = {**os.environ, "ENGRAM_HOME": str(tmp_path / "home"), "ENGRAM_PATH": str(db), "COLUMNS": "400"}
    done = subprocess.run([sys.executable, "-m", "engram", "list"], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 4, done.stderr
    assert "is a mcp-memory-service database" in done.stderr and f"engram import {db}" in done.stderr, done.stderr
    assert "internal error" not in done.stderr and "vec0" not in done.stderr
    assert digest(db) == before
    with pytest.raises(ConfigError):
        Engram.from_settings(home=tmp_path / "lib", path=db)
    assert digest(db) == before


@pytest.mark.parametrize(("metadata", "got"), [("[1]", "got a list"), ("null", "got null"), ("5", "got 5 (a number)")])
def test_metadata_text_holding_no_object_is_named_as_json_spells_it(tmp_path: Path, metadata: str, got: str) -> None:
    # The service writes its metadata as JSON text; a row whose text holds no object said "got list",
    # "got NoneType" or "got int": Python's names, not the document's.
    home, db = tmp_path / "home", build(tmp_path / "sqlite_vec.db")
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE memories SET metadata = ? WHERE content = ?", (metadata, DARK))
    conn.close()
    done = subprocess.run([sys.executable, "-m", "engram", "--home", str(home), "import", str(db)], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "COLUMNS": "400"})
    assert done.returncode == 2 and f"memories row 2.metadata: {got} (allowed: a JSON object)" in done.stderr, done.stderr


def change(db: Path, text: str, tags: str, meta: dict[str, object], updated: float) -> None:
    """The service's ``update_memory_metadata``: tags and metadata changed in place under the same
    hash, the content kept, ``updated_at`` (and its ISO text) moved."""
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE memories SET tags = ?, metadata = ?, updated_at = ?, updated_at_iso = NULL "
                     "WHERE content_hash = ?", (tags, json.dumps(meta), updated, content_hash(text)))
    conn.close()


def test_a_later_updated_at_brings_the_services_new_tags_and_metadata(tmp_path: Path) -> None:
    home, db = tmp_path / "home", build(tmp_path / "sqlite_vec.db")
    assert as_json(home, "import", str(db))["imported"] == 2
    dark_key = next(m["key"] for m in as_json(home, "list") if m["content"] == DARK)
    as_json(home, "update", dark_key, "--tags", "mine")  # changed in engram, after its import and the service's change
    change(db, DEPLOYS, "ops,release", {"source": "claude-desktop", "priority": 1}, 1740000000.0)
    change(db, DARK, "ui", {"theme": "dark"}, 1740000000.0)
    done = as_json(home, "import", str(db))
    assert (done["imported"], done["updated"], done["skipped"]) == (0, 1, 1), done
    by_text = {m["content"]: m for m in as_json(home, "list")}
    deploys, dark = by_text[DEPLOYS], by_text[DARK]
    assert deploys["tags"] == ["ops", "release"]
    assert (deploys["metadata"]["source"], deploys["metadata"]["priority"]) == ("claude-desktop", 1)
    assert deploys["metadata"]["mcp_memory_service"]["content_hash"] == content_hash(DEPLOYS)
    assert "mcp-memory-service" not in deploys["metadata"]  # the bookkeeping sits in the service's own entry
    assert (dark["tags"], dark["metadata"].get("theme")) == (["mine"], None)  # engram's later edit is kept
    assert deploys["content"] == DEPLOYS and deploys["created_at"] == 1730000000.5

    again = as_json(home, "import", str(db))  # the same database again changes nothing
    assert (again["imported"], again["updated"], again["skipped"]) == (0, 0, 2), again
    assert {m["content"]: m for m in as_json(home, "list")} == by_text

    # A later export of the same memory (the other door, the same id) brings its change in turn, and a
    # tag added in engram since stays beside the service's.
    as_json(home, "update", deploys["key"], "--tags", "ops,release,oncall")
    export = {"export_metadata": {"source_machine": "laptop", "export_timestamp": "2099-01-01T00:00:00"},
              "memories": [{"content": DEPLOYS, "content_hash": content_hash(DEPLOYS), "tags": ["ops"],
                            "memory_type": "note", "metadata": {"priority": 3}, "created_at": 1730000000.5,
                            "updated_at": 4070908800.0}]}
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export))
    assert as_json(home, "import", str(path))["updated"] == 1
    deploys = next(m for m in as_json(home, "list") if m["content"] == DEPLOYS)
    assert (deploys["tags"], deploys["metadata"]["priority"]) == (["ops", "oncall"], 3)


def test_a_later_updated_at_brings_the_services_new_memory_type_and_removed_metadata_keys(tmp_path: Path) -> None:
    # The service changed the memory's type and dropped a metadata key in place (a later updated_at):
    # both follow it, as its tags do. A key added in engram, and a type set in engram on a memory
    # whose type the service left alone, stay; last_accessed is the memory's use in engram, not brought.
    home, db = tmp_path / "home", build(tmp_path / "sqlite_vec.db")
    assert as_json(home, "import", str(db))["imported"] == 2
    by_text = {m["content"]: m for m in as_json(home, "list")}
    assert by_text[DEPLOYS]["type"] == "note"
    as_json(home, "update", by_text[DEPLOYS]["key"], "--metadata",  # a key of engram's own
            json.dumps({**by_text[DEPLOYS]["metadata"], "reviewed": "yes"}))
    as_json(home, "update", by_text[DARK]["key"], "--type", "preference")  # engram's own type
    # Dated after engram's edits above (a service clock ahead of this host's, as a later export's).
    change(db, DEPLOYS, "ops,deploy", {"priority": 2}, 4070908800.0)  # "source" removed
    change(db, DARK, "ui", {}, 4070908800.0)  # its type left as it was
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE memories SET memory_type = 'decision' WHERE content_hash = ?", (content_hash(DEPLOYS),))
    conn.close()
    done = as_json(home, "import", str(db))
    assert (done["imported"], done["updated"]) == (0, 2), done
    by_text = {m["content"]: m for m in as_json(home, "list")}
    deploys, dark = by_text[DEPLOYS], by_text[DARK]
    assert deploys["type"] == "decision" and deploys["metadata"]["mcp_memory_service"]["memory_type"] == "decision"
    assert "source" not in deploys["metadata"]
    assert (deploys["metadata"]["priority"], deploys["metadata"]["reviewed"]) == (2, "yes")
    assert (dark["type"], dark["tags"]) == ("preference", ["ui"])


def test_a_memory_type_changed_in_engram_after_the_service_is_kept(tmp_path: Path) -> None:
    home, db = tmp_path / "home", build(tmp_path / "sqlite_vec.db")
    as_json(home, "import", str(db))
    with sqlite3.connect(db) as conn:  # the service's change, dated before engram's edit below
        conn.execute("UPDATE memories SET memory_type = 'decision', metadata = '{}', updated_at = 1740000000.0 "
                     "WHERE content_hash = ?", (content_hash(DEPLOYS),))
    conn.close()
    key = next(m["key"] for m in as_json(home, "list") if m["content"] == DEPLOYS)
    as_json(home, "update", key, "--type", "fact")
    done = as_json(home, "import", str(db))
    assert done["updated"] == 0, done
    deploys = as_json(home, "get", key)
    assert (deploys["type"], deploys["metadata"]["source"]) == ("fact", "claude-desktop")
