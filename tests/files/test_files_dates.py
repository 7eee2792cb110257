"""A memory-folder entry's memory is never created after its own last change, as any import's
(``record_times``): an entry with an update time but no creation (a marker's ``updated:`` alone, a
YAML item's ``updated_at`` written by hand) is created at that update, not at the clock's now; one
created later than its update (its date edited by hand to a later day) is created at the earlier,
its update kept, and the sync's or the import's report says so as a note on the entry's file and
line (as it says PII found: the entry is taken all the same). A folder engram wrote comes back with
exactly its times. Real SQLite files, real folders, through ``engram import FOLDER`` (``import_from``)
and ``engram sync`` (``FileSync``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.engine import Engram
from engram.files.export import export_folder, import_folder
from engram.files.sync import FileSync
from tests.times import at

UPDATED = "2024-06-02T12:00:00+00:00"
EARLIER = "2024-01-10T09:00:00+00:00"
ID = "0190aaaa-0000-7000-8000-000000000001"
RETIMED = ("warning: created 2024-06-10T00:00:00+00:00 is later than updated 2024-06-02T12:00:00+00:00: "
           "imported as created at the earlier")


def opened(home: Path) -> Engram:
    return Engram.from_settings(home=home, embeddings={"provider": "none"}, files={"enabled": False})


# An entry engram wrote (its id in its marker), its creation taken out: only its update time is left.
ONLY_UPDATED = {
    "markdown": ("notes.md", f"# Notes\n\n- Chad's boat is called Yak <!-- id:{ID} key:boat updated:{at(UPDATED)!r} -->\n"),
    "yaml": ("notes.yaml", f"memories:\n  - id: {ID}\n    content: Chad's boat is called Yak\n    key: boat\n"
                           f"    updated_at: {at(UPDATED)!r}\n"),
}
# Its date edited by hand to a day after its update (2024-06-10, updated 2024-06-02).
DATED_LATER = {
    "markdown": ("notes.md", f"# Notes\n\n- Chad's boat is called Yak (2024-06-10) <!-- id:{ID} key:boat "
                             f"created:{at(EARLIER)!r} updated:{at(UPDATED)!r} -->\n"),
    "yaml": ("notes.yaml", f"memories:\n  - id: {ID}\n    content: Chad's boat is called Yak\n    timestamp: '2024-06-10'\n"
                           f"    key: boat\n    created_at: {at(EARLIER)!r}\n    updated_at: {at(UPDATED)!r}\n"),
}


def written(root: Path, file: tuple[str, str]) -> Path:
    (root / "global").mkdir(parents=True)
    path = root / "global" / file[0]
    path.write_text(file[1], encoding="utf-8")
    return path


@pytest.mark.parametrize("fmt", ["markdown", "yaml"])
def test_an_imported_entry_with_only_an_update_time_is_created_then(tmp_path: Path, fmt: str) -> None:
    written(tmp_path / "folder", ONLY_UPDATED[fmt])
    with opened(tmp_path / "home") as engram:
        summary = engram.import_from(tmp_path / "folder", "folder")
        assert (summary.imported, summary.warnings) == (1, ()), summary
        memory = engram.get(ID)
        assert (memory.created_at, memory.updated_at) == (at(UPDATED), at(UPDATED))


@pytest.mark.parametrize("fmt", ["markdown", "yaml"])
def test_a_synced_entry_with_only_an_update_time_is_created_then(tmp_path: Path, fmt: str) -> None:
    folder = tmp_path / "home" / "memory"
    written(folder, ONLY_UPDATED[fmt])
    with opened(tmp_path / "home") as engram:
        report = FileSync(engram, folder, format=fmt).sync()
        assert (report.db_created, report.problems) == (1, []), report
        memory = engram.get(ID)
        assert (memory.created_at, memory.updated_at) == (at(UPDATED), at(UPDATED))


@pytest.mark.parametrize("fmt", ["markdown", "yaml"])
def test_an_imported_entry_dated_after_its_update_is_created_at_the_update_with_a_note(tmp_path: Path, fmt: str) -> None:
    written(tmp_path / "folder", DATED_LATER[fmt])
    with opened(tmp_path / "home") as engram:
        summary = import_folder(engram, tmp_path / "folder")
        assert summary.imported == 1
        [problem] = summary.problems
        assert (problem.path, problem.message, problem.skipped) == (f"global/{DATED_LATER[fmt][0]}", RETIMED, False)
        assert problem.line > 0
        memory = engram.get(ID)
        assert (memory.created_at, memory.updated_at) == (at(UPDATED), at(UPDATED))


@pytest.mark.parametrize("fmt", ["markdown", "yaml"])
def test_a_synced_entry_dated_after_its_update_is_created_at_the_update_with_a_note(tmp_path: Path, fmt: str) -> None:
    folder = tmp_path / "home" / "memory"
    path = written(folder, DATED_LATER[fmt])
    with opened(tmp_path / "home") as engram:
        sync = FileSync(engram, folder, format=fmt)
        report = sync.sync()
        assert report.db_created == 1
        [problem] = report.problems
        assert (problem.path, problem.message, problem.skipped) == (f"global/{DATED_LATER[fmt][0]}", RETIMED, False)
        memory = engram.get(ID)
        assert (memory.created_at, memory.updated_at) == (at(UPDATED), at(UPDATED))
        # The file shows what was stored: the next pass sees no edited date to put back.
        assert "2024-06-10" not in path.read_text(encoding="utf-8")
        again = sync.sync()
        assert (again.problems, again.db_updated) == ([], 0), again
        assert engram.get(ID) == memory


@pytest.mark.parametrize(("item", "created", "note"), [
    (f"    updated_at: {at(UPDATED)!r}\n", UPDATED, []),
    (f"    timestamp: '2024-06-10'\n    updated_at: {at(UPDATED)!r}\n", UPDATED,
     [("global/notes.yaml", 2, RETIMED)]),
])
def test_an_entry_added_by_hand_is_never_created_after_its_update(tmp_path: Path, item: str, created: str,
                                                                  note: list) -> None:
    # A YAML item without an id is new: it is remembered, and a new memory is updated when created.
    text = f"memories:\n  - content: Chad's boat is called Yak\n{item}"
    folder = tmp_path / "home" / "memory"
    written(folder, ("notes.yaml", text))
    with opened(tmp_path / "home") as engram:
        report = FileSync(engram, folder, format="yaml").sync()
        assert report.db_created == 1
        assert [(p.path, p.line, p.message) for p in report.problems] == note
        [memory] = engram.list(limit=5)
        assert (memory.created_at, memory.updated_at) == (at(created), at(created))
    written(tmp_path / "folder", ("notes.yaml", text))
    with opened(tmp_path / "imported") as engram:
        summary = import_folder(engram, tmp_path / "folder")
        assert summary.created == 1
        assert [(p.path, p.line, p.message) for p in summary.problems] == note
        [memory] = engram.list(limit=5)
        assert (memory.created_at, memory.updated_at) == (at(created), at(created))


@pytest.mark.parametrize("fmt", ["markdown", "yaml"])
def test_a_folder_engram_wrote_comes_back_with_exactly_its_times(tmp_path: Path, fmt: str) -> None:
    with opened(tmp_path / "one") as engram:
        engram.remember("Likes green tea", key="tea", created_at=1_700_000_000.123456)
        engram.remember("Chad's boat is called Yak", key="boat", created_at=1_600_000_000.5)
        engram.remember("Chad's boat is called Yak II", key="boat")  # updated now, created as given
        before = {m.id: (m.created_at, m.updated_at) for m in engram.store.iter_all()}
        assert len({created < updated for created, updated in before.values()}) == 2  # one of each
        export_folder(engram.store.iter_all(), tmp_path / "out", format=fmt)
    with opened(tmp_path / "imported") as fresh:
        summary = import_folder(fresh, tmp_path / "out")
        assert (summary.imported, summary.problems) == (2, [])
        assert {m.id: (m.created_at, m.updated_at) for m in fresh.store.iter_all()} == before
    with opened(tmp_path / "synced") as fresh:
        report = FileSync(fresh, tmp_path / "out", format=fmt).sync()
        assert (report.db_created, report.problems) == (2, [])
        assert {m.id: (m.created_at, m.updated_at) for m in fresh.store.iter_all()} == before
