"""Markdown and YAML formats: render/parse round trips and schema validation with file and line."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

from engram.files.document import get_format
from engram.files.entry import Entry
from engram.model import Category, Layer


def _rich_entry() -> Entry:
    now = time.time()
    return Entry(
        content="First line\n- tags: looks like a field\n\n  indented (code)\n\\ starts with a backslash (2020-01-01)",
        id="0194d3b2-0000-7000-8000-000000000001", key="odd key --> with spaces", category=Category.CORE,
        type="decision", layer=Layer.PROCEDURAL, tags=("preferences", "two words"),
        metadata={"confidence": 0.9, "nested": {"a": [1, 2]}, "section": "Programming Languages"},
        importance=0.8, related_entity="Hendrik", source="chat", created_at=now, updated_at=now + 1.25,
        last_accessed=now + 2.5, recall_count=3, links=("0194d3b2-0000-7000-8000-000000000002",),
    )


def test_every_field_survives_render_and_parse(fmt: str) -> None:
    f = get_format(fmt)
    entry = _rich_entry()
    doc = f.new("Preferences")
    doc.add(Entry(content="plain one", id="p1", created_at=1739097000.5))
    doc.add(entry)
    parsed = f.parse(doc.text(), "global/preferences" + f.suffix, max_content_chars=8000)
    assert parsed.parsed.problems == []
    by_id = {e.id: replace(e, line=0, text="") for e in parsed.parsed.entries}
    assert by_id[entry.id] == entry
    assert by_id["p1"].content == "plain one" and by_id["p1"].created_at == 1739097000.5
    # Parsing what was rendered and rendering again changes nothing.
    assert parsed.text() == doc.text()


def test_markdown_is_clawcode_shaped() -> None:
    f = get_format("markdown")
    doc = f.new("Preferences")
    doc.add(Entry(content="User prefers Python for scripting tasks", id="a", created_at=1770631800.0,
                  tags=("preferences", "programming"), metadata={"section": "Programming Languages"}))
    text = doc.text()
    assert text.startswith("# Preferences\n")
    assert "## Programming Languages\n" in text
    assert "- User prefers Python for scripting tasks (2026-02-09) <!-- id:a " in text
    assert "  - tags: preferences, programming\n" in text


def test_hand_written_clawcode_file_reads() -> None:
    text = (
        "# Preferences\n\n## Programming Languages\n"
        "- User prefers Python for scripting tasks (2026-02-09)\n"
        "- User likes TypeScript for web development (2026-02-07)\n"
        "  - tags: preferences, web\n"
        "  - metadata: {\"confidence\": \"high\"}\n\n"
        "## Communication Style\n- User prefers concise responses (2026-02-08T10:30:00Z)\n"
    )
    doc = get_format("markdown").parse(text, "global/preferences.md", max_content_chars=8000)
    entries = doc.parsed.entries
    assert doc.parsed.problems == []
    assert [e.content for e in entries] == ["User prefers Python for scripting tasks",
                                           "User likes TypeScript for web development", "User prefers concise responses"]
    assert all(e.id is None for e in entries)
    assert entries[1].tags == ("preferences", "web")
    assert entries[1].metadata == {"confidence": "high", "section": "Programming Languages"}
    assert entries[2].metadata == {"section": "Communication Style"}
    assert entries[2].created_at == 1770546600.0


CLAWCODE_FIELDS = (
    "# Standup\n\n"
    "- Ship the importer this week (2026-02-09)\n"
    "  - metadata: from standup\n"
    "  - tags: planning, team\n"
    "- The demo is on Friday (2026-02-10)\n"
    "  - project: engram\n"
    "  - Owner: Hendrik Virtanen\n"
    "- Metadata as JSON and a field of its own (2026-02-11)\n"
    "  - metadata: {\"confidence\": \"high\"}\n"
    "  - project: engram\n"
)


def test_clawcode_sub_bullets_and_free_text_metadata_read_as_metadata() -> None:
    # ClawCode's "File Format Specification": "- Memory content here (timestamp)" with
    # "  - metadata: value" and "  - tags: tag1, tag2" sub-bullets; other "name: value" sub-bullets too.
    f = get_format("markdown")
    doc = f.parse(CLAWCODE_FIELDS, "global/standup.md", max_content_chars=8000)
    assert doc.parsed.problems == []
    standup, demo, both = doc.parsed.entries
    assert (standup.metadata, standup.tags) == ({"metadata": "from standup"}, ("planning", "team"))
    assert demo.metadata == {"project": "engram", "Owner": "Hendrik Virtanen"}
    assert both.metadata == {"confidence": "high", "project": "engram"}
    # engram writes them inside its metadata line, which reads back the same entry.
    out = f.new("Standup")
    for entry in doc.parsed.entries:
        out.add(replace(entry, id=f"id-{entry.line}"))
    again = f.parse(out.text(), "global/standup.md", max_content_chars=8000)
    assert again.parsed.problems == []
    assert [(e.content, e.metadata, e.tags) for e in again.parsed.entries] == [
        (e.content, e.metadata, e.tags) for e in doc.parsed.entries]
    assert '  - metadata: {"metadata": "from standup"}\n' in out.text()
    assert f.parse(out.text(), "global/standup.md", max_content_chars=8000).text() == out.text()


@pytest.mark.parametrize(("sub_bullets", "named"), [
    ("  - metadata: {\"project\": \"a\"}\n  - project: b\n", '"project" is given twice'),
    ("  - metadata: {oops\n", "malformed JSON"),  # an object meant as JSON stays an error, never text
])
def test_clawcode_metadata_that_would_lose_a_value_is_refused(sub_bullets: str, named: str) -> None:
    doc = get_format("markdown").parse("- a memory\n" + sub_bullets, "global/a.md", max_content_chars=100)
    assert doc.parsed.entries == [] and named in doc.parsed.problems[0].message


BAD_MARKDOWN = (
    "# Notes\n"                                   # 1
    "- good one (2026-02-09)\n"                   # 2
    "- bad date (2026-13-45)\n"                   # 3
    "- unknown category (2026-02-09)\n"           # 4
    "  - category: feelings\n"                    # 5
    "- broken metadata\n"                         # 6
    "  - metadata: {oops\n"                       # 7
    "- field given twice\n"                       # 8
    "  - colour: blue\n"                          # 9
    "  - colour: red\n"                           # 10
    "stray paragraph\n"                           # 11
    "- another good one <!-- id:keep-me -->\n"    # 12
    "- invalid with id (2026-02-30) <!-- id:bad-id -->\n"  # 13
)


def test_bad_markdown_is_reported_with_line_and_the_rest_still_reads() -> None:
    doc = get_format("markdown").parse(BAD_MARKDOWN, "global/notes.md", max_content_chars=8000)
    assert [e.content for e in doc.parsed.entries] == ["good one", "another good one"]
    problems = {p.line: p.message for p in doc.parsed.problems}
    assert set(problems) == {3, 4, 6, 10, 11, 13}
    assert "date" in problems[3] and "category" in problems[4] and "feelings" in problems[4]
    assert "metadata" in problems[6] and '"colour" is given twice' in problems[10]
    assert all(p.path == "global/notes.md" for p in doc.parsed.problems)
    # An invalid entry that has an id is known, so sync never takes it as deleted.
    assert doc.parsed.invalid_ids == {"bad-id"}
    assert doc.text() == BAD_MARKDOWN  # nothing rewritten


def test_bad_yaml_items_and_malformed_yaml() -> None:
    f = get_format("yaml")
    text = (
        "memories:\n"
        "- content: fine\n"
        "  timestamp: '2026-02-09T10:30:00Z'\n"
        "- content: bad date\n"
        "  timestamp: 'yesterday'\n"
        "- id: x1\n"
        "  content: unknown category\n"
        "  category: feelings\n"
        "- just a string\n"
    )
    doc = f.parse(text, "global/notes.yaml", max_content_chars=8000)
    assert [e.content for e in doc.parsed.entries] == ["fine"]
    assert [p.line for p in doc.parsed.problems] == [4, 6, 9]
    assert doc.parsed.invalid_ids == {"x1"}
    broken = f.parse("memories:\n  - content: [unclosed\n", "global/b.yaml", max_content_chars=8000)
    assert broken.parsed.broken and broken.parsed.problems[0].line == 3
    assert broken.text() == "memories:\n  - content: [unclosed\n"


def test_oversized_content_is_refused_by_schema(fmt: str) -> None:
    f = get_format(fmt)
    doc = f.new("X")
    doc.add(Entry(content="x" * 50, id="big", created_at=1.0))
    parsed = f.parse(doc.text(), "global/x" + f.suffix, max_content_chars=10)
    assert parsed.parsed.entries == [] and parsed.parsed.invalid_ids == {"big"}
    assert "content" in parsed.parsed.problems[0].message


@pytest.mark.parametrize("value", ["2026-02-09", "2026-02-09T00:00:00Z", "2026-02-09T01:00:00+01:00"])
def test_dates_in_several_spellings(value: str) -> None:
    doc = get_format("markdown").parse(f"- x ({value})\n", "global/a.md", max_content_chars=100)
    assert doc.parsed.entries[0].created_at == 1770595200.0


def test_a_yaml_key_written_as_a_number_reads_as_its_text() -> None:
    # YAML reads ``key: 2026`` as a number; the library refuses a number as a key (as HTTP and MCP
    # do), so the format turns it into text itself, as it does an id; a key YAML reads as true is still refused.
    f = get_format("yaml")
    doc = f.parse("memories:\n- content: the year plan\n  key: 2026\n- content: a flag\n  key: true\n",
                  "global/plans.yaml", max_content_chars=8000)
    assert [(e.content, e.key) for e in doc.parsed.entries] == [("the year plan", "2026")]
    assert [p.line for p in doc.parsed.problems] == [4], doc.parsed.problems
    assert "key: got true (a boolean) (allowed: text, 1-200 printable characters)" in doc.parsed.problems[0].message
