"""``engram import --from basic-memory`` reads a note as basic-memory reads it (markdown-it,
CommonMark): nothing in a fenced or indented code block or an HTML block is an observation, a
relation, a list heading or a wiki-link; a list item with a ``#tag`` and no ``[category]`` is an
observation, and a numbered or ``+`` item reads as a ``-`` one; and ``engram export --format
basic-memory`` writes a memory's times so the import gives the very floats back, in front matter
basic-memory's YAML reads. Through the CLI, against a real SQLite file."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import yaml

from engram.config import load_settings
from engram.engine import Engram
from tests.importers.test_import_cli import as_json, run

# Written as basic-memory's write_note writes a note (front matter with block-style tags, the title
# as a heading), with the code a user keeps in a note: basic-memory reads none of it.
CODE_NOTE = """---
title: Parser Notes
type: note
permalink: parser-notes
tags:
- parsing
---

# Parser Notes

How a note is written:

```markdown
- [note] inside a backtick fence
- uses [[Fenced Target]]
## Observations
```

~~~~
- [note] inside a longer tilde fence
```
- [note] still inside: a shorter fence of another kind does not close it
~~~~

   ```
   - [note] inside a fence indented three spaces
   ```

Indented code, after a blank line:

    - [note] inside an indented code block
    - uses [[Indented Target]]

<div>
- [note] inside an HTML block
</div>

## Observations
- [fact] A real observation #parsing

## Relations
- relates_to [[Other Note]]
"""

OTHER_NOTE = """---
title: Other Note
type: note
permalink: other-note
---

# Other Note

Nothing here.
"""


def _import(tmp_path: Path, notes: dict[str, str]) -> Path:
    vault, home = tmp_path / "vault", tmp_path / "home"
    vault.mkdir()
    for name, text in notes.items():
        (vault / name).write_text(text, encoding="utf-8")
    summary = as_json(home, "import", str(vault), "--from", "basic-memory")
    assert summary["warnings"] == [], summary
    return home


def test_code_and_html_blocks_are_prose_as_basic_memory_reads_them(tmp_path: Path) -> None:
    home = _import(tmp_path, {"parser-notes.md": CODE_NOTE, "other-note.md": OTHER_NOTE})
    listed = as_json(home, "list")
    observations = [m for m in listed if m["key"] not in ("parser-notes", "other-note")]
    assert [m["content"] for m in observations] == ["A real observation"]
    note = as_json(home, "get", "parser-notes")
    # Every block is the note's prose as the file has it, the "## Observations" in the fence included.
    start = CODE_NOTE.index("How a note is written:")
    assert note["content"] == CODE_NOTE[start: CODE_NOTE.index("\n\n## Observations\n- [fact]")]
    assert note["metadata"]["relations"] == [{"type": "relates_to", "to": "Other Note"}]
    assert "unresolved_links" not in note["metadata"]["basic_memory"]  # no [[Fenced Target]], no [[Indented Target]]
    assert {m["key"] for m in as_json(home, "neighbours", "parser-notes")} == {"other-note", observations[0]["key"]}


# As basic-memory's own docs write an observation without a category: `- Content text #tag (context)`.
TAGGED_NOTE = """---
title: Coffee Log
type: note
permalink: coffee-log
---

# Coffee Log

Brewing notes, see [[Grinders]].

## Observations
- [method] Pour over gives clarity #brewing
- Ethiopian beans taste of citrus #origin #taste (cupping session)
- [ ] buy filters #errand
- Plain list item without a tag

1. [step] Rinse the filter first
+ Weigh the beans #routine
"""


def test_a_list_item_with_a_tag_and_no_category_is_an_observation(tmp_path: Path) -> None:
    home = _import(tmp_path, {"coffee-log.md": TAGGED_NOTE})
    by_content = {m["content"]: m for m in as_json(home, "list")}
    tagged = by_content["Ethiopian beans taste of citrus"]
    assert (tagged["tags"], tagged["type"]) == (["origin", "taste"], "learned")
    assert tagged["metadata"]["basic_memory"] == {"file": "coffee-log.md", "line": 13, "context": "cupping session"}
    assert {m["key"] for m in as_json(home, "neighbours", tagged["key"])} == {"coffee-log"}
    assert by_content["Pour over gives clarity"]["tags"] == ["method", "brewing"]
    # A task stays a task (basic-memory reads none, tagged or not), and so does an untagged item.
    note = as_json(home, "get", "coffee-log")
    assert note["content"] == "Brewing notes, see [[Grinders]].\n\n- [ ] buy filters #errand\n- Plain list item without a tag"
    # Any list item, numbered or bulleted with +, as CommonMark (and so basic-memory) has them.
    assert (by_content["Rinse the filter first"]["type"], by_content["Weigh the beans"]["tags"]) == ("step", ["routine"])
    assert len(by_content) == 5


def _engram(home: Path) -> Engram:
    return Engram.from_settings(load_settings(home=home, embeddings={"provider": "none"}))


def test_export_keeps_created_and_modified_to_the_last_digit(tmp_path: Path) -> None:
    created = 1732895718.1234567  # more digits than a microsecond holds
    with _engram(tmp_path / "a") as source:
        memory = source.remember("The deploy runs at noon", key="deploy-time", created_at=created).memory
        source.remember("The build uses a cache", key="build-cache", created_at=1700000000.0)
    assert memory.created_at == created
    run(tmp_path / "a", "export", str(tmp_path / "vault"), "--format", "basic-memory")
    note = (tmp_path / "vault" / "deploy-time.md").read_text(encoding="utf-8")
    assert "created: 2024-11-29T15:55:18.1234567Z\n" in note
    assert "created: 2023-11-14T22:13:20Z\n" in (tmp_path / "vault" / "build-cache.md").read_text(encoding="utf-8")
    # What basic-memory's front-matter parse (PyYAML) gets: a time, to the microsecond.
    front = yaml.safe_load(note.split("---\n")[1])
    assert front["created"] == datetime(2024, 11, 29, 15, 55, 18, 123456, tzinfo=UTC)
    as_json(tmp_path / "b", "import", str(tmp_path / "vault"), "--from", "basic-memory")
    with _engram(tmp_path / "a") as source, _engram(tmp_path / "b") as copy:
        before = {m.key: (m.created_at, m.updated_at) for m in source.list()}
        after = {m.key: (m.created_at, m.updated_at) for m in copy.list()}
    assert after == before and before["deploy-time"][0] == created
