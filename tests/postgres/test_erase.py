"""``forget(erase=True)`` on PostgreSQL: the shared ``audit_log`` keeps the erased memory's ids only,
its versions go, an import of an old snapshot does not bring it back, and another agent's rows on
the same database are left whole. Real server (``tests/postgres/conftest.py``)."""

from __future__ import annotations

from pathlib import Path

from engram.config import load_settings
from engram.engine import Engram
from tests.lifecycle.test_erase import SECRET, _told, erase_a_key_another_agent_linked


def test_erase_on_postgres_leaves_ids_only_and_spares_another_agent(pg_url: str, tmp_path: Path) -> None:
    settings = load_settings(home=tmp_path, database_url=pg_url, embeddings={"provider": "none"})
    with Engram.from_settings(settings) as engram:
        alice, bob = engram.for_agent("alice"), engram.for_agent("bob")
        told, theirs = _told(alice), _told(bob)
        snapshot = alice.export_snapshot()
        assert [m.id for m in alice.forget(query=SECRET, erase=True)] == [told]
        rows = alice.audit_of(told)
        assert [r.action for r in rows] == ["stored", "updated", "linked", "forgotten", "erased"]
        assert all(r.detail is None and r.memory_key is None for r in rows)
        with engram.backend.db.read() as conn:
            held = conn.execute("SELECT memory_scope, action FROM audit_log WHERE detail::text ILIKE %s"
                                " OR memory_key ILIKE %s ORDER BY seq", (f"%{SECRET}%", f"%{SECRET}%")).fetchall()
            versions = conn.execute("SELECT COUNT(*) FROM memory_versions WHERE memory_id = %s", (told,)).fetchone()[0]
            bobs = conn.execute("SELECT COUNT(*) FROM audit_log WHERE memory_id = %s AND detail IS NOT NULL",
                                (theirs,)).fetchone()[0]
        assert versions == 0
        assert bobs == 3, "bob's memory's rows are whole: stored, updated, linked"
        # What still names the secret is bob's alone (his memory's rows, his weather's link, his recall).
        assert [tuple(r) for r in held] == [("agent:bob", a) for a in ("stored", "updated", "linked", "linked", "recalled")]
        assert alice.import_snapshot(snapshot).imported == 0
        assert [m.key for m in alice.list()] == ["weather"]
        assert bob.get(theirs).content.endswith(f"{SECRET} green")


def test_an_erase_on_postgres_leaves_another_agents_link_row_naming_a_global_key(pg_url: str, tmp_path: Path) -> None:
    settings = load_settings(home=tmp_path, database_url=pg_url, embeddings={"provider": "none"})
    with Engram.from_settings(settings) as engram:
        bob, office = erase_a_key_another_agent_linked(engram)
        assert [r.detail for r in bob.audit_of(office) if r.action == "linked"] == [{"with": ["plan"]}]
