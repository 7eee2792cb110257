"""An engram snapshot's memory is never created after its own last change, as any import's
(``record_times``): an entry with ``updated_at`` and no ``created_at`` (written by hand or by
another tool) is created at that change, not at the import's clock; one whose ``created_at`` is
later than its ``updated_at`` is created at the earlier, its change kept, with a warning naming the
entry and both fields in the import's report. What engram itself exported comes back with exactly
its times. engram's JSON store, which reads its own file with the same parser, gives back what it
stored. On real SQLite files, through ``engram import`` and ``Engram.import_snapshot``."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from engram.engine import Engram
from engram.interfaces.cli.app import app
from engram.store.jsonfile import JsonFileMemoryStore
from tests.times import at

UPDATED = "2024-06-02T12:00:00+00:00"
EARLIER = "2024-01-10T09:00:00+00:00"


def opened(home: Path) -> Engram:
    return Engram.from_settings(home=home, embeddings={"provider": "none"}, files={"enabled": False})


def snapshot(*entries: dict) -> str:
    return json.dumps({"format": "engram-snapshot", "version": 1, "memories": list(entries)})


def test_an_entry_with_only_updated_at_is_created_then(tmp_path: Path) -> None:
    path = tmp_path / "snap.json"
    path.write_text(snapshot({"content": "Chad's boat is called Yak", "key": "boat", "updated_at": at(UPDATED)}),
                    encoding="utf-8")
    # engram import FILE, as a user runs it
    result = CliRunner().invoke(app, ["--home", str(tmp_path / "home"), "import", str(path)])
    assert result.exit_code == 0, result.output
    assert not [line for line in result.output.splitlines() if "warning" in line.lower()], result.output
    with opened(tmp_path / "home") as engram:
        memory = engram.get("boat")
        assert (memory.created_at, memory.updated_at) == (at(UPDATED), at(UPDATED))


def test_a_creation_later_than_the_change_is_taken_as_the_change_with_a_warning(tmp_path: Path) -> None:
    document = snapshot({"content": "Likes green tea", "key": "tea"},
                        {"content": "Chad's boat is called Yak", "key": "boat", "created_at": at(UPDATED),
                         "updated_at": at(EARLIER)})
    with opened(tmp_path / "home") as engram:
        result = engram.import_snapshot(document)
        assert result.imported == 2
        assert result.warnings == ("memories[1]: created_at 2024-06-02T12:00:00+00:00 is later than updated_at "
                                   "2024-01-10T09:00:00+00:00: imported as created at the earlier",)
        memory = engram.get("boat")
        assert (memory.created_at, memory.updated_at) == (at(EARLIER), at(EARLIER))
        # The same snapshot again: the memory is found, nothing changes.
        again = engram.import_snapshot(document)
        assert (again.imported, again.skipped) == (0, 2)
        assert engram.get("boat") == memory


def test_a_ptrclaw_timestamp_later_than_updated_at_is_named_as_timestamp(tmp_path: Path) -> None:
    document = json.dumps([{"key": "boat", "content": "Chad's boat is called Yak", "category": "knowledge",
                            "timestamp": at(UPDATED), "updated_at": at(EARLIER)}])
    with opened(tmp_path / "home") as engram:
        result = engram.import_snapshot(document)
        assert result.warnings == ("entries[0]: timestamp 2024-06-02T12:00:00+00:00 is later than updated_at "
                                   "2024-01-10T09:00:00+00:00: imported as created at the earlier",)
        assert engram.get("boat").created_at == at(EARLIER)


def test_engrams_own_snapshot_comes_back_with_exactly_its_times(tmp_path: Path) -> None:
    with opened(tmp_path / "one") as engram:
        engram.remember("Likes green tea", key="tea", created_at=1_700_000_000.123456)
        engram.remember("Chad's boat is called Yak", key="boat", created_at=1_600_000_000.5)
        engram.remember("Chad's boat is called Yak II", key="boat")  # updated now, created as given
        before = {m.key: (m.created_at, m.updated_at) for m in engram.list(limit=10)}
        assert before["boat"][0] < before["boat"][1]
        document = engram.export_snapshot()
    with opened(tmp_path / "two") as fresh:
        result = fresh.import_snapshot(document)
        assert (result.imported, result.warnings) == (2, ())
        assert {m.key: (m.created_at, m.updated_at) for m in fresh.list(limit=10)} == before


def test_the_json_store_gives_back_its_own_file_as_written(tmp_path: Path) -> None:
    # engram's JSON store reads its file with the snapshot's parser: a store is no import, and a
    # memory it holds created later than its update (told a future creation, changed since) stays so.
    path = tmp_path / "memories.json"
    path.write_text(json.dumps({"format": "engram-snapshot", "version": 1, "memories": [
        {"id": "0190aaaa-0000-7000-8000-000000000001", "key": "later", "content": "told a future creation",
         "created_at": at(UPDATED), "updated_at": at(EARLIER)},
        {"id": "0190aaaa-0000-7000-8000-000000000002", "key": "hand", "content": "edited by hand",
         "updated_at": at(UPDATED)},
    ]}), encoding="utf-8")
    store = JsonFileMemoryStore(path)
    held = {m.key: m for m in store.get_many(["0190aaaa-0000-7000-8000-000000000001",
                                              "0190aaaa-0000-7000-8000-000000000002"])}
    later, hand = held["later"], held["hand"]
    assert (later.created_at, later.updated_at) == (at(UPDATED), at(EARLIER))
    # Without a creation, the change: not the clock at each opening, later than the change.
    assert (hand.created_at, hand.updated_at) == (at(UPDATED), at(UPDATED))
