"""An imported memory is never created after its own last change. A source that gives only a change
time (a mem0 item with ``updated_at`` alone) had the thing by then: that is its creation time, not
the import's clock. A source that gives a creation later than its change (a bad export) is created
at the earlier, its change time kept as given, with a warning naming the item and both fields.
Through ``Engram.import_from`` (what ``engram import`` calls) and the mem0 facade's ``import_mem0``,
on a real SQLite file; the mem0 export (``engram export --format mem0``) then gives
``created_at <= updated_at``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engram.compat.mem0 import Memory
from engram.engine import Engram
from engram.exporters import mem0 as mem0_export
from tests.importers.test_import_cli import run
from tests.times import at

UPDATED = "2024-06-02T12:00:00+00:00"
EARLIER = "2024-01-10T09:00:00+00:00"
ONLY_UPDATED = {"id": "m-1", "memory": "Likes green tea", "user_id": "sam", "updated_at": UPDATED}
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "import"


def opened(home: Path) -> Engram:
    return Engram.from_settings(home=home, embeddings={"provider": "none"})


def exported(engram: Engram) -> list[dict[str, Any]]:
    return json.loads(mem0_export.dump(engram))["results"]


def test_a_mem0_item_with_only_updated_at_is_created_then(tmp_path: Path) -> None:
    with opened(tmp_path) as engram:
        summary = engram.import_from(json.dumps({"results": [ONLY_UPDATED]}), "mem0")
        assert summary.imported == 1 and summary.warnings == (), summary
        [memory] = engram.for_agent("sam").list(limit=5)
        assert (memory.created_at, memory.updated_at) == (at(UPDATED), at(UPDATED))
        [item] = exported(engram.for_agent("sam"))
        assert at(item["created_at"]) == at(item["updated_at"]) == at(UPDATED)
    # engram export --format mem0, as a user runs it
    [item] = json.loads(run(tmp_path, "-a", "sam", "export", "--format", "mem0"))["results"]
    assert at(item["created_at"]) <= at(item["updated_at"])


def test_the_facade_imports_a_mem0_item_with_only_updated_at_created_then(tmp_path: Path) -> None:
    with opened(tmp_path) as engram:
        facade = Memory(engram=engram)
        assert facade.import_mem0({"results": [ONLY_UPDATED]})["imported"] == 1
        [item] = facade.get_all(user_id="sam")["results"]
        assert at(item["created_at"]) == at(item["updated_at"]) == at(UPDATED)
        [memory] = engram.for_agent("sam").list(limit=5)
        assert (memory.created_at, memory.updated_at) == (at(UPDATED), at(UPDATED))
        [item] = exported(engram.for_agent("sam"))
        assert at(item["created_at"]) <= at(item["updated_at"])


@pytest.mark.parametrize("spelling", [("created_at", "updated_at"), ("createdAt", "updatedAt")])
def test_a_creation_later_than_the_change_is_taken_as_the_change_with_a_warning(tmp_path: Path,
                                                                                spelling: tuple[str, str]) -> None:
    created, updated = spelling
    item = {"id": "m-1", "memory": "Likes green tea", "user_id": "sam", created: UPDATED, updated: EARLIER}
    with opened(tmp_path) as engram:
        summary = engram.import_from(json.dumps({"results": [item]}), "mem0")
        assert summary.imported == 1
        [memory] = engram.for_agent("sam").list(limit=5)
        assert (memory.created_at, memory.updated_at) == (at(EARLIER), at(EARLIER))
        assert summary.warnings == (f"results[0]: {created} 2024-06-02T12:00:00+00:00 is later than {updated} "
                                    "2024-01-10T09:00:00+00:00: imported as created at the earlier",)
        # The change time is the source's own: the same export again is not newer, and changes nothing.
        again = engram.import_from(json.dumps({"results": [item]}), "mem0")
        assert (again.imported, again.updated, again.skipped) == (0, 0, 1), again
        assert engram.for_agent("sam").get(memory.id) == memory


def _letta() -> tuple[Any, str | None, str]:
    document = json.loads((FIXTURES / "letta.af").read_text(encoding="utf-8"))
    document["agents"][0]["passages"] = [{"id": "passage-0", "text": "Chad's boat is called Yak", "updated_at": UPDATED}]
    return json.dumps(document), None, "memgpt_agent"


def _mcp_memory_service() -> tuple[Any, str | None, str]:
    document = {"export_metadata": {"source_machine": "laptop-1"},
                "memories": [{"content": "Chad's boat is called Yak", "updated_at_iso": UPDATED}]}
    return json.dumps(document), "mcp-memory-service", "default"


def _basic_memory() -> tuple[Any, str | None, str]:
    return {"boat.md": f"---\ntitle: Boat\nmodified: {UPDATED}\n---\nChad's boat is called Yak\n"}, "basic-memory", "default"


@pytest.mark.parametrize("source", [_letta, _mcp_memory_service, _basic_memory])
def test_other_sources_giving_only_a_change_time_are_created_then(tmp_path: Path, source: Any) -> None:
    document, kind, agent = source()
    with opened(tmp_path) as engram:
        engram.import_from(document, kind)
        [memory] = [m for m in engram.for_agent(agent).list(limit=20) if "Yak" in m.content]
        assert (memory.created_at, memory.updated_at) == (at(UPDATED), at(UPDATED))


def test_a_basic_memory_note_modified_before_its_file_was_written_is_created_when_modified(tmp_path: Path) -> None:
    # No created in the front matter: the file's time dates the note, but the note says it changed earlier.
    folder = tmp_path / "notes"
    folder.mkdir()
    note = folder / "boat.md"
    note.write_text(f"---\ntitle: Boat\nmodified: {EARLIER}\n---\nChad's boat is called Yak\n", encoding="utf-8")
    with opened(tmp_path / "home") as engram:
        summary = engram.import_from(folder, "basic-memory")
        [memory] = [m for m in engram.list(limit=20) if "Yak" in m.content]
        assert (memory.created_at, memory.updated_at) == (at(EARLIER), at(EARLIER))
        [warning] = summary.warnings
        assert warning.startswith("boat.md: file modification time ") and " is later than front matter modified " \
            "2024-01-10T09:00:00+00:00: imported as created at the earlier" in warning
