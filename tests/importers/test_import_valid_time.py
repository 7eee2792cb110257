"""Imported memories get their valid time from content that states when it happened, as stored ones do."""

from __future__ import annotations

import json

from engram.engine import Engram
from engram.store.sqlite import SqliteMemoryStore
from engram.temporal.reader import TimeReader


def test_imported_content_that_states_a_date_gets_valid_from(tmp_path) -> None:
    document = json.dumps({"results": [
        {"id": "m-1", "memory": "On 2025-03-10 the nightly migration failed", "created_at": "2025-04-01T10:00:00Z",
         "user_id": "alex"},
        {"id": "m-2", "memory": "Prefers vegetarian restaurants", "created_at": "2025-04-01T10:00:00Z",
         "user_id": "alex"},
    ]})
    with Engram(SqliteMemoryStore(tmp_path / "memory.db"), agent="alex", time_reader=TimeReader("UTC")) as mem:
        mem.import_from(document, "mem0", keep_agents=False)
        dated = mem.list(limit=10)
        by_content = {m.content: m for m in dated}
        assert by_content["On 2025-03-10 the nightly migration failed"].valid_from == 1_741_564_800.0
        assert by_content["Prefers vegetarian restaurants"].valid_from is None
        assert [h.memory.content for h in mem.recall("what failed", when="in March 2025")] == [
            "On 2025-03-10 the nightly migration failed"]
