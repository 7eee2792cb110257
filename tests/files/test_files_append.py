"""A store whose entry goes at the end of its file adds just that entry to the file (the quick
pass's append), leaving it byte for byte as a whole rewrite would, and a crash part-way through
that append never leaves a partial entry to be read as one written by hand."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from engram.engine import Engram
from engram.files import state as sync_state
from engram.files.sync import FileSync


def _memory_files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.suffix in (".md", ".yaml") and not p.name.startswith(".")}


def test_stores_append_their_entry_and_leave_the_file_as_a_whole_rewrite_would(
    engram: Engram, folder: Path, tmp_path: Path, fmt: str
) -> None:
    syncer = FileSync(engram, folder, format=fmt)
    syncer.attach()
    try:
        engram.remember("the first memory", tags="notes")  # makes the file: a whole write
        target = next(p for p in folder.rglob("notes.*"))
        inode = target.stat().st_ino
        contents = ["plain words", "two\nlines, - and a dash", "Zoë's café 𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "  spaced  ", "<!-- not a marker"]
        for i, content in enumerate(contents * 4):
            engram.remember(f"{content} {i}", tags="notes", metadata={"n": i}, importance=0.25 * (i % 4))
        assert target.stat().st_ino == inode, "a store rewrote its file whole instead of adding its entry"
        assert engram.count() == 21
    finally:
        syncer.detach()
    # What a whole rewrite writes: a full pass into an empty folder renders every file afresh.
    fresh = tmp_path / "fresh"
    FileSync(engram, fresh, format=fmt).sync()
    assert _memory_files(folder) == _memory_files(fresh)
    report = FileSync(engram, folder, format=fmt).sync()
    assert not report.changed and not report.problems, report


# A child process stores memories with the folder attached, then dies part-way through the append of
# the last one (``cut``: the file's write; ``unrecorded``: after the append, before the sync state
# records it), as a crash or a kill would leave things: no ``finally`` or ``except`` runs.
_CRASHING_CHILD = textwrap.dedent("""
    import os, sys
    from engram.engine import Engram
    from engram.files import paths, state
    from engram.files.sync import FileSync

    home, fmt, crash = sys.argv[1], sys.argv[2], sys.argv[3]
    engram = Engram.from_settings(home=home, files={"enabled": False})
    FileSync(engram, paths.Path(home) / "memory", format=fmt).attach()
    for i in range(5):
        engram.remember(f"stored before the crash {i}", tags="notes")
    write_all = paths._write_all
    if crash == "cut":
        def cut(fd, text):
            if text.startswith("{"):  # the journal's lines are written whole
                return write_all(fd, text)
            os.write(fd, text.encode("utf-8")[:15])  # inside the bullet's first line, before its marker
            os._exit(9)
        paths._write_all = cut
    else:
        state.append = lambda *args, **kwargs: os._exit(9)
    engram.remember("the memory whose append the crash interrupted", tags="notes")
""")


@pytest.mark.parametrize("crash", ["cut", "unrecorded"])
def test_a_crash_during_an_append_leaves_no_partial_entry_behind(tmp_path: Path, fmt: str, crash: str) -> None:
    home = tmp_path / "home"
    child = subprocess.run([sys.executable, "-c", _CRASHING_CHILD, str(home), fmt, crash],
                           capture_output=True, text=True, timeout=120)
    assert child.returncode == 9, child.stderr[-2000:]
    folder = home / "memory"
    journal = (folder / sync_state.JOURNAL_FILE).read_text(encoding="ascii").splitlines()
    assert journal[-1].startswith('{"a":'), "the append was not announced before it was made"
    target = next(p for p in folder.rglob("notes.*"))
    if crash == "cut":
        assert not target.read_bytes().endswith(b"\n"), "the crash did not cut the append short"

    with Engram.from_settings(home=home, files={"enabled": False}) as engram:
        report = FileSync(engram, folder, format=fmt).sync()
        assert not report.db_created and not report.db_forgotten and not report.problems, report
        assert not report.conflicts, report
        contents = sorted(m.content for m in engram.list(limit=100))
        assert contents == sorted([*(f"stored before the crash {i}" for i in range(5)),
                                   "the memory whose append the crash interrupted"])
        text = target.read_text(encoding="utf-8")
        assert text.count("the memory whose append the crash interrupted") == 1
        fresh = tmp_path / "fresh"
        FileSync(engram, fresh, format=fmt).sync()
        assert _memory_files(folder) == _memory_files(fresh)
        assert not FileSync(engram, folder, format=fmt).sync().changed
