"""``engram export --format basic-memory`` then ``engram import`` gives every memory back byte for
byte, into a fresh SQLite home: its content (whitespace at either end, ``\\r\\n`` and a lone ``\\r``,
lines that read as basic-memory's observations, relations or headings, a fence, front matter),
its tags and its metadata (beside ``metadata["basic_memory"]``, where the import records the note
it came from). Content that the note's prose gives back as it is stays prose; the rest is written
as an ```` ```engram ```` fenced block, which basic-memory shows as it is and reads nothing from."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given

from engram.config import load_settings
from engram.engine import Engram
from engram.errors import SnapshotError
from engram.importers.base import split_provenance
from tests.fuzz_inputs import FUZZ, contents, metadata, tags
from tests.importers.test_import_cli import FIXTURES, as_json, run

AWKWARD = {
    "spaces-at-both-ends": "  leading and trailing  ",
    "newlines-at-both-ends": "\n\nfirst line\nlast line\n\n",
    "crlf": "Windows line\r\nand another\r\n",
    "lone-cr": "old Mac\rline endings\r",
    "tabs": "\tindented\tand trailing tab\t",
    "task-list": "- [x] done\n- [ ] to do",
    "observation-lines": "Shopping list\n- [note] buy milk #errand (today)\n* [idea] a shed",
    "sections-inside": "## Observations\n- [fact] not one\n\n## Relations\n- uses [[Other]]",
    "hashtags": "#hashtag words #and more #tags",
    "front-matter-lookalike": "---\ntitle: not mine\ntags: [x]\n---\nbody",
    "blank-line-runs": "one\n\n\n\ntwo",
    "title-heading": "# title-heading\nthe title repeated as a heading",
    "fences": "````engram\nnot a block of mine\n````\n```",
    "unclosed-engram-fence": "```engram\nnever closed",
    "unicode": "zero\u200bwidth \u202eRTL\u200f mark, bom\ufeff, emoji \U0001f9e0, e\u0301",
    "line-separators": "a\u2028b\u2029c\x85d\x0ce\x0bf",
    "zero-width-only": "\u200b",
    "one-character": "x",
    "ordinary": "The user prefers Python for scripting.",
}
TAGS = ["plain", "#hash", 'quote"d', "back\\slash", "ü\u2028line", "bom\ufeff", "nonchar\ufffe"]
METADATA = {"source": "chat", "nested": {"list": [1, 2.5e300, -0.5, None, True], "text": "a'b\"c\r\n\u2028"},
            "basic memory": "a key like the provenance's", "relations": ["mine, not the note's"]}


def _engram(home: Path) -> Engram:
    return Engram.from_settings(load_settings(home=home, embeddings={"provider": "none"}))


def _round_trip(tmp: Path, memories: dict[str, tuple[str, list[str], dict[str, Any]]]) -> dict[str, Any]:
    """Each ``key: (content, tags, metadata)`` remembered in a home, every one after the first
    linked to the first, exported to a folder of notes and imported into a fresh home with the CLI;
    returns the imported memories by key."""
    with _engram(tmp / "a") as source:
        for key, (content, tag_list, meta) in memories.items():
            source.remember(content, key=key, tags=tag_list, metadata=meta)
        first, *others = memories
        for key in others:
            source.link(a_key=key, b_key=first)
    run(tmp / "a", "export", str(tmp / "vault"), "--format", "basic-memory")
    summary = as_json(tmp / "b", "import", str(tmp / "vault"), "--from", "basic-memory")
    assert (summary["imported"], summary["warnings"]) == (len(memories), []), summary
    with _engram(tmp / "b") as copy:
        back = {m.key: m for m in copy.list()}
        assert {key for key, m in back.items() if back[first].id in m.links} == set(others)
        return back


def _same(original: tuple[str, list[str], dict[str, Any]], back: Any) -> None:
    content, tag_list, meta = original
    own, provenance = split_provenance(back.metadata, "basic_memory")
    assert (back.content, list(back.tags), own) == (content, tag_list, meta)
    assert provenance["file"] == f"{back.key}.md"


def test_awkward_contents_tags_and_metadata_come_back_byte_for_byte(tmp_path: Path) -> None:
    memories = {key: (content, TAGS, METADATA) for key, content in AWKWARD.items()}
    back = _round_trip(tmp_path, memories)
    assert set(back) == set(memories)  # no observation split off as a memory of its own
    for key, original in memories.items():
        _same(original, back[key])


def test_a_key_no_file_name_can_hold_comes_back_as_it_was(tmp_path: Path) -> None:
    # "a b", "a/b" and "A-B" make one file name ("a-b.md" on a case-insensitive file system): none is lost.
    keys = {"Deploy time / prod?": "deploys run on Fridays", "café:menü": "the menu changed", "plain-key": "as before",
            "a b": "one", "a/b": "two", "A-B": "three"}
    with _engram(tmp_path / "a") as source:
        for key, content in keys.items():
            source.remember(content, key=key)
    run(tmp_path / "a", "export", str(tmp_path / "vault"), "--format", "basic-memory")
    assert "engram_key" not in (tmp_path / "vault" / "plain-key.md").read_text(encoding="utf-8")
    summary = as_json(tmp_path / "b", "import", str(tmp_path / "vault"), "--from", "basic-memory")
    assert summary["imported"] == len(keys), summary
    with _engram(tmp_path / "b") as copy:
        assert {m.key: m.content for m in copy.list()} == keys


def test_plain_content_stays_prose_and_awkward_content_is_one_fenced_block(tmp_path: Path) -> None:
    _round_trip(tmp_path, {"ordinary": (AWKWARD["ordinary"], [], {}), "task-list": (AWKWARD["task-list"], [], {}),
                           "fences": (AWKWARD["fences"], [], {}), "observation-lines": (AWKWARD["observation-lines"], [], {})})
    vault = tmp_path / "vault"

    def body(key: str) -> str:  # what follows the front matter, up to the relations (links to the first)
        return (vault / f"{key}.md").read_text(encoding="utf-8").split("---\n", 2)[2].split("\n## Relations\n")[0]

    # basic-memory shows prose as markdown, its task list as a task list; what it would misread, fenced.
    assert body("ordinary") == "\nThe user prefers Python for scripting.\n"
    assert body("task-list") == "\n- [x] done\n- [ ] to do\n"
    assert body("observation-lines") == "\n```engram\nShopping list\n- [note] buy milk #errand (today)\n* [idea] a shed\n```\n"
    # A fence longer than any run of backticks in the content: nothing in it closes the block.
    assert body("fences") == f"\n`````engram\n{AWKWARD['fences']}\n`````\n"


def test_text_added_outside_the_block_is_kept_after_it(tmp_path: Path) -> None:
    # A basic-memory user who adds a line and an observation below the block loses neither.
    _round_trip(tmp_path / "first", {"edited": ("- [note] not an observation", [], {})})
    vault = tmp_path / "first" / "vault"
    note = vault / "edited.md"
    note.write_text(note.read_text(encoding="utf-8") + "\nAdded in basic-memory.\n\n- [fact] an observation\n",
                    encoding="utf-8")
    as_json(tmp_path / "c", "import", str(vault))
    with _engram(tmp_path / "c") as copy:
        by_type = {m.type: m.content for m in copy.list()}
    assert by_type == {"learned": "- [note] not an observation\n\nAdded in basic-memory.", "fact": "an observation"}


def test_an_unclosed_engram_block_is_named(tmp_path: Path) -> None:
    _round_trip(tmp_path / "first", {"broken": ("\tx\t", [], {})})
    note = tmp_path / "first" / "vault" / "broken.md"
    note.write_text(note.read_text(encoding="utf-8").replace("\n```\n", "\n"), encoding="utf-8")
    with pytest.raises(SnapshotError, match=r"broken\.md line 13: the ```engram block has no closing fence"):
        run(tmp_path / "c", "import", str(note.parent))
    assert as_json(tmp_path / "c", "count") == {"count": 0}


@FUZZ
@given(content=contents, tag_list=tags, meta=metadata)
def test_any_content_tags_and_metadata_round_trip(content: str, tag_list: list[str], meta: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        with _engram(Path(tmp) / "stored") as engram:  # what engram keeps of them (tags normalised)
            stored = engram.get(engram.remember(content, key="fuzzed", tags=tag_list, metadata=meta).memory.id)
        back = _round_trip(Path(tmp), {"fuzzed": (stored.content, list(stored.tags), stored.metadata)})
        _same((content, list(stored.tags), stored.metadata), back["fuzzed"])


def test_notes_from_basic_memory_come_back_through_engram_as_engram_read_them(tmp_path: Path) -> None:
    # basic-memory -> engram -> basic-memory -> engram: every memory's content, tags and metadata
    # as the first import made them, but where it came from (the note it was last read from).
    first = tmp_path / "first"
    as_json(first, "import", str(FIXTURES / "basic-memory"))
    run(first, "export", str(tmp_path / "vault"), "--format", "basic-memory")
    summary = as_json(tmp_path / "second", "import", str(tmp_path / "vault"))
    assert summary["warnings"] == [], summary
    with _engram(first) as one, _engram(tmp_path / "second") as two:
        before = {m.key: m for m in one.list()}
        after = {m.key: m for m in two.list()}
    assert set(after) == set(before) and len(before) > 3
    for key, memory in before.items():
        own = split_provenance(memory.metadata, "basic_memory")[0]
        assert (after[key].content, after[key].tags, split_provenance(after[key].metadata, "basic_memory")[0]) == (
            memory.content, memory.tags, own), key


def test_a_malformed_engram_metadata_is_named(tmp_path: Path) -> None:
    _round_trip(tmp_path / "first", {"meta": ("x", [], {"a": 1})})
    note = tmp_path / "first" / "vault" / "meta.md"
    note.write_text(note.read_text(encoding="utf-8").replace('{"a": 1}', '{"a": 1'), encoding="utf-8")
    with pytest.raises(SnapshotError, match=r"meta\.md front matter engram_metadata: malformed JSON"):
        run(tmp_path / "c", "import", str(note.parent))



@pytest.mark.parametrize(("written", "named"), [
    ('engram_id: "two words"', 'meta.md front matter engram_id: "two words" is not an id'),
    ("engram_key: [1]", "meta.md front matter engram_key: got a list"),
    ("category: feelings", 'meta.md front matter category: unknown category "feelings"'),
    ("importance: high", 'meta.md front matter importance: got "high"'),
])
def test_a_malformed_engram_field_is_named_by_the_notes_own_name(tmp_path: Path, written: str, named: str) -> None:
    # A note engram exported (engram_id in its front matter): its engram_id was named "front matter.id",
    # engram's name inside its own fields, which the note does not hold.
    vault = tmp_path / "vault"
    vault.mkdir()
    given = dict(line.split(": ", 1) for line in ("engram_id: 0190e2b2-0000-7000-8000-000000000001", written))
    front = "\n".join(f"{name}: {value}" for name, value in given.items())
    (vault / "meta.md").write_text(f"---\ntitle: Meta\n{front}\n---\n\nBody.\n", encoding="utf-8")
    with pytest.raises(SnapshotError) as err:
        run(tmp_path / "home", "import", str(vault), "--from", "basic-memory")
    assert str(err.value).startswith(named), err.value


@pytest.mark.parametrize("written", ["tags:\n  a: 1", "tags: [a, {b: 1}]", "tags: [a, null]"])
def test_tags_that_are_no_list_of_words_are_named(tmp_path: Path, written: str) -> None:
    # A mapping became the tag "{'a': 1}" and a null the tag "none": Python's spelling of the value.
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "a.md").write_text(f"---\ntitle: A\npermalink: a\n{written}\n---\n\nBody.\n", encoding="utf-8")
    with pytest.raises(SnapshotError) as err:
        run(tmp_path / "home", "import", str(vault), "--from", "basic-memory")
    assert str(err.value).startswith("a.md front matter tags"), err.value


@pytest.mark.parametrize(("written", "named"), [("title: [a, b]", "a.md front matter title: got a list"),
                                                ("permalink: {x: 1}", "a.md front matter permalink: got an object")])
def test_a_title_or_permalink_that_is_no_text_is_named(tmp_path: Path, written: str, named: str) -> None:
    # They became the title "['a', 'b']" and the key "{'x': 1}": Python's spelling of the value.
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "a.md").write_text(f"---\n{written}\n---\n\nBody.\n", encoding="utf-8")
    with pytest.raises(SnapshotError) as err:
        run(tmp_path / "home", "import", str(vault), "--from", "basic-memory")
    assert str(err.value).startswith(named), err.value
