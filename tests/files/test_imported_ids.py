"""An id brought from outside (a snapshot's entry, the ``engram`` entry of a mem0 export) must be one
every door and memory file can name. One holding white space was stored as given: no door reached
it (a ref is trimmed), the markdown file's marker ended it at its first space, and YAML trimmed it,
so the next sync of the folder forgot the memory from the database ("removed from its memory file")
or failed with NotFoundError, and a fresh database reading the folder lost it. Such an id is refused
naming the entry and nothing is imported; any other id, however odd, round-trips through the folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram.engine import Engram
from engram.errors import ValidationError
from engram.files.sync import FileSync
from tests.files.conftest import held_in_files

UNUSABLE = ["  padded  ", "two words", "x -->", "tab\there", "line\nbreak", "para\u2028sep", "x" * 101]
ODD_BUT_USABLE = ["../../x", "a-->b", "<!--", "id:y", "key:z", "a,b", "a%20b", "[[w]]", "'q'", '"q"', "#h", "---",
                  "null", "yes", "x" * 100]


@pytest.mark.parametrize("bad", UNUSABLE)
def test_a_snapshot_id_no_door_could_name_is_refused_and_nothing_is_imported(engram: Engram, bad: str) -> None:
    engram.remember("kept", key="kept")
    document = json.dumps({"memories": [{"id": "fine", "content": "first"}, {"id": bad, "content": "second"}]})
    with pytest.raises(ValidationError) as refused:
        engram.import_snapshot(document)
    assert refused.value.field == "memories[1].id" and "is not an id" in refused.value.problem, refused.value
    assert [m.content for m in engram.list()] == ["kept"]


def test_a_mem0_exports_engram_id_no_door_could_name_is_refused(engram: Engram) -> None:
    item = {"id": "m1", "memory": "The user likes tea", "user_id": "default", "engram": {"id": "two words"}}
    with pytest.raises(ValidationError) as refused:
        engram.import_from(json.dumps({"results": [item]}), "mem0")
    assert refused.value.field.endswith("engram.id") and "is not an id" in str(refused.value), refused.value
    assert engram.count() == 0


def test_a_hand_written_yaml_id_with_a_space_is_reported_and_the_other_entries_read(engram: Engram,
                                                                                     tmp_path: Path) -> None:
    folder = tmp_path / "hand"
    (folder / "agents" / "default").mkdir(parents=True)
    (folder / "agents" / "default" / "notes.yaml").write_text(
        "memories:\n- id: two words\n  content: refused entry\n- content: a new entry\n", encoding="utf-8")
    report = FileSync(engram, folder, format="yaml").sync()
    assert [p.line for p in report.problems] == [2] and "is not an id" in report.problems[0].message, report
    assert [m.content for m in engram.list()] == ["a new entry"]


@pytest.mark.parametrize("fmt", ["markdown", "yaml"])
def test_odd_ids_a_snapshot_brings_round_trip_through_the_memory_folder(engram: Engram, tmp_path: Path,
                                                                        fmt: str) -> None:
    entries = [{"id": odd, "content": f"memory {i}", "key": f"k{i}", "links": [ODD_BUT_USABLE[i - 1]] if i else []}
               for i, odd in enumerate(ODD_BUT_USABLE)]
    engram.import_snapshot(json.dumps({"memories": entries}))
    assert {m.id for m in engram.store.iter_all()} == set(ODD_BUT_USABLE)
    live = FileSync(engram, tmp_path / "folder", format=fmt)
    assert live.sync().problems == []
    again = live.sync()
    assert again.problems == [] and not again.changed, again
    before = held_in_files(engram)
    assert len(before) == len(ODD_BUT_USABLE)
    with Engram.from_settings(home=tmp_path / "fresh", files={"enabled": False}) as fresh:
        report = FileSync(fresh, tmp_path / "folder", format=fmt).sync()
        assert report.problems == [], report
        assert held_in_files(fresh) == before
