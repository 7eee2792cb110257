"""A memory file keeps its own line endings: one with CRLF (written on Windows, or converted by
its owner) stays CRLF when engram rewrites it or appends to it, and a file engram creates is LF.
The sync state follows what engram wrote, so the next sync sees no change, and an edit made
afterwards is read without a carriage return gained or lost."""

from __future__ import annotations

import json
from pathlib import Path

from engram.engine import Engram
from engram.files.sync import FileSync
from tests.files.conftest import run_cli


def _crlf(path: Path) -> None:
    """The file converted to CRLF line endings, as an editor set to Windows endings saves it."""
    path.write_bytes(path.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))


def _all_crlf(data: bytes) -> bool:
    return data.count(b"\n") > 0 and data.count(b"\n") == data.count(b"\r\n")


def test_cli_remember_keeps_a_crlf_file_crlf_and_sync_sees_no_change(tmp_path: Path) -> None:
    home = tmp_path / "home"
    run_cli(home, "remember", "first note", "--tags", "notes")
    notes = home / "memory/agents/default/notes.md"
    assert b"\r" not in notes.read_bytes()  # a file engram creates is LF
    _crlf(notes)
    before = notes.read_bytes()
    run_cli(home, "remember", "second note", "--tags", "notes")  # the file was edited: the full pass rewrites it
    run_cli(home, "remember", "third note", "--tags", "notes")  # as the last pass left it: appended to
    after = notes.read_bytes()
    assert after.startswith(before) and _all_crlf(after), after
    assert b"- second note (" in after and b"- third note (" in after
    synced = json.loads(run_cli(home, "--json", "sync").stdout)
    assert synced["to_database"] == {"created": 0, "updated": 0, "forgotten": 0, "moved": 0}
    assert synced["to_files"]["files_written"] == [] and synced["conflicts"] == [] and synced["problems"] == []
    assert notes.read_bytes() == after
    # An edit made afterwards, in the file's own line endings, is read without a carriage return.
    notes.write_bytes(after.replace(b"- second note (", b"- second note, edited (")
                      .replace(b"- first note (", b"- first\rnote ("))
    synced = json.loads(run_cli(home, "--json", "sync").stdout)
    assert synced["to_database"]["updated"] == 2 and synced["conflicts"] == [] and synced["problems"] == []
    listed = {m["content"] for m in json.loads(run_cli(home, "--json", "list").stdout)}
    assert listed == {"first\rnote", "second note, edited", "third note"}  # the \r typed inside a line is kept
    assert _all_crlf(notes.read_bytes())


def test_every_write_into_a_crlf_file_keeps_it_crlf(engram: Engram, folder: Path, fmt: str) -> None:
    syncer = FileSync(engram, folder, format=fmt)
    syncer.attach()
    try:
        kept = engram.remember("a line\nand its continuation", tags="notes").memory
        notes = folder / f"agents/default/notes.{'md' if fmt == 'markdown' else 'yaml'}"
        _crlf(notes)
        assert syncer.sync().changed is False
        engram.remember("added after the conversion", tags="notes")  # appended (the quick pass)
        engram.remember("a line\nand its continuation, changed", key=kept.key, tags="notes")  # rewritten
        engram.remember("another\nwith two lines", tags="notes")
        data = notes.read_bytes()
        assert _all_crlf(data), data
        report = syncer.sync()
        assert not report.changed and report.problems == []
        assert notes.read_bytes() == data
        contents = {m.content for m in engram.list()}
        assert contents == {"a line\nand its continuation, changed", "added after the conversion",
                            "another\nwith two lines"}
        # Edited by hand in the file's own line endings: the content holds line feeds only.
        text = data.decode("utf-8")
        notes.write_bytes(text.replace("with two lines", "with two lines, edited").encode("utf-8"))
        report = syncer.sync()
        assert report.db_updated == 1 and report.conflicts == [] and report.problems == []
        assert {m.content for m in engram.list()} == contents - {"another\nwith two lines"} | {
            "another\nwith two lines, edited"}
        assert _all_crlf(notes.read_bytes())
        # A new file engram creates is LF, whatever its neighbours use.
        engram.remember("somewhere else", tags="elsewhere")
        assert b"\r" not in notes.with_name(notes.name.replace("notes", "elsewhere")).read_bytes()
    finally:
        syncer.detach()
