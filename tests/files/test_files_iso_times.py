"""The times of a memory-file entry (``created_at``, ``updated_at``, ``last_accessed``,
``superseded_at``; a markdown marker's ``created:``, ``updated:``, ``seen:``, ``superseded_at:``)
read as ``valid_from`` does: epoch seconds, ISO 8601 text, or the date/datetime YAML makes of an
unquoted one (a date is its midnight UTC, a time without a zone is UTC). A person editing a YAML
file by hand writes dates, and those used to be refused as "not a number". A bad one is refused
naming the file, line, field and what is allowed; engram keeps writing epoch seconds, so its own
files come back byte for byte. Real SQLite files, real folders, through ``engram import FOLDER``
(``Engram.import_from``) and ``engram sync`` (``FileSync``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.engine import Engram
from engram.files.export import export_folder, import_folder
from engram.files.sync import FileSync
from tests.times import at

OLD = "0190aaaa-0000-7000-8000-000000000001"
NEW = "0190aaaa-0000-7000-8000-000000000002"
ALLOWED = ("(allowed: epoch seconds or an ISO 8601 date/time (2026-04-12, 2026-04-12T09:30+02:00), "
           "a time from 0002-01-01 to 9998-12-31 (UTC))")


CREATED, UPDATED, SEEN, RETIRED = (at("2024-06-01T06:00:00+00:00"), at("2024-06-02T12:00:00+00:00"),
                                   at("2024-06-03T00:00:00+00:00"), at("2024-06-04T09:30:00+00:00"))

# Written by hand, every time as a person writes one: quoted ISO with an offset, an unquoted
# datetime (YAML loads it as one), a bare date, a time without a zone (UTC, as valid_from's).
HAND_WRITTEN = {
    "yaml": ("notes.yaml", f"""memories:
  - id: {OLD}
    content: The office is in Berlin
    key: office-berlin
    created_at: "2024-06-01T08:00:00+02:00"
    updated_at: 2024-06-02T12:00:00Z
    last_accessed: 2024-06-03
    superseded_by: {NEW}
    superseded_at: "2024-06-04T09:30:00"
  - id: {NEW}
    content: The office is in Lyon
    key: office-lyon
    created_at: 2024-06-01 06:00:00
    updated_at: "2024-06-02T12:00:00Z"
"""),
    "markdown": ("notes.md", f"""# Notes

- The office is in Berlin <!-- id:{OLD} key:office-berlin created:2024-06-01T08:00:00+02:00 \
updated:2024-06-02T12:00:00Z seen:2024-06-03 superseded:{NEW} superseded_at:2024-06-04T09:30:00 -->
- The office is in Lyon <!-- id:{NEW} key:office-lyon created:2024-06-01T06:00:00 updated:{UPDATED!r} -->
"""),
}
TIMES = {OLD: (CREATED, UPDATED, SEEN, RETIRED), NEW: (CREATED, UPDATED, None, None)}


def opened(home: Path) -> Engram:
    return Engram.from_settings(home=home, embeddings={"provider": "none"}, files={"enabled": False})


def written(root: Path, name: str, text: str) -> Path:
    (root / "global").mkdir(parents=True, exist_ok=True)
    path = root / "global" / name
    path.write_text(text, encoding="utf-8")
    return path


def times(engram: Engram) -> dict[str, tuple[float, float, float | None, float | None]]:
    return {m.id: (m.created_at, m.updated_at, m.last_accessed, m.superseded_at) for m in engram.store.iter_all()}


@pytest.mark.parametrize("fmt", ["yaml", "markdown"])
def test_hand_written_iso_and_yaml_times_are_imported_as_those_times(tmp_path: Path, fmt: str) -> None:
    written(tmp_path / "folder", *HAND_WRITTEN[fmt])
    with opened(tmp_path / "home") as engram:
        summary = engram.import_from(tmp_path / "folder", "folder")
        assert (summary.imported, summary.warnings) == (2, ()), summary
        assert times(engram) == TIMES
        assert engram.get(OLD).superseded_by == NEW


def test_a_yaml_item_added_by_hand_is_synced_with_its_dates(tmp_path: Path) -> None:
    # No id: new, remembered at the next sync, created when its times say (the update, being the
    # only one given, in the second item), not at the sync's clock.
    folder = tmp_path / "home" / "memory"
    written(folder, "notes.yaml", "memories:\n"
                                  "  - content: The office is in Berlin\n"
                                  "    created_at: '2024-06-01T08:00:00+02:00'\n    updated_at: 2024-06-02T12:00:00Z\n"
                                  "  - content: The office is in Lyon\n    updated_at: 2024-06-02T12:00:00Z\n")
    with opened(tmp_path / "home") as engram:
        report = FileSync(engram, folder, format="yaml").sync()
        assert (report.db_created, report.problems) == (2, []), report
        stored = {m.content: (m.created_at, m.updated_at) for m in engram.store.iter_all()}
        assert stored == {"The office is in Berlin": (CREATED, CREATED),  # (new: updated when created)
                          "The office is in Lyon": (UPDATED, UPDATED)}


@pytest.mark.parametrize("fmt", ["yaml", "markdown"])
def test_a_folder_synced_with_hand_written_times_holds_them(tmp_path: Path, fmt: str) -> None:
    folder = tmp_path / "home" / "memory"
    written(folder, *HAND_WRITTEN[fmt])
    with opened(tmp_path / "home") as engram:
        report = FileSync(engram, folder, format=fmt).sync()
        assert (report.db_created, report.problems) == (2, []), report
        assert times(engram) == TIMES


@pytest.mark.parametrize(("fmt", "bad", "said"), [
    ("yaml", "updated_at: yesterday", 'updated_at: cannot read "yesterday"'),
    ("yaml", "created_at: '2024-06-01 at noon'", 'created_at: cannot read "2024-06-01 at noon"'),
    # Unquoted, no real date: YAML's loader raised ValueError on it, the whole file unread with no line said.
    ("yaml", "last_accessed: 2024-13-01", 'last_accessed: cannot read "2024-13-01"'),
    ("yaml", "superseded_at: true", "superseded_at: true is not a time"),
    ("markdown", "updated:yesterday", 'marker updated: cannot read "yesterday"'),
    ("markdown", "seen:2024-06-03T25:00", 'marker seen: cannot read "2024-06-03T25:00"'),
])
def test_a_bad_time_is_refused_naming_file_line_and_field(tmp_path: Path, fmt: str, bad: str, said: str) -> None:
    name, text = {
        "yaml": ("notes.yaml", f"memories:\n  - content: Kept\n  - id: {OLD}\n    content: Refused\n    {bad}\n"),
        "markdown": ("notes.md", f"# Notes\n\n- Kept\n- Refused <!-- id:{OLD} {bad} -->\n"),
    }[fmt]
    line = 3 if fmt == "yaml" else 4
    written(tmp_path / "folder", name, text)
    with opened(tmp_path / "home") as engram:
        summary = import_folder(engram, tmp_path / "folder")
        assert summary.created == 1 and summary.imported == 0
        assert [(p.path, p.line, p.message) for p in summary.problems] == [
            (f"global/{name}", line, f"entry not imported: {said} {ALLOWED}")]
        assert [m.content for m in engram.store.iter_all()] == ["Kept"]
    folder = tmp_path / "synced" / "memory"
    path = written(folder, name, text)
    with opened(tmp_path / "synced") as engram:
        report = FileSync(engram, folder, format=fmt).sync()
        assert [(p.path, p.line, p.message) for p in report.problems] == [
            (f"global/{name}", line, f"entry not imported: {said} {ALLOWED}")]
        assert [m.content for m in engram.store.iter_all()] == ["Kept"]
        assert "Refused" in path.read_text(encoding="utf-8")  # the refused entry is left in its file


@pytest.mark.parametrize("fmt", ["yaml", "markdown"])
def test_engrams_own_files_come_back_byte_for_byte_beside_hand_written_times(tmp_path: Path, fmt: str) -> None:
    # engram writes epoch seconds (exact, fractions kept): reading dates too changes nothing of
    # what it wrote, and an entry dated by hand is written back in engram's own way.
    with opened(tmp_path / "one") as engram:
        engram.remember("Likes green tea", key="tea", tags=["own"], created_at=1_700_000_000.123456)
        engram.remember("Chad's boat is called Yak", key="boat", tags=["own"], created_at=1_600_000_000.5)
        engram.remember("Chad's boat is called Yak II", key="boat", tags=["own"])
        engram.remember("Lives in Paris", key="paris", tags=["own"])
        engram.remember("Lives in Rome", key="rome", tags=["own"])
        engram.supersede("paris", "rome")
        engram.recall("green tea")  # a last access to write
        export_folder(engram.store.iter_all(), tmp_path / "out", format=fmt)
    [own] = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    rel, first = own.relative_to(tmp_path / "out"), own.read_bytes()
    written(tmp_path / "out", *HAND_WRITTEN[fmt])
    with opened(tmp_path / "two") as engram:
        summary = engram.import_from(tmp_path / "out", "folder")
        assert (summary.imported, summary.warnings) == (6, ()), summary
        imported = times(engram)
        assert {i: imported[i] for i in TIMES} == TIMES
        export_folder(engram.store.iter_all(), tmp_path / "again", format=fmt)
    again = {p.relative_to(tmp_path / "again"): p.read_bytes() for p in (tmp_path / "again").rglob("*") if p.is_file()}
    assert again.pop(rel) == first
    [hand] = again.values()  # written back as engram writes: epoch seconds
    assert repr(UPDATED).encode() in hand and b"2024-06-02T12" not in hand and b"+02:00" not in hand
    with opened(tmp_path / "three") as engram:
        report = FileSync(engram, tmp_path / "out", format=fmt).sync()
        assert (report.db_created, report.problems) == (6, []), report
        assert own.read_bytes() == first
        assert times(engram) == imported


def test_a_recall_count_beyond_any_number_is_refused_naming_it(tmp_path: Path) -> None:
    # Beside the times, in the same check: a YAML int too large for a float raised OverflowError,
    # leaving the whole file unread.
    written(tmp_path / "folder", "notes.yaml",
            f"memories:\n  - content: Kept\n  - content: Refused\n    recall_count: {'9' * 400}\n")
    with opened(tmp_path / "home") as engram:
        summary = import_folder(engram, tmp_path / "folder")
        assert summary.created == 1
        [problem] = summary.problems
        assert (problem.path, problem.line) == ("global/notes.yaml", 3)
        assert problem.message.startswith("entry not imported: recall_count: 9999")
        assert problem.message.endswith("is not a number (allowed: a whole number, 0 or more)")


@pytest.mark.parametrize(("fmt", "name", "text", "line"), [
    ("yaml", "notes.yaml", 'memories:\n  - content: Kept\n  - content: Dated later than now\n    created_at: "2999-01-01"\n', 3),
    ("markdown", "notes.md", "# Notes\n\n- Kept\n- Dated later than now (2999-01-01)\n", 4),
])
def test_an_entry_added_by_hand_dated_later_than_now_is_refused_and_left_as_written(
        tmp_path: Path, fmt: str, name: str, text: str, line: int) -> None:
    # Its memory would be created after every change the clock stamps on it later (updated_at
    # before created_at): refused as ``remember(created_at=...)`` refuses it, the entry left in
    # its file for the person to fix, the file's other entries stored.
    folder = tmp_path / "home" / "memory"
    path = written(folder, name, text)
    with opened(tmp_path / "home") as engram:
        report = FileSync(engram, folder, format=fmt).sync()
        [problem] = report.problems
        assert (problem.path, problem.line) == (f"global/{name}", line)
        assert problem.message.startswith("entry not imported: created_at: 2999-01-01T00:00:00+00:00 is later than now")
        assert [m.content for m in engram.store.iter_all()] == ["Kept"]
    assert "Dated later than now" in path.read_text(encoding="utf-8")
