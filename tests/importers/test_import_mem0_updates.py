"""mem0 updates a memory in place (same ``id``, new ``memory`` text, later ``updated_at``, new
categories and expiry): importing a newer export brings that to the memory an earlier import made
(the same id), its earlier text kept in its versions; importing the same export again, or an older
one, changes nothing. A text changed in engram since the import is kept; a tag added in engram
since stays, beside mem0's new categories; a memory forgotten since is not brought back. Through
the library on a real SQLite file and through the CLI."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from engram.engine import Engram
from engram.errors import SnapshotError
from tests.importers.test_import_cli import as_json, run

V1 = {"id": "m-1", "memory": "Likes green tea", "hash": "1b0a0c5f", "user_id": "sam", "categories": ["food"],
      "metadata": {"source": "chat"}, "created_at": "2024-01-10T09:00:00+00:00",
      "updated_at": "2024-01-10T09:00:00+00:00"}
V2 = {**V1, "memory": "Likes oolong tea, no longer green tea", "hash": "7e3d9a21", "categories": ["food", "drinks"],
      "metadata": {"source": "email"}, "updated_at": "2024-06-02T12:00:00+00:00", "expiration_date": "2025-12-31"}
OTHER = {"id": "m-2", "memory": "Lives in Oslo", "user_id": "sam", "created_at": "2024-01-10T09:00:00+00:00"}


def export(*items: dict[str, Any]) -> str:
    return json.dumps({"results": list(items)})


def opened(home: Path) -> Engram:
    return Engram.from_settings(home=home, embeddings={"provider": "none"})


def _end_of(day: str) -> float:
    """mem0 shows a memory all through its expiration_date: it holds until the next day begins."""
    return datetime.fromisoformat(day).replace(tzinfo=UTC).timestamp() + 86400


def test_a_newer_export_brings_mem0s_update_to_the_same_memory(tmp_path: Path) -> None:
    with opened(tmp_path) as engram:
        assert engram.import_from(export(V1, OTHER), "mem0").imported == 2
        sam = engram.for_agent("sam")
        [first] = [m for m in sam.list(limit=10) if m.content == V1["memory"]]
        oslo = sam.get("lives-oslo")
        newer = engram.import_from(export(V2, OTHER), "mem0")
        assert (newer.imported, newer.updated, newer.skipped) == (0, 1, 1), newer
        now = sam.get(first.id)
        assert now.key == first.key and now.created_at == first.created_at
        assert now.content == V2["memory"]
        assert set(now.tags) == {"food", "drinks"}
        assert now.valid_until == _end_of("2025-12-31")
        assert now.metadata["source"] == "email"
        assert {k: now.metadata["mem0"][k] for k in ("id", "hash", "user_id", "expiration_date")} == {
            "id": "m-1", "hash": "7e3d9a21", "user_id": "sam", "expiration_date": "2025-12-31"}
        assert [v.content for v in sam.versions(now)] == [V1["memory"]]
        assert sam.get("lives-oslo") == oslo  # not newer: untouched
        # The same export again, then the older one: nothing changes.
        for again in (export(V2, OTHER), export(V1, OTHER)):
            summary = engram.import_from(again, "mem0")
            assert (summary.imported, summary.updated, summary.skipped) == (0, 0, 2), summary
            assert sam.get(first.id) == now
        assert len(sam.versions(now)) == 1


def test_a_text_changed_in_engram_since_is_kept(tmp_path: Path) -> None:
    with opened(tmp_path) as engram:
        engram.import_from(export(V1), "mem0")
        sam = engram.for_agent("sam")
        [memory] = sam.list(limit=10)
        edited = sam.update(memory, content="Likes green tea with honey").memory
        # The edit is newer than mem0's update: mem0's older item changes nothing.
        summary = engram.import_from(export(V2), "mem0")
        assert (summary.updated, summary.skipped) == (0, 1), summary
        assert sam.get(memory.id) == edited
        # mem0 changed it again after the edit: its categories, metadata and expiry arrive, the text
        # changed in engram stays, and a warning says so.
        later = {**V2, "updated_at": datetime.fromtimestamp(edited.updated_at + 60, UTC).isoformat()}
        summary = engram.import_from(export(later), "mem0")
        assert summary.updated == 1, summary
        now = sam.get(memory.id)
        assert now.content == "Likes green tea with honey"
        assert (set(now.tags), now.valid_until, now.metadata["source"]) == ({"food", "drinks"}, _end_of("2025-12-31"),
                                                                              "email")
        assert any("the source's new text not brought over" in w for w in summary.warnings), summary.warnings


def test_a_memory_forgotten_since_is_not_brought_back_by_a_newer_export(tmp_path: Path) -> None:
    with opened(tmp_path) as engram:
        engram.import_from(export(V1, OTHER), "mem0")
        sam = engram.for_agent("sam")
        sam.forget("lives-oslo", reason="wrong")
        # Both updated in mem0 since: the one kept is brought up to date, the forgotten one stays out.
        moved = {**OTHER, "memory": "Lives in Bergen", "updated_at": "2024-06-02T12:00:00+00:00"}
        summary = engram.import_from(export(V2, moved), "mem0")
        assert (summary.imported, summary.updated, summary.forgotten) == (0, 1, 1), summary
        assert [m.content for m in sam.list(limit=10)] == [V2["memory"]]


def test_the_cli_brings_a_newer_export_and_then_changes_nothing(tmp_path: Path) -> None:
    home, v1, v2 = tmp_path / "home", tmp_path / "v1.json", tmp_path / "v2.json"
    v1.write_text(export(V1), encoding="utf-8")
    v2.write_text(export(V2), encoding="utf-8")
    assert as_json(home, "import", str(v1), "--from", "mem0")["imported"] == 1
    [before] = as_json(home, "--agent", "sam", "list")
    newer = as_json(home, "import", str(v2), "--from", "mem0")
    assert (newer["imported"], newer["updated"], newer["skipped"]) == (0, 1, 0), newer
    now = as_json(home, "--agent", "sam", "get", before["id"])
    assert (now["id"], now["content"], set(now["tags"]), now["valid_until"]) == (
        before["id"], V2["memory"], {"food", "drinks"}, _end_of("2025-12-31"))
    assert (now["metadata"]["source"], now["metadata"]["mem0"]["expiration_date"]) == ("email", "2025-12-31")
    assert [v["content"] for v in now["versions"]] == [V1["memory"]]
    for again in (v2, v1):
        summary = as_json(home, "import", str(again), "--from", "mem0")
        assert (summary["imported"], summary["updated"], summary["skipped"]) == (0, 0, 1), summary
        assert as_json(home, "--agent", "sam", "get", before["id"]) == now


def _after(memory_updated_at: float, item: dict[str, Any], **changed: Any) -> dict[str, Any]:
    """``item`` as mem0 gives it once it changed it a minute after ``memory_updated_at`` (an edit in engram)."""
    return {**item, **changed, "updated_at": datetime.fromtimestamp(memory_updated_at + 60, UTC).isoformat()}


def test_a_tag_added_in_engram_stays_when_mem0_changes_the_categories(tmp_path: Path) -> None:
    with opened(tmp_path) as engram:
        engram.import_from(export(V1), "mem0")
        sam = engram.for_agent("sam")
        [memory] = sam.list(limit=10)
        assert memory.metadata["mem0"]["imported_tags"] == ["food"]
        tagged = sam.update(memory, tags=["food", "mine"]).memory
        # mem0 then dropped "food" and added two: its categories replace the ones it brought, in its
        # order, and the tag added in engram follows them.
        later = _after(tagged.updated_at, V2, categories=["drinks", "tea"])
        summary = engram.import_from(export(later), "mem0")
        assert summary.updated == 1, summary
        now = sam.get(memory.id)
        assert now.tags == ("drinks", "tea", "mine")
        assert now.metadata["mem0"]["imported_tags"] == ["drinks", "tea"]
        # The same export again changes nothing.
        again = engram.import_from(export(later), "mem0")
        assert (again.imported, again.updated, again.skipped) == (0, 0, 1), again
        assert sam.get(memory.id) == now


def test_a_memory_imported_before_the_tags_were_kept_takes_mem0s_then_keeps_a_tag_added_after(tmp_path: Path) -> None:
    # Which of an earlier import's tags a person added is not known: the first newer export gives
    # mem0's categories alone, as before; from then on a tag added in engram stays.
    with opened(tmp_path) as engram:
        engram.import_from(export(V1), "mem0")
        sam = engram.for_agent("sam")
        [memory] = sam.list(limit=10)
        entry = {k: v for k, v in memory.metadata["mem0"].items() if k != "imported_tags"}
        old = sam.update(memory, tags=["food", "mine"], metadata={**memory.metadata, "mem0": entry}).memory
        engram.import_from(export(_after(old.updated_at, V2, categories=["drinks"])), "mem0")
        refreshed = sam.get(memory.id)
        assert refreshed.tags == ("drinks",)
        assert refreshed.metadata["mem0"]["imported_tags"] == ["drinks"]
        tagged = sam.update(refreshed, tags=["drinks", "mine"]).memory
        engram.import_from(export(_after(tagged.updated_at, V2, categories=["tea"])), "mem0")
        assert sam.get(memory.id).tags == ("tea", "mine")


def test_the_cli_keeps_a_tag_added_in_engram_and_the_mem0_export_leaves_the_bookkeeping_out(tmp_path: Path) -> None:
    home, v1, later, out = tmp_path / "home", tmp_path / "v1.json", tmp_path / "later.json", tmp_path / "out.json"
    v1.write_text(export(V1), encoding="utf-8")
    as_json(home, "import", str(v1), "--from", "mem0")
    [before] = as_json(home, "--agent", "sam", "list")
    run(home, "--agent", "sam", "update", before["id"], "--tags", "food,mine")
    stamp = as_json(home, "--agent", "sam", "get", before["id"])["updated_at"]
    later.write_text(export(_after(stamp, V2, categories=["drinks"])), encoding="utf-8")
    summary = as_json(home, "import", str(later), "--from", "mem0")
    assert summary["updated"] == 1, summary
    now = as_json(home, "--agent", "sam", "get", before["id"])
    assert now["tags"] == ["drinks", "mine"]
    assert now["metadata"]["mem0"]["imported_tags"] == ["drinks"]
    again = as_json(home, "import", str(later), "--from", "mem0")
    assert (again["updated"], again["skipped"]) == (0, 1), again
    assert as_json(home, "--agent", "sam", "get", before["id"]) == now
    # engram's bookkeeping is engram's: the mem0 document gives mem0's fields back, none of it.
    run(home, "--agent", "sam", "export", str(out), "--format", "mem0")
    [item] = json.loads(out.read_text(encoding="utf-8"))["results"]
    assert (item["id"], item["categories"], item["metadata"]) == ("m-1", ["drinks", "mine"], {"source": "email"})
    assert "imported_tags" not in json.dumps(item) and "imported_text_sha256" not in json.dumps(item)


def test_mem0s_categories_and_the_tags_added_in_engram_past_the_bound_are_refused_naming_the_item(
        tmp_path: Path) -> None:
    # 60 new categories beside 50 tags added in engram: 110, past MAX_TAGS (100). The import is
    # refused naming mem0's field, before anything is written, and the memory is kept as it was.
    with opened(tmp_path) as engram:
        engram.import_from(export(V1), "mem0")
        sam = engram.for_agent("sam")
        [memory] = sam.list(limit=10)
        tagged = sam.update(memory, tags=["food", *(f"mine{i}" for i in range(50))]).memory
        later = _after(tagged.updated_at, V2, categories=[f"new{i}" for i in range(60)])
        with pytest.raises(SnapshotError) as refused:
            engram.import_from(export(later, OTHER), "mem0")
        assert str(refused.value).startswith(
            f"results[0].categories: with the 50 tags added in engram to memory {memory.key}, has 110 different tags "
            "(allowed: at most 100 different tags"), refused.value
        assert sam.get(memory.id) == tagged and sam.count() == 1
