"""Step 0017 (SQLite; PostgreSQL 0021): ``received_at``, when this store received a memory. A store
written by a released engram migrates without a backfill: its memories' arrival is unknown (NULL), and
the lifecycle jobs measure them by their own times exactly as before; what is written after has one."""

from __future__ import annotations

import shutil
from pathlib import Path

from engram import Engram
from engram.db.migrate import applied, available
from engram.lifecycle import retention
from engram.lifecycle.settings import RetentionSettings

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "release_store"
DAY = 86400.0


def test_a_release_stores_memories_have_no_arrival_and_age_by_their_own_times(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    shutil.copyfile(FIXTURE / "memory.db", db)
    mem = Engram.from_settings(home=tmp_path, path=db, embeddings={"provider": "none"})
    try:
        assert 17 in {m.version for m in available("sqlite")} and 17 in applied(mem.store.db)
        old = list(mem.store.iter_all())
        assert old and {m.received_at for m in old} == {None}
        for m in old:
            assert m.written_here == (m.updated_at or m.created_at)
            assert m.used_here == (m.last_accessed or m.updated_at or m.created_at)
            assert m.held_here_since == m.created_at
        newest = max(m.updated_at for m in old)
        # 91 days after their last change, the agent's memories are past retention (none arrived later).
        agents = [m for m in old if m.scope.kind == "agent" and m.category.value != "core"]
        assert agents and all(retention.expired(m, RetentionSettings(), newest + 91 * DAY) for m in agents)
        fresh = mem.remember("written after the step", created_at=1_000_000.0).memory
        assert fresh.received_at is not None and fresh.received_at > fresh.created_at
        assert not retention.expired(fresh, RetentionSettings(), fresh.received_at + 90 * DAY)
    finally:
        mem.close()
