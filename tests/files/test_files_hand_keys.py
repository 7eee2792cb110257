"""An entry added by hand with a key of its own (a YAML item's ``key:``, a markdown marker's ``key:``
after an empty ``id:``) is a new memory under that key, through ``engram sync`` (``FileSync``) and
``engram import FOLDER`` (``Engram.import_from``); a key another memory of its scope holds is
refused with a note on the entry's file and line, that memory unchanged and the entry left in its
file. Real SQLite files, real folders."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engram.engine import Engram
from engram.files.sync import FileSync

ENTRY = {
    "yaml": ("places.yaml", "memories:\n  - content: The office is in Berlin\n    key: {key}\n    tags: [work]\n"),
    "markdown": ("places.md", "# Places\n\n- The office is in Berlin <!-- id: key:{key} -->\n  - tags: work\n"),
}


def opened(home: Path) -> Engram:
    return Engram.from_settings(home=home, embeddings={"provider": "none"}, files={"enabled": False})


def written(root: Path, fmt: str, key: str) -> tuple[str, str]:
    """The entry of ``fmt`` keyed ``key`` written into ``root/agents/default/``: its path in the folder and text."""
    name, text = ENTRY[fmt]
    (root / "agents/default").mkdir(parents=True, exist_ok=True)
    text = text.format(key=key)
    (root / "agents/default" / name).write_text(text, encoding="utf-8")
    return f"agents/default/{name}", text


@pytest.mark.parametrize("fmt", ["yaml", "markdown"])
def test_a_key_written_by_hand_is_the_new_memorys_key_through_sync(tmp_path: Path, fmt: str) -> None:
    folder = tmp_path / "home" / "memory"
    rel, _ = written(folder, fmt, "berlin")
    with opened(tmp_path / "home") as engram:
        syncer = FileSync(engram, folder, format=fmt)
        report = syncer.sync()
        assert (report.db_created, report.problems) == (1, []), report
        [memory] = engram.list()
        assert (memory.key, memory.content, memory.tags) == ("berlin", "The office is in Berlin", ("work",))
        # Written back with its id and the key written, and settled: the next pass has nothing to do.
        text = (folder / rel).read_text(encoding="utf-8")
        if fmt == "yaml":
            assert f"- id: {memory.id}\n" in text and "\n  key: berlin\n" in text, text
        else:
            assert re.search(rf"<!-- id:{memory.id} key:berlin ", text), text
        assert not syncer.sync().changed
        assert engram.get("berlin").id == memory.id


@pytest.mark.parametrize("fmt", ["yaml", "markdown"])
def test_a_key_written_by_hand_is_the_new_memorys_key_through_import(tmp_path: Path, fmt: str) -> None:
    written(tmp_path / "folder", fmt, "berlin")
    with opened(tmp_path / "home") as engram:
        summary = engram.import_from(tmp_path / "folder", "folder")
        assert (summary.imported, summary.warnings) == (1, ()), summary
        [memory] = engram.list()
        assert (memory.key, memory.content) == ("berlin", "The office is in Berlin")


def test_a_key_another_scope_holds_is_free_in_the_entrys_own(tmp_path: Path) -> None:
    # Keys are unique within a scope: a global memory of the key leaves it free to the agent's folder.
    folder = tmp_path / "home" / "memory"
    written(folder, "yaml", "berlin")
    with opened(tmp_path / "home") as engram:
        held = engram.remember("Berlin is a city", key="berlin", scope="global").memory
        report = FileSync(engram, folder, format="yaml").sync()
        assert (report.db_created, report.problems) == (1, []), report
        mine = [m for m in engram.list() if m.scope.agent == "default"]
        assert [(m.key, m.content) for m in mine] == [("berlin", "The office is in Berlin")]
        assert engram.get(held.id).content == "Berlin is a city"


@pytest.mark.parametrize("fmt", ["yaml", "markdown"])
def test_a_key_another_memory_holds_is_refused_with_a_note_through_sync(tmp_path: Path, fmt: str) -> None:
    folder = tmp_path / "home" / "memory"
    with opened(tmp_path / "home") as engram:
        syncer = FileSync(engram, folder, format=fmt)
        held = engram.remember("The office is in Paris", key="berlin", tags="work").memory
        engram.update(held.id, content="The office is in Paris, by the river")
        before = (engram.get(held.id), engram.versions(held.id))
        rel, text = written(folder, fmt, "berlin")
        for _ in range(2):  # refused each pass until the person renames it
            report = syncer.sync()
            assert report.db_created == report.db_updated == 0, report
            [problem] = report.problems
            assert (problem.path, problem.line, problem.skipped) == (rel, 3 if fmt == "markdown" else 2, True)
            assert problem.message.startswith('entry not imported: key: "berlin" is held by another memory of '
                                              f"agent:default ({held.id})"), problem.message
            assert (engram.get(held.id), engram.versions(held.id)) == before
            assert [m.id for m in engram.list()] == [held.id]
            assert (folder / rel).read_text(encoding="utf-8") == text  # left as written, for the person to rename
        # Renamed, it is stored under its new key at the next pass.
        (folder / rel).write_text(text.replace("berlin", "berlin-office"), encoding="utf-8")
        report = syncer.sync()
        assert (report.db_created, report.problems) == (1, []), report
        assert engram.get("berlin-office").content == "The office is in Berlin"
        assert engram.get(held.id).content == "The office is in Paris, by the river"


@pytest.mark.parametrize("fmt", ["yaml", "markdown"])
def test_a_key_another_memory_holds_is_refused_with_a_note_through_import(tmp_path: Path, fmt: str) -> None:
    rel, text = written(tmp_path / "folder", fmt, "berlin")
    with opened(tmp_path / "home") as engram:
        held = engram.remember("The office is in Paris", key="berlin").memory
        before = (engram.get(held.id), engram.versions(held.id))
        summary = engram.import_from(tmp_path / "folder", "folder")
        assert summary.imported == 0, summary
        line = 3 if fmt == "markdown" else 2
        [warning] = summary.warnings
        assert warning.startswith(f'{rel}:{line}: entry not imported: key: "berlin" is held by another memory of '
                                  f"agent:default ({held.id})"), warning
        assert (engram.get(held.id), engram.versions(held.id)) == before
        assert [m.id for m in engram.list()] == [held.id]
    assert (tmp_path / "folder" / rel).read_text(encoding="utf-8") == text


def test_a_second_entry_of_one_key_is_refused_and_the_first_stored(tmp_path: Path) -> None:
    # Two items added with one key: the first is the memory of the key, the second never overwrites it.
    folder = tmp_path / "home" / "memory"
    (folder / "agents/default").mkdir(parents=True)
    (folder / "agents/default/places.yaml").write_text(
        "memories:\n  - content: The office is in Berlin\n    key: office\n"
        "  - content: The office is in Lyon\n    key: office\n", encoding="utf-8")
    with opened(tmp_path / "home") as engram:
        report = FileSync(engram, folder, format="yaml").sync()
        assert report.db_created == 1
        assert [(p.line, p.message.split(" (")[0]) for p in report.problems] == [
            (4, 'entry not imported: key: "office" is held by another memory of agent:default')]
        [memory] = engram.list()
        assert (memory.key, memory.content, engram.versions(memory.id)) == ("office", "The office is in Berlin", [])
        assert "The office is in Lyon" in (folder / "agents/default/places.yaml").read_text(encoding="utf-8")


@pytest.mark.parametrize("fmt", ["yaml", "markdown"])
def test_an_invalid_key_written_by_hand_is_refused_naming_the_key(tmp_path: Path, fmt: str) -> None:
    # Checked as the engine checks a key (``parse_key``): this one is too long.
    folder = tmp_path / "home" / "memory"
    rel, text = written(folder, fmt, "k" * 201)
    with opened(tmp_path / "home") as engram:
        report = FileSync(engram, folder, format=fmt).sync()
        assert report.db_created == 0
        named = "marker key" if fmt == "markdown" else "key"  # (a marker's field, by the name the marker gives it)
        assert [(p.path, p.message) for p in report.problems] == [
            (rel, f"entry not imported: {named}: too long or has control characters (allowed: 1-200 printable characters)")]
        assert engram.list() == []
    assert (folder / rel).read_text(encoding="utf-8") == text


@pytest.mark.parametrize("fmt", ["yaml", "markdown"])
@pytest.mark.parametrize("content_edited", [False, True])
def test_a_key_edited_in_a_known_entry_is_put_back_and_said(tmp_path: Path, fmt: str, content_edited: bool) -> None:
    # A key changed in the marker of an entry the database holds was left in the file, unsaid, while
    # the memory kept its own key: the two sides disagreed at every pass, and a folder restored into
    # a new database brought the memory back under the file's key. A memory's key is the database's.
    folder = tmp_path / "home" / "memory"
    with opened(tmp_path / "home") as engram:
        syncer = FileSync(engram, folder, format=fmt)
        memory = engram.remember("The office is in Berlin", key="office", tags=["places"]).memory
        syncer.sync()
        path = folder / "agents/default" / f"places.{'md' if fmt == 'markdown' else 'yaml'}"
        text = path.read_text(encoding="utf-8")
        edited = text.replace("key:office ", "key:work-site ") if fmt == "markdown" else \
            text.replace("key: office\n", "key: work-site\n")
        assert edited != text
        if content_edited:
            edited = edited.replace("in Berlin", "in Munich")
        path.write_text(edited, encoding="utf-8")
        report = syncer.sync()
        assert [p.message for p in report.problems] == [
            f'entry {memory.id}: key "work-site" is not the database\'s and is put back as "office" (a memory\'s'
            ' key does not change; to store the text under another key, add it as a new entry giving that key)']
        assert engram.get("office").content == f"The office is in {'Munich' if content_edited else 'Berlin'}"
        text = path.read_text(encoding="utf-8")
        assert "work-site" not in text and "office" in text, text
        assert syncer.sync().problems == []  # settled: the next pass has nothing to say
