"""``Engram.import_from`` (the library door) on the real PostgreSQL server: the same mapping, links,
history and idempotency as on SQLite, a progress report per phase, and nothing written on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram.config import load_settings
from engram.engine import Engram
from engram.errors import SnapshotError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "import"


def test_import_from_on_postgres(pg_url: str, tmp_path: Path) -> None:
    settings = load_settings(home=tmp_path, database_url=pg_url, embeddings={"provider": "none"})
    with Engram.from_settings(settings) as engram:
        phases: list[tuple[str, int, int]] = []
        summary = engram.import_from(FIXTURES / "mcp-memory.jsonl", progress=lambda *p: phases.append(p))
        assert (summary.kind, summary.imported) == ("mcp-memory", 3)
        assert ("storing", 3, 3) in phases
        assert {m.key for m in engram.neighbours("john-smith")} == {"anthropic", "lisbon-office"}
        assert engram.recall("who speaks Spanish").hits[0].memory.key == "john-smith"
        files = {p.relative_to(FIXTURES / "basic-memory").as_posix(): p.read_text()
                 for p in (FIXTURES / "basic-memory").rglob("*.md")}
        assert engram.import_from(files).imported == 6  # a folder given as {path: text}, kind detected
        assert engram.import_from(files, "basic-memory").skipped == 6
        history = engram.import_from(FIXTURES / "clawless" / "conversation-history.jsonl")
        assert (history.kind, history.messages_imported) == ("clawless", 6)
        assert len(engram.history.all("telegram:12345")) == 4
        before = engram.count()
        with pytest.raises(SnapshotError, match=r"results\[1\]\.created_at"):
            engram.import_from('{"results": [{"id": "1", "memory": "fine"}, {"id": "2", "memory": "x", '
                               '"created_at": "yesterday"}]}')
        assert engram.count() == before


def test_a_letta_agent_file_joins_its_agents_history_on_postgres(pg_url: str, tmp_path: Path) -> None:
    settings = load_settings(home=tmp_path, database_url=pg_url, embeddings={"provider": "none"})
    with Engram.from_settings(settings) as engram:
        summary = engram.import_from(FIXTURES / "letta.af")
        assert (summary.kind, summary.imported, summary.messages_imported) == ("letta", 2, 4)
        sam = engram.for_agent("memgpt_agent")
        assert [m.role.value for m in sam.history.all("letta:memgpt_agent")] == ["user", "assistant", "tool", "assistant"]
        assert sam.get("letta-persona").content.startswith("\nThe following is a starter persona")
        assert engram.history.all("letta:memgpt_agent") == [] and engram.list() == []
        again = engram.import_from(FIXTURES / "letta.af")
        assert (again.skipped, again.messages_skipped) == (2, 4)


def test_a_zep_dump_on_postgres(pg_url: str, tmp_path: Path) -> None:
    settings = load_settings(home=tmp_path, database_url=pg_url, embeddings={"provider": "none"})
    with Engram.from_settings(settings) as engram:
        summary = engram.import_from(FIXTURES / "zep.json")
        assert (summary.kind, summary.imported, summary.messages_imported, summary.agents) == (
            "zep", 9, 8, ("alice", "bob"))
        alice = engram.for_agent("alice")
        assert [m.role.value for m in alice.history.all("zep:onboarding-2025-01")] == [
            "user", "assistant", "user", "assistant"]
        # Zep's valid time: as of March 2025 Alice worked at Acme, as of July at Globex.
        for when, fact in (("2025-03-01", "Alice works at Acme Corp as a data engineer."),
                           ("2025-07-01", "Alice works at Globex.")):
            hits = alice.recall("Alice works at", as_of=when).hits
            assert [h.memory.content for h in hits if h.memory.tags == ("works_at",)] == [fact]
        assert {m.content for m in alice.neighbours("lisbon")} == {"Alice lives in Lisbon."}
        assert engram.list() == []
        again = engram.import_from(FIXTURES / "zep.json")
        assert (again.skipped, again.messages_skipped) == (9, 8)
        # A newer dump: Zep invalidated the Lisbon fact since (expired_at only), and rewrote its text.
        # The memory is brought up to date, not doubled; nothing else changes.
        data = json.loads((FIXTURES / "zep.json").read_text(encoding="utf-8"))
        data["users"][0]["edges"][2].update(expired_at="2025-09-02T10:00:00Z", fact="Alice lived in Lisbon.")
        before = {m.id: m for m in alice.list(limit=50)}
        later = engram.import_from(json.dumps(data), "zep")
        assert (later.imported, later.updated, later.skipped) == (0, 1, 8), later
        after = {m.id: m for m in alice.list(limit=50)}
        [changed] = [i for i in after if after[i] != before[i]]
        lisbon = after.pop(changed)
        assert (lisbon.content, lisbon.valid_until, lisbon.superseded_by) == (
            "Alice lived in Lisbon.", 1756807200.0, None)
        assert lisbon.metadata["zep"]["expired_at"] == "2025-09-02T10:00:00Z"
        assert [v.content for v in alice.versions(lisbon)] == ["Alice lives in Lisbon."]
        assert {i: (m.content, m.valid_until, m.metadata) for i, m in after.items()} == {
            i: (m.content, m.valid_until, m.metadata) for i, m in before.items() if i != changed}
        for when, found in (("2025-08-01", ["Alice lived in Lisbon."]), ("2025-10-01", [])):
            hits = alice.recall("where does Alice live", as_of=when).hits
            assert [h.memory.content for h in hits if h.memory.tags == ("lives_in",)] == found


def test_a_chatgpt_export_zip_on_postgres(pg_url: str, tmp_path: Path) -> None:
    from tests.importers.test_import_chat_exports import CHATGPT, LISBON, LISBON_SHOWN, zipped

    settings = load_settings(home=tmp_path, database_url=pg_url, embeddings={"provider": "none"})
    source = zipped(CHATGPT, tmp_path / "chatgpt-export.zip")
    with Engram.from_settings(settings) as engram:
        phases: list[tuple[str, int, int]] = []
        summary = engram.import_from(source, progress=lambda *p: phases.append(p))
        assert (summary.kind, summary.messages_imported, summary.agents) == ("chatgpt", 9, ("default",))
        assert ("history", 9, 9) in phases
        assert [(m.role.value, m.content) for m in engram.history.all(LISBON)] == LISBON_SHOWN
        again = engram.import_from(source)
        assert (again.messages_imported, again.messages_skipped) == (0, 9)
        # The export's custom instructions ("I live in Porto.") are a core memory, made once.
        assert [(m.content, m.category.value) for m in engram.list()] == [("I live in Porto.", "core")]


def test_a_forgotten_memory_stays_forgotten_on_reimport_on_postgres(pg_url: str, tmp_path: Path) -> None:
    source = json.dumps({"results": [{"id": "a1", "memory": "Likes tea", "user_id": "u1"},
                                     {"id": "a2", "memory": "Lives in Oslo", "user_id": "u1"}]})
    settings = load_settings(home=tmp_path, database_url=pg_url, embeddings={"provider": "none"})
    with Engram.from_settings(settings) as engram:
        assert engram.import_from(source, "mem0").imported == 2
        u1 = engram.for_agent("u1")
        [gone] = u1.forget("likes-tea", reason="wrong")
        again = engram.import_from(source, "mem0")
        assert (again.imported, again.skipped, again.forgotten) == (0, 1, 1), again
        assert "engram -a u1 audit --action forgotten" in again.warnings[0]
        assert [m.key for m in u1.list()] == ["lives-oslo"]
        # The shared trail answers for the agent asked only, and to that agent's view only;
        # another agent's import gets its copy.
        assert u1.forgotten([(gone.id, "u1"), (gone.id, "u2")]) == {(gone.id, "u1")}
        assert engram.forgotten([(gone.id, "u1")]) == engram.for_agent("u2").forgotten([(gone.id, "u1")]) == set()
        other = engram.for_agent("u2").import_from(source, "mem0", keep_agents=False)
        assert (other.imported, other.forgotten) == (2, 0)
    # Another process on the same database reads the same record.
    with Engram.from_settings(settings) as later:
        assert later.import_from(source, "mem0").forgotten == 1
