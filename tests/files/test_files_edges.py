"""The memory folder at its edges: whatever content holds survives the files byte for byte, and a
sync never loses memories silently (issue 15: markers in content, emptied files, oversized files)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.engine import Engram
from engram.files.sync import FileSync

HOSTILE_CONTENT = [
    "pasted: <!-- id:x1 key:zz --> end",
    "<!-- id:abc -->",
    "ends with a date (2026-01-01)",
    "ends with a marker <!-- id:q key:k created:1.0 -->",
    "literal escapes &#60;!-- and &#38; and &#27; stay as typed",
    "<\\!-- already escaped --> and <!-- twice <!--",
    "line one\n- tags: not a field\n  - metadata: {}\n\\ backslash\n* star\n## not a heading",
    "carriage\r\nreturns\rand\ttabs",
    "terminal \x1b[31mred\x1b[0m and bell \x07 and \x7f delete",
    "# heading-like first line\n\n\nthree blank lines above",
    "unicode \u2028 line separator \u0085 next line \ufeff bom",
    "  padded at both ends  ",
    "\ttab first, newlines last\n\n",
    "\n\nnewlines first",
    "\u00a0no-break and ideographic spaces\u3000",
    "- looks like a bullet\n  ",
]


@pytest.mark.parametrize("content", HOSTILE_CONTENT)
def test_content_round_trips_through_the_memory_files(
    engram: Engram, syncer: FileSync, folder: Path, tmp_path: Path, fmt: str, content: str
) -> None:
    syncer.detach()
    live = FileSync(engram, tmp_path / "live", format=fmt)
    live.attach()
    engram.remember("neighbour before", key="c2", tags="notes")
    stored = engram.remember(content, key="c3", tags="notes").memory
    engram.remember("neighbour after", key="c4", tags="notes")

    again = live.sync()  # the file as written must read back as what the database holds
    assert again.problems == [] and not again.changed, again
    assert engram.get("c3").content == stored.content
    assert sorted(m.key for m in engram.list()) == ["c2", "c3", "c4"]
    for path in (tmp_path / "live").rglob("*.*"):
        raw = path.read_bytes()
        assert b"\x1b" not in raw and b"\x07" not in raw and b"\r" not in raw, path  # never raw in a file

    with Engram.from_settings(home=tmp_path / "fresh") as fresh:  # the folder alone restores it
        report = FileSync(fresh, tmp_path / "live", format=fmt).sync()
        assert report.problems == [] and report.db_created == 3
        assert fresh.get("c3").content == stored.content


def _backed_up_contents(home: Path) -> set[str]:
    """Every memory content held by the database backups in ``home/backups``."""
    import sqlite3

    found: set[str] = set()
    for path in sorted((home / "backups").glob("*.db")):
        with sqlite3.connect(path) as db:
            found |= {row[0] for row in db.execute("SELECT content FROM memories")}
    return found


def test_a_vanished_file_is_a_conflict_not_deletions(engram: Engram, syncer: FileSync, folder: Path) -> None:
    from engram.files import conflicts

    one = engram.remember("one", tags="doomed").memory
    engram.remember("two", tags="doomed")
    engram.remember("three", tags="kept")
    (folder / "agents/default/doomed.md").unlink()  # an editor crash, a git checkout

    report = syncer.sync()

    assert report.db_forgotten == 0 and len(report.conflicts) == 2
    assert sorted(m.content for m in engram.list()) == ["one", "three", "two"]
    restored = (folder / "agents/default/doomed.md").read_text(encoding="utf-8")
    assert "- one (" in restored and "- two (" in restored
    kept = conflicts.list_conflicts(syncer.folder, syncer.fmt, max_content_chars=8000)
    assert {c.kind for c in kept} == {"file-vanished"}
    # Taking the file side is how a person confirms the deletion, one entry at a time.
    conflicts.resolve(engram, syncer.folder, conflicts.find(kept, one.id), "file")
    assert sorted(m.content for m in engram.list()) == ["three", "two"]


def test_a_file_left_with_zero_bytes_is_taken_as_vanished_not_deletions(engram: Engram, syncer: FileSync,
                                                                         folder: Path) -> None:
    engram.remember("one", tags="doomed")
    engram.remember("two", tags="doomed")
    written = (folder / "agents/default/doomed.md").read_text(encoding="utf-8")
    (folder / "agents/default/doomed.md").write_bytes(b"")  # an editor that crashed mid-save

    report = syncer.sync()

    from engram.files import conflicts

    assert report.db_forgotten == 0 and len(report.conflicts) == 2
    kept = conflicts.list_conflicts(syncer.folder, syncer.fmt, max_content_chars=8000)
    assert {c.kind for c in kept} == {"file-vanished"}
    assert sorted(m.content for m in engram.list()) == ["one", "two"]
    restored = (folder / "agents/default/doomed.md").read_text(encoding="utf-8")
    assert "- one (" in restored and "- two (" in restored
    # Written again as a vanished file is, under its heading: it lost "# Doomed", being written
    # into the document parsed from the zero bytes.
    assert restored.startswith("# Doomed\n") and restored == written, restored


def test_emptying_a_file_backs_up_first_and_says_so(engram: Engram, syncer: FileSync, folder: Path,
                                                    tmp_path: Path) -> None:
    engram.remember("first doomed memory", tags="doomed")
    engram.remember("second doomed memory", tags="doomed")
    engram.remember("kept memory", tags="kept")
    (folder / "agents/default/doomed.md").write_text("# Doomed\n", encoding="utf-8")

    report = syncer.sync()

    assert report.db_forgotten == 2
    assert report.backup is not None and "2 memories" in report.backup
    assert {"first doomed memory", "second doomed memory"} <= _backed_up_contents(tmp_path / "home")


def test_forgetting_more_than_the_configured_share_backs_up(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Engram.from_settings(home=home) as engram:
        syncer = FileSync(engram, home / "memory", max_forget_share=0.5)
        syncer.attach()
        for i in range(6):
            engram.remember(f"note number {i}", tags="notes")
        engram.remember("another file", tags="other")
        path = home / "memory/agents/default/notes.md"

        def drop(*numbers: int) -> None:
            lines = path.read_text(encoding="utf-8").splitlines()
            path.write_text("\n".join(x for x in lines if not any(f"- note number {n} (" in x for n in numbers)) + "\n")

        drop(0)  # one of seven: an ordinary edit, no backup
        quiet = syncer.sync()
        assert quiet.db_forgotten == 1 and quiet.backup is None
        assert not list((home / "backups").glob("*.db"))
        drop(1, 2, 3, 4)  # four of six, though the file keeps one
        loud = syncer.sync()
        assert loud.db_forgotten == 4 and loud.backup is not None and "4 memories" in loud.backup
        assert {f"note number {n}" for n in (1, 2, 3, 4)} <= _backed_up_contents(home)
        syncer.detach()


def test_engram_sync_says_when_it_backed_up(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from engram.interfaces.cli.app import app

    home = tmp_path / "home"
    runner = CliRunner()
    for text in ("alpha memory", "beta memory"):
        assert runner.invoke(app, ["--home", str(home), "remember", text, "--tags", "doomed"]).exit_code == 0
    (home / "memory/agents/default/doomed.md").write_text("# Doomed\n", encoding="utf-8")
    result = runner.invoke(app, ["--home", str(home), "sync"])
    assert result.exit_code == 0, result.output
    assert "2 forgotten" in result.output and "backed up the database before forgetting 2 memories" in result.output
    assert {"alpha memory", "beta memory"} <= _backed_up_contents(home)


def test_files_are_split_before_the_size_limit_and_read_back(engram: Engram, syncer: FileSync, tmp_path: Path,
                                                             fmt: str) -> None:
    syncer.detach()
    root = tmp_path / "small"
    small = FileSync(engram, root, format=fmt, max_file_bytes=2048)
    small.attach()
    for i in range(30):
        engram.remember(f"memory {i:02d} " + "padding words " * 11 + "padding words", tags="notes")
    files = sorted(p for p in (root / "agents/default").iterdir() if not p.name.startswith("."))
    assert len(files) > 1 and all(p.stat().st_size <= 2048 for p in files), [(p.name, p.stat().st_size) for p in files]
    again = small.sync()
    assert again.problems == [] and not again.changed
    last = next(p for p in files if "memory 29 " in p.read_text(encoding="utf-8"))
    last.write_text(last.read_text(encoding="utf-8").replace("memory 29 ", "memory 29 edited "), encoding="utf-8")
    assert small.sync().db_updated == 1
    assert any(m.content.startswith("memory 29 edited") for m in engram.list(limit=100))
    with Engram.from_settings(home=tmp_path / "fresh") as fresh:
        report = FileSync(fresh, root, format=fmt, max_file_bytes=2048).sync()
        assert report.problems == [] and report.db_created == 30


def test_an_entry_too_large_for_any_file_is_reported_and_never_forgotten(engram: Engram, syncer: FileSync,
                                                                         tmp_path: Path) -> None:
    syncer.detach()
    root = tmp_path / "small"
    small = FileSync(engram, root, max_file_bytes=1024)
    small.attach()
    engram.remember("a small memory", tags="notes")
    big = engram.remember("x" * 3000, tags="notes").memory
    report = small.sync()
    assert [p for p in report.problems if big.id in p.message and "larger than files.max_file_bytes" in p.message]
    assert all(p.stat().st_size <= 1024 for p in root.rglob("*.md"))
    for _ in range(2):  # its absence from the files is never taken as a deletion
        small.sync()
    assert engram.get(big.id).content == "x" * 3000


def test_export_splits_files_at_the_limit_and_imports_back(engram: Engram, tmp_path: Path) -> None:
    from engram.files.export import export_folder, import_folder

    for i in range(20):
        engram.remember(f"exported memory {i:02d} " + "filler text " * 14 + "filler text", tags="bulk")
    export_folder(engram.store.iter_all(), tmp_path / "out", format="markdown", max_file_bytes=2048)
    written = list((tmp_path / "out").rglob("*.md"))
    assert len(written) > 1 and all(p.stat().st_size <= 2048 for p in written)
    with Engram.from_settings(home=tmp_path / "fresh") as fresh:
        summary = import_folder(fresh, tmp_path / "out", max_file_bytes=2048)
        assert summary.problems == [] and summary.imported == 20


def test_files_at_the_wrong_level_are_reported(engram: Engram, syncer: FileSync, folder: Path) -> None:
    engram.remember("placed right", tags="notes")
    stray = {
        "agents/default/sub/deeper.md": "- lost in a sub-folder\n",
        "notes.md": "- at the top of the folder\n",
        "agents/wrong-level.md": "- between agents\n",
        "global/facts.yaml": "memories:\n  - content: another format\n",
    }
    for rel, text in stray.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text, encoding="utf-8")
    # Read by nothing either: the operator's notes are ENGRAM_HOME/MEMORY.md, above the folder.
    (folder / "MEMORY.md").write_text("# operator notes\n", encoding="utf-8")
    report = syncer.sync()
    reported = {p.path for p in report.problems}
    assert reported == set(stray) | {"MEMORY.md"}, report.problems
    assert all("not read" in p.message for p in report.problems)
    assert [m.content for m in engram.list()] == ["placed right"]


def test_a_file_size_is_its_utf8_bytes_whatever_it_holds() -> None:
    # split.size counts an ASCII text without encoding it; any other text is counted encoded.
    from engram.files import split
    from engram.files.entry import build_entry
    from engram.files.markdown import parse

    for content in ["plain ascii words", "ünïcödé ✓ 漢字 🎉", "mixed: a\u00e9\u4e2d\U0001f600 end"]:
        doc = parse("# Memory\n", "MEMORY.md", max_content_chars=1000)
        doc.add(build_entry({"content": content, "id": "x1"}, max_content_chars=1000))
        assert split.size(doc) == len(doc.text().encode("utf-8"))
        assert (split.size(doc) == len(doc.text())) == content.isascii()


def test_a_byte_order_mark_opening_a_file_is_not_text(engram: Engram, folder: Path, fmt: str) -> None:
    # Windows editors start a UTF-8 file with one; it is read past, and dropped when engram
    # rewrites the file (engram writes none).
    syncer = FileSync(engram, folder, format=fmt)
    syncer.attach()
    bom = b"\xef\xbb\xbf"
    try:
        kept = engram.remember("written by engram", tags="notes").memory
        notes = folder / f"agents/default/notes.{'md' if fmt == 'markdown' else 'yaml'}"
        notes.write_bytes(bom + notes.read_bytes())
        if fmt == "markdown":
            (folder / "agents/default/hand.md").write_bytes(bom + b"- hand added with bom\r\n")
        else:
            (folder / "agents/default/hand.yaml").write_bytes(bom + b"memories:\r\n- content: hand added with bom\r\n")
        for _ in range(2):  # no warning on any later sync either
            report = syncer.sync()
            assert report.problems == []
        assert sorted(m.content for m in engram.list()) == ["hand added with bom", "written by engram"]
        assert notes.read_bytes().startswith(bom)  # a file engram had no reason to change stays as it was
        engram.remember("written by engram, changed", key=kept.key, tags="notes")
        assert not notes.read_bytes().startswith(bom) and "changed" in notes.read_text(encoding="utf-8")
        assert syncer.sync().problems == []
    finally:
        syncer.detach()


def test_a_memory_md_in_a_scope_folder_is_reported_for_what_it_is(engram: Engram, syncer: FileSync,
                                                                  folder: Path) -> None:
    # A curated MEMORY.md (OpenClaw's, Clawless's) put in an agent's folder sits at the right level:
    # the report said it was "at another level or in another folder", which sent people looking.
    engram.remember("placed right", tags="notes")
    (folder / "agents/default/MEMORY.md").write_text("- curated by hand\n", encoding="utf-8")
    [problem] = syncer.sync().problems
    assert problem.path == "agents/default/MEMORY.md"
    assert "another level" not in problem.message
    assert "MEMORY.md" in problem.message and "rename" in problem.message
    assert [m.content for m in engram.list()] == ["placed right"]


def test_resolving_a_conflict_with_memory_off_keeps_the_file_version(tmp_path: Path) -> None:
    """``conflicts.resolve`` on an engine whose memory is off (``backend = "disabled"``) applied the
    file version to a store that keeps nothing and deleted the .conflict file: the version was lost.
    It does nothing now and says why."""
    from engram.files import conflicts
    from engram.files.paths import Folder

    home = tmp_path / "home"
    with Engram.from_settings(home=home, files={"enabled": False}) as on:
        sync = FileSync(on, home / "memory")
        sync.attach()
        on.remember("original", key="k", tags="notes")
        notes = home / "memory/agents/default/notes.md"
        notes.write_text(notes.read_text(encoding="utf-8").replace("- original (", "- file side ("), encoding="utf-8")
        on.remember("database side", key="k", tags="notes")
        sync.detach()
        [kept] = conflicts.list_conflicts(sync.folder, sync.fmt, max_content_chars=8000)
    with Engram.from_settings(home=home, backend="disabled", files={"enabled": False}) as off:
        for take in ("db", "file", "merge"):
            done = conflicts.resolve(off, Folder(home / "memory"), kept, take, "merged")  # type: ignore[arg-type]
            assert done.startswith("nothing resolved: memory is off"), done
    assert (home / "memory" / kept.path).is_file()
    assert [c.entries[0].content for c in conflicts.list_conflicts(sync.folder, sync.fmt, max_content_chars=8000)] == [
        "file side"]
