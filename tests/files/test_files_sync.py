"""Two-way sync: database events reach files, file edits reach the database, conflicts keep both."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from engram.engine import Engram, Filters
from engram.files import conflicts
from engram.files.paths import Folder, PathRefused
from engram.files.sync import FileSync
from tests.files.conftest import entry_block

PREFS = "agents/default/preferences.md"


def _read(folder: Path, rel: str) -> str:
    return (folder / rel).read_text(encoding="utf-8")


def _edit(folder: Path, rel: str, old: str, new: str) -> None:
    text = _read(folder, rel)
    assert old in text, text
    (folder / rel).write_text(text.replace(old, new, 1), encoding="utf-8")


def test_every_database_change_reaches_its_file_and_only_its_file(engram: Engram, syncer: FileSync, folder: Path) -> None:
    first = engram.remember("User prefers Python", tags="preferences")
    engram.remember("Water boils at 100 C", tags="facts")
    facts_before = os.stat(folder / "agents/default/facts.md").st_mtime_ns
    assert "User prefers Python" in _read(folder, PREFS)
    engram.remember("User prefers Rust", key=first.memory.key, tags="preferences")
    assert "User prefers Rust" in _read(folder, PREFS) and "Python" not in _read(folder, PREFS)
    engram.forget(first.memory.id)
    assert "Rust" not in _read(folder, PREFS)
    assert os.stat(folder / "agents/default/facts.md").st_mtime_ns == facts_before  # unrelated file untouched
    assert not [p for p in folder.rglob("*.tmp")]  # atomic writes leave no temporaries


def test_hand_edits_of_each_kind_reach_the_database(engram: Engram, syncer: FileSync, folder: Path) -> None:
    keep = engram.remember("User prefers Python", tags="preferences")
    gone = engram.remember("User likes tea", tags="preferences")
    _edit(folder, PREFS, "User prefers Python (", "User prefers Python 3.13 (")
    text = _read(folder, PREFS)
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if "User likes tea" in line)
    del lines[start:start + 2]  # the bullet and its tags line
    lines.append("- Added by hand (2026-02-09)\n  - tags: preferences, manual\n  - importance: 0.9")
    (folder / PREFS).write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "global").mkdir(exist_ok=True)
    (folder / "global/facts.md").write_text("# Facts\n\n- The sky is blue\n", encoding="utf-8")

    report = syncer.sync()

    assert (report.db_created, report.db_updated, report.db_forgotten) == (2, 1, 0 + 1)
    assert engram.get(keep.memory.id).content == "User prefers Python 3.13"
    assert engram.find(gone.memory.id) is None
    added = engram.list(Filters(tags="manual"))[0]
    assert added.content == "Added by hand" and added.importance == 0.9 and added.created_at == 1770595200.0
    assert engram.list(scope="global")[0].content == "The sky is blue"
    # New bullets got their ids written back.
    assert f"id:{added.id}" in _read(folder, PREFS)
    assert "id:" in _read(folder, "global/facts.md")
    # A second pass finds nothing to do.
    again = syncer.sync()
    assert not again.changed


def test_conflict_database_wins_and_file_version_is_kept(engram: Engram, syncer: FileSync, folder: Path) -> None:
    memory = engram.remember("User prefers Python", tags="preferences").memory
    _edit(folder, PREFS, "User prefers Python (", "User prefers Python, edited in the file (")
    syncer.detach()  # the database changes while nobody writes the file: both sides now differ
    engram.remember("User prefers Python, edited in the database", key=memory.key, tags="preferences")
    report = syncer.sync()
    assert len(report.conflicts) == 1
    assert engram.get(memory.id).content == "User prefers Python, edited in the database"
    assert "edited in the database" in _read(folder, PREFS)
    kept = conflicts.list_conflicts(syncer.folder, syncer.fmt, max_content_chars=8000)
    assert [(c.entry_id, c.kind) for c in kept] == [(memory.id, "both-changed")]
    assert kept[0].entries[0].content == "User prefers Python, edited in the file"
    assert "edited in the file" in (folder / report.conflicts[0]).read_text()

    conflicts.resolve(engram, syncer.folder, kept[0], "file")
    syncer.sync()
    assert engram.get(memory.id).content == "User prefers Python, edited in the file"
    assert "edited in the file" in _read(folder, PREFS)
    assert conflicts.list_conflicts(syncer.folder, syncer.fmt, max_content_chars=8000) == []


def test_an_edit_and_the_engines_own_importance_change_are_both_kept(engram: Engram, syncer: FileSync,
                                                                      folder: Path) -> None:
    """The engine changes importance by itself (recalls strengthen, decay lowers): that and a
    person's edit of the same memory since the last sync are no conflict, whichever side changed
    only the importance."""
    edited = engram.remember("User prefers Python", tags="preferences").memory
    rated = engram.remember("User likes tea", tags="preferences").memory
    _edit(folder, PREFS, "User prefers Python (", "User prefers Python 3.13 (")
    text = _read(folder, PREFS)
    tea = text.index("User likes tea")  # its importance, 0.5, is the default: not written until changed
    (folder / PREFS).write_text(text[:tea] + text[tea:].replace("  - tags: preferences\n",
                                                                "  - tags: preferences\n  - importance: 0.2\n", 1),
                                encoding="utf-8")
    syncer.detach()  # the database changes while nobody writes the file
    engram.update(edited.id, importance=0.9)
    engram.remember("User likes green tea", key=rated.key, tags="preferences")
    report = syncer.sync()
    assert not report.conflicts and not list(folder.rglob("*.conflict"))
    now_edited, now_rated = engram.get(edited.id), engram.get(rated.id)
    assert (now_edited.content, now_edited.importance) == ("User prefers Python 3.13", 0.9)
    assert (now_rated.content, now_rated.importance) == ("User likes green tea", 0.2)
    text = _read(folder, PREFS)
    assert "User prefers Python 3.13" in text and "importance: 0.9" in text
    assert "User likes green tea" in text and "importance: 0.2" in text
    assert not syncer.sync().changed


def test_a_hand_edit_survives_the_recalls_that_strengthen_the_memory(engram: Engram, syncer: FileSync,
                                                                      folder: Path) -> None:
    """What the rule is for: an agent keeps recalling a memory (each recall strengthens it) while a
    person edits it in its file, with no watcher to sync the edit at once."""
    memory = engram.remember("User prefers Python for scripts", tags="preferences").memory
    _edit(folder, PREFS, "User prefers Python for scripts (", "User prefers Python 3.13 for scripts (")
    for _ in range(3):
        assert engram.recall("python scripts")[0].memory.id == memory.id
    strengthened = engram.get(memory.id).importance
    assert strengthened > memory.importance  # the database side changed: its importance
    report = syncer.sync()
    assert not report.conflicts
    assert (engram.get(memory.id).content, engram.get(memory.id).importance) == (
        "User prefers Python 3.13 for scripts", strengthened)


def test_importance_changed_on_both_sides_is_a_conflict(engram: Engram, syncer: FileSync, folder: Path) -> None:
    memory = engram.remember("User prefers Python", tags="preferences", importance=0.6).memory
    _edit(folder, PREFS, "importance: 0.6", "importance: 0.1")
    syncer.detach()
    engram.update(memory.id, importance=0.9)
    report = syncer.sync()
    assert len(report.conflicts) == 1 and engram.get(memory.id).importance == 0.9


def test_conflict_when_the_event_arrives_before_the_watcher(engram: Engram, syncer: FileSync, folder: Path) -> None:
    """A pending hand edit of the same entry: the event's pass sees both changed."""
    memory = engram.remember("draft", tags="notes").memory
    _edit(folder, "agents/default/notes.md", "- draft (", "- draft from file (")
    engram.remember("draft from db", key=memory.key, tags="notes")
    kept = conflicts.list_conflicts(syncer.folder, syncer.fmt, max_content_chars=8000)
    assert [c.entries[0].content for c in kept] == ["draft from file"]
    assert "draft from db" in _read(folder, "agents/default/notes.md")


def test_deleted_in_file_but_changed_in_database_is_put_back(engram: Engram, syncer: FileSync, folder: Path) -> None:
    memory = engram.remember("keep me", tags="notes").memory
    (folder / "agents/default/notes.md").write_text("# Notes\n", encoding="utf-8")
    syncer.detach()
    engram.remember("keep me, changed", key=memory.key, tags="notes")
    report = syncer.sync()
    assert engram.get(memory.id).content == "keep me, changed"
    assert "keep me, changed" in _read(folder, "agents/default/notes.md")
    assert [c.kind for c in conflicts.list_conflicts(syncer.folder, syncer.fmt, max_content_chars=8000)] == [
        "deleted-in-file"]
    assert len(report.conflicts) == 1


def test_an_entry_deleted_by_hand_stays_deleted_though_a_recall_strengthened_it(
        engram: Engram, syncer: FileSync, folder: Path) -> None:
    # A recall since the last sync raised the memory's importance: the state's hash alone could
    # not tell that from an edit, and the deleted entry came back as a deleted-in-file conflict.
    gone = engram.remember("User likes green tea", tags="notes").memory
    for content in ("User likes black coffee", "User likes oat milk", "User likes rye bread"):
        engram.remember(content, tags="notes")
    syncer.detach()  # the state is read back from the folder by another syncer, as by another process
    text = _read(folder, "agents/default/notes.md")
    (folder / "agents/default/notes.md").write_text(text.replace("\n".join(entry_block(text, gone.id)) + "\n", ""),
                                                    encoding="utf-8")
    assert engram.recall("green tea")[0].memory.id == gone.id
    assert engram.get(gone.id).importance > gone.importance  # changed in the database: its importance alone
    report = FileSync(engram, folder).sync()
    assert report.conflicts == [] and report.problems == [] and report.db_forgotten == 1
    assert engram.find(gone.id) is None and not list(folder.rglob("*.conflict"))
    assert "green tea" not in _read(folder, "agents/default/notes.md")


def test_forgotten_in_database_but_edited_in_file_keeps_the_edit(engram: Engram, syncer: FileSync, folder: Path) -> None:
    memory = engram.remember("old thought", tags="notes").memory
    _edit(folder, "agents/default/notes.md", "- old thought (", "- old thought, improved (")
    syncer.detach()
    engram.forget(memory.id)
    syncer.sync()
    assert engram.find(memory.id) is None
    assert "old thought" not in _read(folder, "agents/default/notes.md")
    kept = conflicts.list_conflicts(syncer.folder, syncer.fmt, max_content_chars=8000)
    assert [(c.kind, c.entries[0].content) for c in kept] == [("deleted-in-database", "old thought, improved")]


def test_invalid_entries_are_logged_with_file_and_line_and_never_forgotten(
    engram: Engram, syncer: FileSync, folder: Path, caplog: pytest.LogCaptureFixture
) -> None:
    valid = engram.remember("valid", tags="notes").memory
    broken = engram.remember("will be broken", tags="notes").memory
    text = _read(folder, "agents/default/notes.md")
    text = text.replace("- will be broken (", "- will be broken (2026-13-45) (", 1)
    text = text.replace("<!-- id:" + broken.id, "<!-- id:" + broken.id, 1)
    text += "- unknown category\n  - category: feelings\n- fine new one\n"
    (folder / "agents/default/notes.md").write_text(text, encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="engram.files"):
        report = syncer.sync()
    lines = {p.line for p in report.problems if p.path == "agents/default/notes.md"}
    assert len(lines) == 1 or len(lines) == 2
    assert any("category" in p.message and "feelings" in p.message for p in report.problems)
    assert "agents/default/notes.md:" in caplog.text
    assert engram.find(broken.id) is not None and engram.find(valid.id) is not None  # nothing lost
    assert [m.content for m in engram.list(order="oldest")][-1] == "fine new one"  # the rest still imported
    assert "category: feelings" in _read(folder, "agents/default/notes.md")  # left for the person to fix


@pytest.mark.parametrize("damage", ["cut short", "wrapped", "id lost"])
def test_a_damaged_marker_is_an_invalid_entry_never_a_forget_and_a_new_memory(
    engram: Engram, syncer: FileSync, folder: Path, damage: str
) -> None:
    memories = {word: engram.remember(f"{word} fact", key=word, tags="notes").memory
                for word in ("alpha", "beta", "gamma", "delta", "epsilon")}
    lines = _read(folder, "agents/default/notes.md").split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("- alpha fact"))
    if damage == "cut short":
        lines[at] = lines[at].removesuffix(" -->")
    elif damage == "wrapped":  # an editor's hard wrap inside the marker, onto an indented line
        head, tail = lines[at].split(" key:", 1)
        lines[at:at + 1] = [head, "  key:" + tail]
    else:
        lines[at] = lines[at].replace("<!-- id:", "<!-- i d:")
    damaged = "\n".join(lines)
    (folder / "agents/default/notes.md").write_text(damaged, encoding="utf-8")
    for _ in range(2):
        report = syncer.sync()
        assert (report.db_created, report.db_updated, report.db_forgotten) == (0, 0, 0)
        assert [(p.path, p.line) for p in report.problems] == [("agents/default/notes.md", at + 1)]
        assert "<!--" in report.problems[0].message
        assert [m.id for m in engram.list(order="oldest")] == [m.id for m in memories.values()]
        assert _read(folder, "agents/default/notes.md") == damaged  # the person's text, until mended
    engram.remember("zeta fact", key="zeta", tags="notes")  # an unrelated write keeps the damaged text
    assert "\n".join(lines[at:at + 2]) in _read(folder, "agents/default/notes.md")


def test_malformed_yaml_file_is_left_alone(engram: Engram, folder: Path, tmp_path: Path) -> None:
    syncer = FileSync(engram, folder, format="yaml")
    syncer.attach()
    kept = engram.remember("in yaml", tags="notes").memory
    path = folder / "agents/default/notes.yaml"
    broken = path.read_text() + "  - [unclosed\n"
    path.write_text(broken, encoding="utf-8")
    report = syncer.sync()
    assert report.problems and report.problems[0].path == "agents/default/notes.yaml" and report.problems[0].line > 1
    assert engram.find(kept.id) is not None  # an unreadable file deletes nothing
    assert path.read_text() == broken


def test_operator_memory_file_is_never_read_or_written(engram: Engram, syncer: FileSync, folder: Path) -> None:
    operator = "# Operator notes\n\n- This is not a memory (2026-02-09)\n"
    for rel in ("MEMORY.md", "agents/default/MEMORY.md", "global/MEMORY.md"):
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(operator, encoding="utf-8")
    engram.remember("a memory", tags="memory")  # a tag that would name memory.md
    report = syncer.sync()
    assert report.db_created == 0 and engram.count() == 1
    for rel in ("MEMORY.md", "agents/default/MEMORY.md", "global/MEMORY.md"):
        assert (folder / rel).read_text() == operator


def test_symlink_out_of_the_folder_is_refused(engram: Engram, syncer: FileSync, folder: Path, tmp_path: Path) -> None:
    outside = tmp_path / "secret.md"
    outside.write_text("- stolen secret (2026-02-09)\n", encoding="utf-8")
    (folder / "global").mkdir(parents=True, exist_ok=True)
    (folder / "global/evil.md").symlink_to(outside)
    (folder / "agents").mkdir(exist_ok=True)
    (folder / "agents/evil").symlink_to(tmp_path)
    report = syncer.sync()
    refused = {p.path for p in report.problems}
    assert {"global/evil.md", "agents/evil"} <= refused
    assert all("symlink" in p.message for p in report.problems)
    assert engram.count(scope="global") == 0
    assert outside.read_text() == "- stolen secret (2026-02-09)\n"  # never rewritten either


def test_folder_refuses_escapes_huge_and_non_utf8_files(tmp_path: Path) -> None:
    folder = Folder(tmp_path / "m", max_file_bytes=2048)
    for bad in ("../x.md", "/etc/passwd", "global/../../x.md", ""):
        with pytest.raises(PathRefused):
            folder.resolve(bad)
    (tmp_path / "m/global").mkdir()
    (tmp_path / "m/global/latin1.md").write_bytes("- caf\xe9\n".encode("latin-1"))
    (tmp_path / "m/global/huge.md").write_text("- x\n" * 1000)
    with pytest.raises(PathRefused, match="not UTF-8"):
        folder.read_text("global/latin1.md")
    with pytest.raises(PathRefused, match="bytes"):
        folder.read_text("global/huge.md")
    (tmp_path / "m/global/link.md").symlink_to(tmp_path / "m/global/huge.md")
    with pytest.raises(PathRefused, match="symlink"):
        folder.write_text("global/link.md", "- overwritten\n")


def test_non_utf8_memory_file_is_reported_and_nothing_is_lost(engram: Engram, syncer: FileSync, folder: Path) -> None:
    memory = engram.remember("survivor", tags="notes").memory
    (folder / "agents/default/notes.md").write_bytes(b"- caf\xe9 (2026-02-09)\n")
    report = syncer.sync()
    assert any("not UTF-8" in p.message and p.path == "agents/default/notes.md" for p in report.problems)
    assert engram.find(memory.id) is not None


def test_per_type_json_files_follow_every_change(engram: Engram, folder: Path) -> None:
    syncer = FileSync(engram, folder, type_json=True)
    syncer.attach()
    memory = engram.remember("I used WebTool to fetch weather data", type="experience", importance=0.6,
                             metadata={"tool": "WebTool", "autonomous": True}).memory
    files = list((folder / "types/experience").glob(f"*_{memory.id}.json"))
    assert len(files) == 1
    import json
    import re

    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2}_" + memory.id + r"\.json", files[0].name)
    data = json.loads(files[0].read_text())
    assert {k: data[k] for k in ("id", "type", "content", "importance", "context")} == {
        "id": memory.id, "type": "experience", "content": "I used WebTool to fetch weather data",
        "importance": 0.6, "context": {"tool": "WebTool", "autonomous": True}}
    assert data["created_at"].endswith("+00:00")
    engram.remember("I decided to learn Python", key=memory.key, type="decision")
    assert not list((folder / "types/experience").glob("*.json"))
    assert len(list((folder / "types/decision").glob(f"*_{memory.id}.json"))) == 1
    engram.forget(memory.id)
    assert not list((folder / "types").rglob("*.json"))


def test_a_session_id_in_an_entry_is_metadata_the_folder_is_the_scope(tmp_path: Path) -> None:
    # ClawCode's YAML carries context.session_id; engram's session is the folder (docs/files.md).
    folder = tmp_path / "memory"
    item = "memories:\n  - content: {text}\n    context:\n      session_id: sess_123\n"
    (folder / "sessions" / "alice" / "sess_123").mkdir(parents=True)
    (folder / "sessions" / "alice" / "sess_123" / "notes.yaml").write_text(item.format(text="Deploys happen on Tuesdays"))
    (folder / "agents" / "alice").mkdir(parents=True)
    (folder / "agents" / "alice" / "notes.yaml").write_text(item.format(text="Deploys need a review first"))
    with Engram.from_settings(home=tmp_path, files={"enabled": False}) as engram:
        FileSync(engram, folder, format="yaml").sync()
        _session_filter_reads_the_folder(engram.for_agent("alice", "sess_123"))


def _session_filter_reads_the_folder(session: Engram) -> None:
    # The session filter (MCP's filters.session_id) reads the session's scope: the entry of its folder.
    found = session.recall("deploys", scope="session").hits
    assert [h.memory.content for h in found] == ["Deploys happen on Tuesdays"]
    # The other is the agent's, found by its metadata as every other context key is.
    by_meta = session.recall("deploys", filters=Filters(where={"session_id": "sess_123"}), scope="agent").hits
    assert [(h.memory.content, str(h.memory.scope)) for h in by_meta] == [("Deploys need a review first", "agent:alice")]


def test_per_type_json_files_follow_hand_edits_in_the_same_sync(engram: Engram, folder: Path) -> None:
    # docs/files.md: files.type_json keeps one JSON file per memory. A bullet edited, added or deleted
    # by hand reached its JSON file only at the next sync: the pass wrote them from the database as
    # it read it before taking in the files' edits.
    import json

    syncer = FileSync(engram, folder, type_json=True)
    syncer.attach()
    kept = engram.remember("User prefers Python for scripting", tags=["preferences"]).memory
    gone = engram.remember("Old fact to delete", tags=["preferences"]).memory
    rel = "agents/default/preferences.md"
    _edit(folder, rel, "User prefers Python", "User prefers Rust")
    text = _read(folder, rel)
    start = text.index("- Old fact to delete")
    end = text.find("\n- ", start + 1)
    (folder / rel).write_text(text[:start] + (text[end + 1:] if end != -1 else "") + "- Likes dark mode\n")
    report = syncer.sync()
    assert (report.db_created, report.db_updated, report.db_forgotten) == (1, 1, 1), report
    by_id = {json.loads(p.read_text())["id"]: json.loads(p.read_text()) for p in (folder / "types").rglob("*.json")}
    added = engram.get_by_key("likes-dark-mode")
    assert set(by_id) == {kept.id, added.id}
    assert by_id[kept.id]["content"] == "User prefers Rust for scripting"
    assert by_id[added.id]["content"] == "Likes dark mode" and gone.id not in by_id


def test_per_type_json_files_edited_or_added_by_hand_are_said_not_read(engram: Engram, folder: Path) -> None:
    # docs/files.md: the per-type JSON files are write-only copies (as the PHP entity's own). An
    # edited copy or a file dropped in gave "0 created, 0 updated" and was replaced or removed
    # unsaid; the pass now says so in one line, and leaves a file engram never wrote in place.
    import json

    syncer = FileSync(engram, folder, type_json=True)
    syncer.attach()
    memory = engram.remember("The sky is blue", type="learned").memory
    engram.recall("sky")  # strengthening changes importance, unwritten: not a hand edit
    assert not [p for p in syncer.sync().problems if p.path == "types/"]
    copy = next((folder / "types/learned").glob(f"*_{memory.id}.json"))
    copy.write_text(copy.read_text().replace("The sky is blue", "The sky is green"))
    dropped = folder / "types/learned/2026-01-01_00-00-00_php1.json"
    dropped.write_text(json.dumps({"id": "php1", "type": "learned", "content": "Cats purr", "importance": 0.5}))
    report = syncer.sync()
    said = [p for p in report.problems if p.path == "types/"]
    assert len(said) == 1 and said[0].message.startswith("2 file(s) changed or added by hand are not read back")
    assert (report.db_created, report.db_updated) == (0, 0) and engram.get(memory.id).content == "The sky is blue"
    assert json.loads(copy.read_text())["content"] == "The sky is blue"  # rewritten from the database
    assert dropped.exists()  # never engram's: left in place, said again at each pass
    assert [p.message[:9] for p in syncer.sync().problems if p.path == "types/"] == ["1 file(s)"]
