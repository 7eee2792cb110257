"""``engram import --from basic-memory`` finds the observations and relations basic-memory's own
parser (its markdown-it observation and relation plugins) finds in a note, and no others: a list
item's every line, ``#a#b`` as two tags, a transcript's clock time as no category, a relation's type
one word or quoted, relations inside block quotes, paragraphs and headings read as items are, the
``bm_parse_semantics: false`` opt-out; and a folder of such notes is detected as basic-memory while
engram's own exported memory folder is not. Through the CLI, against a real SQLite file."""

from __future__ import annotations

from pathlib import Path

from tests.importers.test_import_cli import as_json, run

OTHER = """---
title: Other
permalink: other
---

Nothing here.
"""


def _import(tmp_path: Path, note: str) -> tuple[Path, dict, dict[str, dict]]:
    """``note`` (as ``log.md``, beside ``other.md``) imported; the summary and the memories other
    than the two notes', by content."""
    vault, home = tmp_path / "vault", tmp_path / "home"
    vault.mkdir()
    (vault / "log.md").write_text(note, encoding="utf-8")
    (vault / "other.md").write_text(OTHER, encoding="utf-8")
    summary = as_json(home, "import", str(vault), "--from", "basic-memory")
    listed = as_json(home, "list")
    by_content = {m["content"]: m for m in listed if m["key"] not in ("log", "other")}
    return home, summary, by_content


ITEMS = """---
title: Log
permalink: log
---

- Ethiopian beans taste of citrus,
  tasted at the #cupping table (Tuesday)
- [method] Pour over at 94 degrees
  with a slow bloom
- Grinders compared #gear#burr and #price
"""


def test_a_list_item_is_read_with_every_line(tmp_path: Path) -> None:
    home, _summary, by_content = _import(tmp_path, ITEMS)
    # No category: the whole item is the observation, its tag on its second line included.
    tagged = by_content["Ethiopian beans taste of citrus,\ntasted at the table"]
    assert (tagged["tags"], tagged["metadata"]["basic_memory"]["context"]) == (["cupping"], "Tuesday")
    # With a category basic-memory reads the rest of its first line; the next stays the note's prose.
    assert by_content["Pour over at 94 degrees"]["tags"] == ["method"]
    assert as_json(home, "get", "log")["content"] == "  with a slow bloom"
    assert len(by_content) == 3


def test_a_tag_pair_is_two_tags(tmp_path: Path) -> None:
    _home, _summary, by_content = _import(tmp_path, ITEMS)
    assert by_content["Grinders compared and"]["tags"] == ["gear", "burr", "price"]


TRANSCRIPT = """---
title: Log
permalink: log
---

- [00:01:42] Speaker: we ship on Friday
- [1:02:03.500] Speaker: agreed #decision
- [/] half done
- [v1:2] odd but no clock
"""


def test_a_clock_time_or_a_task_mark_is_no_category(tmp_path: Path) -> None:
    home, _summary, by_content = _import(tmp_path, TRANSCRIPT)
    # A time code is the line's text: an observation only by its #tag, with no category.
    spoken = by_content["[1:02:03.500] Speaker: agreed"]
    assert (spoken["tags"], spoken["type"]) == (["decision"], "learned")
    assert by_content["odd but no clock"]["metadata"]["basic_memory"]["category"] == "v1:2"
    assert len(by_content) == 2
    assert as_json(home, "get", "log")["content"] == "- [00:01:42] Speaker: we ship on Friday\n- [/] half done"


RELATIONS = """---
title: Log
permalink: log
---

## Relations
- depends on [[Other]]
- "part of" [[Other]] (since May)
- relates_to [[Other]] and a sentence after it
- uses [[Other]]

> - quoted_in [[Other]]
> - [fact] quoted, not an observation
"""


def test_a_relation_type_is_one_word_or_quoted_and_is_read_in_a_block_quote(tmp_path: Path) -> None:
    home, _summary, by_content = _import(tmp_path, RELATIONS)
    note = as_json(home, "get", "log")
    assert note["metadata"]["relations"] == [{"type": "part of", "to": "Other"}, {"type": "uses", "to": "Other"},
                                             {"type": "quoted_in", "to": "Other"}]
    # An unquoted type of two words, or a sentence going on after the target: prose with a link.
    assert note["content"] == ("- depends on [[Other]]\n- relates_to [[Other]] and a sentence after it\n\n"
                               "> - [fact] quoted, not an observation")
    assert by_content == {}
    assert {m["key"] for m in as_json(home, "neighbours", "log")} == {"other"}


PARAGRAPHS = """---
title: Log
permalink: log
---

# Log

Plain prose, see [[Other]].

[decision] Ship the parser on Friday

The cache is warm #ops
after a restart.

## Follow up #todo

- [ ] not an observation #todo
"""


def test_a_paragraph_or_heading_is_read_as_a_list_item_is(tmp_path: Path) -> None:
    home, _summary, by_content = _import(tmp_path, PARAGRAPHS)
    assert by_content["Ship the parser on Friday"]["type"] == "decision"
    assert by_content["The cache is warm\nafter a restart."]["tags"] == ["ops"]
    assert by_content["Follow up"]["tags"] == ["todo"]
    assert len(by_content) == 3
    assert as_json(home, "get", "log")["content"] == "Plain prose, see [[Other]].\n\n- [ ] not an observation #todo"


OPTED_OUT = """---
title: Log
permalink: log
bm_parse_semantics: false
---

# Log

Extracted text, see [[Other]].

## Observations
- [fact] not read #raw
- uses [[Other]]
"""


def test_a_note_opting_out_of_semantics_is_prose_alone(tmp_path: Path) -> None:
    home, summary, by_content = _import(tmp_path, OPTED_OUT)
    assert (summary["imported"], by_content) == (2, {})
    note = as_json(home, "get", "log")
    assert note["content"] == OPTED_OUT[OPTED_OUT.index("Extracted"):].rstrip()
    assert "relations" not in note["metadata"] and as_json(home, "neighbours", "log") == []


UNMARKED = """---
title: Log
type: note
---

- [fact] A note with front matter and observations, no permalink or wiki-link
"""


def test_a_folder_of_notes_with_observations_is_detected_and_engrams_own_folder_is_not(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "log.md").write_text(UNMARKED, encoding="utf-8")
    summary = as_json(tmp_path / "home", "import", str(vault))  # the kind detected
    assert (summary["kind"], summary["imported"]) == ("basic-memory", 2)
    # engram's own memory folder, its memories' content looking like a note's front matter and items.
    source, copy, folder = tmp_path / "source", tmp_path / "copy", tmp_path / "folder"
    content = "---\ntitle: x\n---\n- [fact] looks like an observation\n- uses [[Other]]"
    run(source, "remember", "--key", "lookalike", "--", content)
    run(source, "export", "--format", "markdown", str(folder))
    assert as_json(copy, "import", str(folder))["imported"] == 1
    assert as_json(copy, "get", "lookalike")["content"] == content
