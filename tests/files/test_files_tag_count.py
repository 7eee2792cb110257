"""A memory file entry edited by hand to hold more than ``MAX_TAGS`` (100) tags is an invalid entry,
as any field the engine refuses: the sync reports it with its file, line and field, the stored
memory stays as it was (the entry's other edits are not taken either, and it is never read as
deleted), and the file keeps the person's text until it is mended; mended, it syncs. Markdown and
YAML, a real SQLite file and a real folder."""

from __future__ import annotations

from pathlib import Path

from engram.engine import Engram
from engram.files.sync import FileSync

TOO_MANY = [f"t{i}" for i in range(101)]
EDITS = {  # (the entry as the sync wrote it, the same entry edited by hand: new text, 102 tags)
    "markdown": ("- User prefers Python (", "  - tags: preferences\n",
                 "- User prefers Python 3.13 (", f"  - tags: preferences, {', '.join(TOO_MANY)}\n"),
    "yaml": ("  content: User prefers Python\n", "  tags:\n  - preferences\n",
             "  content: User prefers Python 3.13\n", "  tags:\n" + "".join(f"  - {t}\n" for t in ["preferences", *TOO_MANY])),
}


def test_an_entry_edited_to_too_many_tags_is_reported_and_the_memory_kept(engram: Engram, folder: Path, fmt: str) -> None:
    syncer = FileSync(engram, folder, format=fmt)
    syncer.attach()
    kept = engram.remember("User prefers Python", key="lang", tags="preferences").memory
    other = engram.remember("User likes tea", key="tea", tags="preferences").memory
    path = folder / "agents/default" / f"preferences.{'md' if fmt == 'markdown' else 'yaml'}"
    text = path.read_text(encoding="utf-8")
    content, tags, new_content, new_tags = EDITS[fmt]
    assert text.count(content) == 1 and tags in text, text
    edited = text.replace(content, new_content, 1).replace(tags, new_tags, 1)
    path.write_text(edited, encoding="utf-8")
    line = next(i for i, row in enumerate(edited.splitlines(), 1) if kept.id in row)  # (the entry's first)
    for _ in range(2):  # (reported again until mended, never read as a deletion)
        report = syncer.sync()
        assert (report.db_created, report.db_updated, report.db_forgotten) == (0, 0, 0), report
        [problem] = report.problems
        assert problem.path == f"agents/default/{path.name}" and problem.line == line, (problem, line)
        assert "tags: has more than 100 different tags (102 given)" in problem.message, problem.message
        assert "at most 100 different tags" in problem.message, problem.message
        assert engram.get(kept.id) == kept and engram.get(other.id) == other and engram.versions(kept.id) == []
        assert path.read_text(encoding="utf-8") == edited
    path.write_text(edited.replace(new_tags, tags, 1), encoding="utf-8")  # mended: the text edit goes through
    report = syncer.sync()
    assert (report.db_updated, report.problems) == (1, []), report
    assert (engram.get(kept.id).content, engram.get(kept.id).tags) == ("User prefers Python 3.13", ("preferences",))
