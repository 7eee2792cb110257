"""PHP entity memory (reference 003) behaviours on a real SQLite file: its decay rule as the only
thing that removes memories, with the settings docs/coming-from/php-entity.md gives, and recall
strengthening through the REST search."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engram.config import load_settings
from engram.engine import Engram
from engram.root import maintenance_for
from tests.interfaces.conftest import Served

DAY = 86400.0


def test_php_decay_rule_alone_with_the_documented_settings(tmp_path: Path, monkeypatch) -> None:
    # PHP: decay deletes `importance < 0.3`, `created_at < now()->subDays(30)`, `recall_count == 0`:
    # "Old, unimportant memories fade over time". engram's other jobs (PtrClaw's idle-knowledge
    # hygiene, per-scope retention) would also remove an important memory nobody recalled; the
    # coming-from doc turns them off, and then only PHP's rule removes anything.
    monkeypatch.setenv("ENGRAM_LIFECYCLE__HYGIENE__KNOWLEDGE_MAX_IDLE_DAYS", "0")
    monkeypatch.setenv("ENGRAM_LIFECYCLE__RETENTION__ENABLED", "false")
    settings = load_settings(home=tmp_path, path=tmp_path / "memory.db", embeddings={"provider": "none"})
    with Engram.from_settings(settings) as engram:
        goal = engram.remember("Completed my first goal", type="achievement", importance=0.9).memory
        cloud = engram.remember("Saw a grey cloud over the lake", type="experience", importance=0.1).memory
        kept = engram.remember("User prefers formal language", type="social", importance=0.2).memory
        engram.mark_used([kept])  # PHP's recall(): recall_count + 1, importance + 0.05
        assert engram.get(kept.id).recall_count == 1 and abs(engram.get(kept.id).importance - 0.25) < 1e-9
        report = maintenance_for(engram, settings).run(now=time.time() + 400 * DAY, force=True)
        removed = {m.id for job in report.ran for m in job.removed}
        assert removed == {cloud.id}
        assert {m.id for m in engram.list()} == {goal.id, kept.id}
        assert engram.get(goal.id).layer.value == "episodic"  # achievement routed as PHP's manager does


def test_rest_search_strengthens_what_it_returns_and_touch_false_is_a_look(served: Served) -> None:
    # PHP: "When a memory is recalled, it becomes stronger": recall_count + 1, recalled_at = now,
    # importance + 0.05 capped at 1.0. engram counts a search hit as a recall (its `last_accessed`
    # is PHP's `recalled_at`); `touch=false` is a look that changes nothing.
    with served.client(served.alice) as c:
        made = c.post("/api/v1/memory", json={"content": "Laravel is a PHP framework", "type": "learned",
                                              "importance": 0.98})
        ref = made.json()["memory"]["id"]
        looked = c.get("/api/v1/memory/search", params={"q": "Laravel framework", "touch": "false"}).json()
        assert [h["memory"]["id"] for h in looked["hits"]] == [ref]
        assert c.get(f"/api/v1/memory/{ref}").json()["recall_count"] == 0
        for expected in (1, 2):
            c.get("/api/v1/memory/search", params={"q": "Laravel framework"})
            memory = c.get(f"/api/v1/memory/{ref}").json()
            assert memory["recall_count"] == expected and memory["importance"] == 1.0  # capped
        assert memory["layer"] == "semantic"  # learned → semantic


PHP_FILE = {"id": 123, "type": "experience", "content": "I used WebTool to fetch weather data", "importance": 0.6,
            "context": {"tool": "WebTool", "autonomous": True}, "created_at": "2026-02-04T15:30:00+00:00"}


def test_php_entity_memory_folder_and_one_of_its_files_import(tmp_path: Path) -> None:
    # PHP: "Memories are also saved as JSON files: storage/entity/memory/[type]/", named
    # `YYYY-MM-DD_HH-ii-ss_ID.json` (docs/importing.md). The folder imported; one such file failed with
    # "snapshot: no list of memories found": it is one memory object, imported as the folder's are.
    import json

    from engram.errors import ValidationError

    folder = tmp_path / "storage/entity/memory"
    (folder / "experience").mkdir(parents=True)
    one = folder / "experience/2026-02-04_15-30-00_123.json"
    one.write_text(json.dumps(PHP_FILE, indent=4))
    (folder / "decision").mkdir()
    (folder / "decision/2026-02-05_09-00-00_124.json").write_text(json.dumps(
        {**PHP_FILE, "id": 124, "type": "decision", "content": "I decided to learn Python", "context": {}}))
    with Engram.from_settings(home=tmp_path / "a", embeddings={"provider": "none"}) as engram:
        assert engram.import_from(one).imported == 1
        memory = engram.get("123")
        assert (memory.type, memory.content, memory.importance, memory.metadata) == (
            "experience", PHP_FILE["content"], 0.6, PHP_FILE["context"])
        assert memory.created_at == dt_epoch("2026-02-04T15:30:00+00:00")
        again = engram.import_from(one)
        assert (again.imported, again.skipped) == (0, 1)  # idempotent, as the folder's import is
        assert engram.import_from(folder).imported == 1 and engram.get("124").type == "decision"
        bad = tmp_path / "empty.json"
        bad.write_text(json.dumps({**PHP_FILE, "content": ""}))
        with pytest.raises(ValidationError, match="content: must not be empty"):
            engram.import_from(bad)
        assert engram.count() == 2
        # A memory as engram's snapshot writes one (key, metadata, epoch times) is no per-type file: read as
        # one it would lose its key, tags and metadata; it is refused as a snapshot without its list.
        from engram.errors import SnapshotError

        lone = tmp_path / "lone.json"
        lone.write_text(json.dumps({**engram.get("124").to_dict(), "id": "125", "key": "kept-key", "tags": ["t"]}))
        with pytest.raises(SnapshotError, match="no list of memories found"):
            engram.import_from(lone)
    done = subprocess.run([sys.executable, "-m", "engram", "import", str(one)], capture_output=True, text=True,
                          env={**{k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")},
                               "ENGRAM_HOME": str(tmp_path / "b"), "ENGRAM_EMBEDDINGS__PROVIDER": "none"}, timeout=120)
    assert done.returncode == 0 and "imported 1 with their ids" in done.stdout, done.stdout + done.stderr


def dt_epoch(text: str) -> float:
    import datetime as dt

    return dt.datetime.fromisoformat(text).timestamp()


def test_php_entity_files_empty_context_array_and_errors_in_the_files_own_names(tmp_path: Path) -> None:
    # PHP's json_encode writes an empty array as `[]`: a memory with no context is saved `"context": []`
    # (Laravel's array cast does the same). It was refused as "metadata: got list"; and a malformed
    # created_at was named `date`, a field the PHP file does not have.
    import json

    folder = tmp_path / "memory/experience"
    folder.mkdir(parents=True)
    (folder / "2026-02-04_15-30-00_1.json").write_text(json.dumps({**PHP_FILE, "id": 1, "context": []}))
    (folder / "2026-02-04_15-30-00_2.json").write_text(json.dumps({**PHP_FILE, "id": 2, "content": "b", "context": [1]}))
    (folder / "2026-02-04_15-30-00_3.json").write_text(json.dumps(
        {**PHP_FILE, "id": 3, "content": "c", "created_at": "yesterday"}))
    with Engram.from_settings(home=tmp_path / "a", embeddings={"provider": "none"}) as engram:
        summary = engram.import_from(tmp_path / "memory")
        assert summary.imported == 1 and engram.get("1").metadata == {}
        problems = sorted(summary.warnings)
        assert problems[0].endswith("_2.json:1: entry not imported: context: got a list "
                                    "(allowed: a JSON object, or [] or null for none)"), problems
        assert '_3.json:1: entry not imported: created_at: "yesterday" is not a valid date' in problems[1], problems
