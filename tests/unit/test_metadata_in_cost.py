"""A metadata ``in`` of many texts on SQLite reads each row's value once, not once per text: the
re-import lookup by a kept source id (``importers.apply._kept_as``) asks 400 hashes at a time, and
SQLite before 3.45 parses a row's JSON for every ``json_extract``, so 5,000 new records against an
agent holding 5,000 took 6 s of a 10 s import. Counted in SQLite's virtual-machine instructions (a
count, not a time), on a real SQLite file the mcp-memory-service importer filled."""

from __future__ import annotations

import json
from pathlib import Path

from engram.engine import Engram
from engram.model import MemoryFilter, make_scope
from engram.store.sqlite import SqliteMemoryStore
from engram.where import Compare

HELD = 400


def _export(start: int, count: int) -> str:
    return json.dumps({"export_metadata": {"source_machine": "laptop"}, "memories": [
        {"content": f"Fact number {i} about thing {i * 7}", "content_hash": f"h{i:08d}", "memory_type": "note",
         "created_at": 1700000000 + i, "updated_at": 1700000000 + i} for i in range(start, start + count)]})


def test_an_in_of_400_texts_reads_each_row_once(tmp_path: Path) -> None:
    export = tmp_path / "export.json"
    export.write_text(_export(0, HELD))
    with Engram.from_settings(home=tmp_path, embeddings={"provider": "none"}) as engram:
        assert engram.import_from(export.read_text(), "mcp-memory-service").imported == HELD
        store = engram.store
        assert isinstance(store, SqliteMemoryStore)
        # 400 hashes no memory keeps (the new records of a later export) and two that one does.
        asked = (*(f"h{i:08d}" for i in range(HELD, 2 * HELD - 2)), "h00000003", "h00000399")
        filt = MemoryFilter(scopes=(make_scope("default", None),),
                            where=Compare("mcp_memory_service", "in", asked, within=("content_hash",)))
        steps = [0]

        def count() -> int:
            steps[0] += 1
            return 0  # go on

        with store.db.read() as conn:
            conn.set_progress_handler(count, 1)
        try:
            found = store.list(filt, limit=len(asked) * 2)
        finally:
            with store.db.read() as conn:
                conn.set_progress_handler(None, 1)
    assert sorted(m.metadata["mcp_memory_service"]["content_hash"] for m in found) == ["h00000003", "h00000399"]
    # ~15 instructions a row; a test per text took ~1,200 a row (480,000 here).
    assert steps[0] < 40 * HELD, steps[0]
