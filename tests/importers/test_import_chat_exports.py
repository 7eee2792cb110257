"""ChatGPT's and Claude.ai's data exports through ``engram import`` (the CLI runner and the
installed command on a real SQLite home) and ``Engram.import_from``.

The fixtures (``chatgpt-export/``, ``claude-export/``) are written from the documented shapes:
ChatGPT's ``conversations.json`` as described in mitkury/chatgpt-export-parser's
docs/chatgpt-data-export-format.md (the ``mapping`` tree, ``current_node``, ``author.role``,
``content.content_type`` and ``parts``, ``metadata.is_visually_hidden_from_conversation``,
``recipient``) with voice parts (``audio_transcription``) and images (``image_asset_pointer``) as
exporters' typed parts name them; Claude.ai's as field references of its export give it (``uuid``,
``name``, ``chat_messages`` with ``sender``, ``text``, ``content`` blocks, ``attachments``,
``files``, and ``current_leaf_message_uuid`` / ``parent_message_uuid``). The ZIP a person
downloads is built in each test from those files with ``zipfile``.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest

from engram.config import load_settings
from engram.engine import Engram
from engram.errors import SnapshotError
from engram.interfaces.cli.app import app
from tests.importers.test_import_cli import ENGRAM, FIXTURES, as_json, run, runner

CHATGPT = FIXTURES / "chatgpt-export"
CLAUDE = FIXTURES / "claude-export"
LISBON = "chatgpt:6740c5b2-0a1c-8000-9f2e-1a2b3c4d5e6f"
DOUGH = "chatgpt:67a1f0e2-3b4c-8000-a1b2-c3d4e5f60718"
METRICS = "claude:8f3a2b1c-4d5e-4f60-8a7b-9c0d1e2f3a4b"
HAIKU = "claude:1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f"


def zipped(folder: Path, to: Path, conversations: Any = None, inside: str = "") -> Path:
    """The export as downloaded: every file of ``folder`` in a ZIP (``conversations`` replacing its
    conversations.json when given), under the folder ``inside`` when named."""
    with zipfile.ZipFile(to, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.iterdir()):
            text = path.read_text(encoding="utf-8")
            if path.name == "conversations.json" and conversations is not None:
                text = json.dumps(conversations, ensure_ascii=False)
            archive.writestr(f"{inside}{path.name}", text)
    return to


def export(folder: Path) -> list[dict[str, Any]]:
    return json.loads((folder / "conversations.json").read_text(encoding="utf-8"))


def shown(home: Path, key: str) -> list[dict[str, Any]]:
    return as_json(home, "history", "show", key, "--limit", "0")["messages"]


LISBON_SHOWN = [
    ("user", "I'm planning a trip to Lisbon in May. Any tips?"),
    ("assistant", "May is lovely in Lisbon: warm days, few crowds. Ride Tram 28 early and book Belém's tower ahead."),
    ("user", "Is this tram the 28?"),
    ("assistant", "Yes — a yellow Remodelado car on the 28 route 🚋.\n\nBoard at Martim Moniz to get a seat."),
    ("assistant", "  That's the Elevador de Santa Justa.\r\nIt opened in 1902."),
]


@pytest.mark.parametrize("form", ["zip", "folder", "file", "named"])
def test_a_chatgpt_export_brings_the_conversations_as_shown(tmp_path: Path, form: str) -> None:
    home = tmp_path / "home"
    source = {"zip": lambda: zipped(CHATGPT, tmp_path / "chatgpt-export.zip"), "folder": lambda: CHATGPT,
              "file": lambda: CHATGPT / "conversations.json", "named": lambda: CHATGPT}[form]()
    args = ["import", str(source), *(["--from", "chatgpt"] if form == "named" else [])]
    first = as_json(home, *args)
    assert (first["kind"], first["imported"], first["messages_imported"], first["agents"]) == (
        "chatgpt", 1, 9, ["default"]), first
    assert first["conversations"] == [
        {"key": LISBON, "title": "Trip to Lisbon", "messages_added": 5},
        {"key": DOUGH, "title": "Sourdough starter", "messages_added": 4}]
    warnings = "\n".join(first["warnings"])
    for counted in ("3 conversations read; not imported: ", "messages on other branches (3)", "hidden messages (2)",
                    "assistant messages to a tool (1)", "tool messages (1)", "thoughts messages (1)",
                    "messages with only images or files (1)", "conversations with no message to import (1)",
                    "images, files or audio beside a message's text (3)"):
        assert counted in warnings, warnings
    if form != "file":
        assert "not imported: chat.html, message_feedback.json, user.json" in warnings

    # Only the branch the person last saw: not the regenerated answer, not the edited question.
    lisbon = shown(home, LISBON)
    assert [(m["role"], m["content"]) for m in lisbon] == LISBON_SHOWN
    assert [m["created_at"] for m in lisbon] == pytest.approx(
        [1714557600.123456, 1714557631.25, 1714557690.0, 1714557697.75, 1714557725.5])
    assert lisbon[0]["metadata"] == {"chatgpt": {"conversation": "6740c5b2-0a1c-8000-9f2e-1a2b3c4d5e6f",
                                                 "message": "5b8e0c1d-0001-4a00-8000-000000000003",
                                                 "title": "Trip to Lisbon"}}
    assert lisbon[2]["metadata"]["chatgpt"]["parts_left_out"] == ["image_asset_pointer"]
    assert lisbon[1]["metadata"]["chatgpt"]["model"] == "gpt-4o" and "title" not in lisbon[1]["metadata"]["chatgpt"]
    # A voice conversation (conversation_id, no id): what was said, from its transcription.
    assert [(m["role"], m["content"]) for m in shown(home, DOUGH)][2:] == [
        ("user", "How often should I feed it?"), ("assistant", "Twice a day while it's warm.")]
    assert {c["key"] for c in as_json(home, "history", "list")} == {LISBON, DOUGH}

    again = as_json(home, *args)
    assert (again["messages_imported"], again["messages_skipped"]) == (0, 9), again
    assert [c["messages_added"] for c in again["conversations"]] == [0, 0]
    assert (again["imported"], again["skipped"], len(shown(home, LISBON))) == (0, 1, 5)
    # Conversations, not memories: nothing is made up from them; the custom instructions (what the
    # person told ChatGPT of themselves, hidden from the conversation) are their one memory.
    assert [(m["content"], m["category"]) for m in as_json(home, "list")] == [("I live in Porto.", "core")]


def test_a_claude_export_brings_its_conversations_and_only_the_current_branch(tmp_path: Path) -> None:
    home = tmp_path / "home"
    source = zipped(CLAUDE, tmp_path / "data-2025-03-03.zip", inside="data-2025-03-03-18-00-00/")
    first = as_json(home, "import", str(source))
    assert (first["kind"], first["messages_imported"], first["agents"]) == ("claude", 6, ["default"]), first
    assert first["conversations"] == [
        {"key": METRICS, "title": "Postgres vs MongoDB for metrics", "messages_added": 3},
        {"key": HAIKU, "title": "Birthday haiku", "messages_added": 3}]
    warnings = "\n".join(first["warnings"])
    for counted in ("2 conversations read; not imported: ", "messages on other branches (1)",
                    "messages without text (1)",
                    "not imported: projects.json, users.json"):
        assert counted in warnings, warnings
    metrics = shown(home, METRICS)
    assert [(m["role"], m["content"]) for m in metrics] == [
        # The attachment's text follows what was typed, as a block naming it.
        ("user", "Which should I use for time-series metrics? Schema attached.\n\n[attachment: schema.sql]\n```\n"
                 "CREATE TABLE metrics (ts timestamptz, name text, value double precision);\n```"),
        # Text blocks around a tool use: a blank line where it stood; adjacent ones (a citation) run on.
        ("assistant", "Let me check the current docs.\n\nPostgreSQL with TimescaleDB fits best: your schema is already "
                      "relational."),
        ("user", "Thanks! 🙏")]  # an older message with text and no content blocks
    assert metrics[0]["created_at"] == pytest.approx(1739527462.532011)
    assert metrics[0]["metadata"] == {"claude": {
        "conversation": "8f3a2b1c-4d5e-4f60-8a7b-9c0d1e2f3a4b", "message": "c1000000-0000-4000-8000-000000000001",
        "attachments": ["schema.sql"], "title": "Postgres vs MongoDB for metrics"}}
    # The retried answer is left out; the one the person kept, and what followed it, arrive.
    assert [(m["role"], m["content"]) for m in shown(home, HAIKU)] == [
        ("user", "Write a haiku for my sister's birthday"),
        ("assistant", "  Spring wind, one more year —\r\nyour laugh still fills the kitchen\r\nlike warm bread rising"),
        ("user", "Perfect 🎂")]
    again = as_json(home, "import", str(source), "--from", "claude")
    assert (again["messages_imported"], again["messages_skipped"]) == (0, 6), again


def test_a_newer_export_adds_only_the_new_messages_and_conversations(tmp_path: Path) -> None:
    home = tmp_path / "home"
    as_json(home, "import", str(zipped(CHATGPT, tmp_path / "may.zip")))
    newer = export(CHATGPT)
    lisbon = newer[0]
    last = lisbon["current_node"]
    lisbon["mapping"][last]["children"] = ["5b8e0c1d-0001-4a00-8000-0000000000f1"]
    question = copy.deepcopy(lisbon["mapping"][last])
    question.update(id="5b8e0c1d-0001-4a00-8000-0000000000f1", parent=last, children=[])
    question["message"].update(id="5b8e0c1d-0001-4a00-8000-0000000000f1", author={"role": "user", "name": None},
                               create_time=1717200000.5, content={"content_type": "text", "parts": ["And in June?"]},
                               metadata={})
    lisbon["mapping"][question["id"]] = question
    lisbon["current_node"] = question["id"]
    lisbon["title"] = "Lisbon in spring"  # renamed since: the conversation keeps its first title
    newer.append({**copy.deepcopy(newer[1]), "conversation_id": "68ffffff-0000-8000-8000-000000000001",
                  "title": "Second starter"})
    later = as_json(home, "import", str(zipped(CHATGPT, tmp_path / "june.zip", conversations=newer)))
    assert (later["messages_imported"], later["messages_skipped"]) == (5, 9), later
    assert [(c["title"], c["messages_added"]) for c in later["conversations"]] == [
        ("Lisbon in spring", 1), ("Sourdough starter", 0), ("Second starter", 4)]
    lisbon_now = shown(home, LISBON)
    assert [(m["role"], m["content"]) for m in lisbon_now] == [*LISBON_SHOWN, ("user", "And in June?")]
    assert lisbon_now[0]["metadata"]["chatgpt"]["title"] == "Trip to Lisbon"
    assert len(shown(home, "chatgpt:68ffffff-0000-8000-8000-000000000001")) == 4
    text = run(home, "import", str(tmp_path / "june.zip"))
    assert "history: 0 messages added, 14 already present" in text and "conversations: 0 of 3 gained" in text


LONG = ("Ünïcödé 🧠 — 漢字テキスト, RTL עברית, e\u0301 combining, tab\tand CRLF\r\n" * 200) + "  \n"


def test_contents_arrive_byte_for_byte_through_the_library(tmp_path: Path) -> None:
    chatgpt = export(CHATGPT)
    answer = chatgpt[0]["mapping"][chatgpt[0]["current_node"]]["message"]
    answer["content"]["parts"] = ["  " + LONG, "\r\nsecond part "]
    answer["create_time"] = None  # a message without a time takes the one before it
    claude = export(CLAUDE)
    claude[1]["chat_messages"][4]["content"][0]["text"] = "\t" + LONG
    with Engram.from_settings(load_settings(home=tmp_path, embeddings={"provider": "none"})) as mem:
        summary = mem.import_from(json.dumps(chatgpt, ensure_ascii=False))  # the document's text, detected
        assert (summary.kind, summary.messages_imported) == ("chatgpt", 9), summary
        said = mem.history.all(LISBON)
        assert said[-1].content == "  " + LONG + "\n" + "\r\nsecond part "
        assert said[-1].created_at == pytest.approx(said[-2].created_at)
        assert mem.import_from(json.dumps(claude, ensure_ascii=False), "claude").messages_imported == 6
        assert mem.history.all(HAIKU)[-1].content == "\t" + LONG
        # The same export again, as a folder's files: nothing new.
        files = {"conversations.json": json.dumps(claude, ensure_ascii=False), "users.json": "[]"}
        assert mem.import_from(files).messages_skipped == 6
        assert mem.for_agent("someone-else").history.conversations() == []


def _node(data: list[dict[str, Any]], n: int) -> dict[str, Any]:
    """The n-th node of the Lisbon conversation's shown path (0: the root placeholder)."""
    mapping = data[0]["mapping"]
    path, node = [], data[0]["current_node"]
    while node is not None:
        path.append(node)
        node = mapping[node]["parent"]
    return mapping[path[::-1][n]]


NODE = "[0].mapping.5b8e0c1d-0001-4a00-8000-00000000000"
CHATGPT_MALFORMED = [
    (lambda d: _node(d, 5)["message"]["content"]["parts"].insert(0, 7), f"{NODE}8.message.content.parts[0]: got 7 (a number)"),
    (lambda d: _node(d, 3)["message"]["author"].update(role=None), f"{NODE}3.message.author.role: got null"),
    (lambda d: _node(d, 4)["message"].update(create_time="soon"), f"{NODE}5.message.create_time: \"soon\" is not a time"),
    # Refused by the history (a time later than now): named as the export spells it, not engram's created_at.
    (lambda d: _node(d, 4)["message"].update(create_time=32503680000), f"{NODE}5.message.create_time: 3000-01-01"),
    (lambda d: _node(d, 4)["message"].update(content="hello"), f"{NODE}5.message.content: got text"),
    (lambda d: _node(d, 4).update(parent="gone"), f"{NODE}5.parent: \"gone\" is no node of mapping"),
    (lambda d: d[0].update(current_node="nowhere"), '[0].current_node: "nowhere" is no node of mapping'),
    (lambda d: d[1].pop("conversation_id"), "[1].id: is missing"),
    (lambda d: d[2].update(mapping=[]), "[2].mapping: got a list"),
    (lambda d: d.append({**d[1], "title": "Other"}), '[3].conversation_id: "67a1f0e2-3b4c-8000-a1b2-c3d4e5f60718" '
                                                     "repeats [1], which differs"),
    (lambda d: d[0]["mapping"].update({"x y": {"id": "x y", "message": None, "parent": "x y", "children": []}})
     or d[0].update(current_node="x y"), '[0].mapping["x y"].parent: "x y" leads back to this node'),
]


@pytest.mark.parametrize(("change", "named"), CHATGPT_MALFORMED)
def test_a_malformed_chatgpt_export_names_the_json_path_and_writes_nothing(tmp_path: Path, change: Any,
                                                                          named: str) -> None:
    data = export(CHATGPT)
    change(data)
    source = zipped(CHATGPT, tmp_path / "export.zip", conversations=data)
    home = tmp_path / "home"
    result = runner.invoke(app, ["--home", str(home), "import", str(source)])
    assert isinstance(result.exception, SnapshotError) and named in str(result.exception), result.exception
    assert as_json(home, "history", "list") == []


CLAUDE_MALFORMED = [
    (lambda d: d[0]["chat_messages"][1]["content"][3].update(text=None), "[0].chat_messages[1].content[3].text: got null"),
    (lambda d: d[0]["chat_messages"][0].update(sender=5), "[0].chat_messages[0].sender: got 5"),
    (lambda d: d[1]["chat_messages"][2].update(created_at="yesterday"), '[1].chat_messages[2].created_at: "yesterday"'),
    (lambda d: d[1].pop("uuid"), "[1].uuid: is missing"),
    (lambda d: d[0].update(chat_messages={}), "[0].chat_messages: got an object"),
    (lambda d: d[0]["chat_messages"][0].update(attachments=["schema.sql"]), "[0].chat_messages[0].attachments[0]: got text"),
]


@pytest.mark.parametrize(("change", "named"), CLAUDE_MALFORMED)
def test_a_malformed_claude_export_names_the_json_path_and_writes_nothing(tmp_path: Path, change: Any,
                                                                         named: str) -> None:
    data = export(CLAUDE)
    change(data)
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    home = tmp_path / "home"
    result = runner.invoke(app, ["--home", str(home), "import", str(path), "--from", "claude"])
    assert isinstance(result.exception, SnapshotError) and named in str(result.exception), result.exception
    assert as_json(home, "history", "list") == []


def test_what_is_not_an_export_is_refused_naming_what_was_expected(tmp_path: Path) -> None:
    with Engram.from_settings(load_settings(home=tmp_path, embeddings={"provider": "none"})) as mem:
        other = tmp_path / "photos.zip"
        with zipfile.ZipFile(other, "w") as archive:
            archive.writestr("IMG_0001.txt", "not a photo")
        with pytest.raises(SnapshotError, match=r"photos\.zip holds no conversations\.json.*ChatGPT or Claude\.ai"):
            mem.import_from(other)
        with pytest.raises(SnapshotError, match=r"holds no conversations\.json"):
            mem.import_from(other, "chatgpt")
        broken = tmp_path / "export.zip"
        broken.write_bytes(b"PK\x03\x04 cut short")
        with pytest.raises(SnapshotError, match=r"export\.zip is not a ZIP archive"):
            mem.import_from(broken)
        with pytest.raises(SnapshotError, match=r"^\[0\]: holds chat_messages: a Claude\.ai export"):
            mem.import_from(CLAUDE / "conversations.json", "chatgpt")
        with pytest.raises(SnapshotError, match=r"^document: got an object"):
            mem.import_from('{"conversations": []}', "claude")
        assert mem.history.conversations() == []


def test_the_installed_command_imports_the_zip_and_names_a_malformed_place(tmp_path: Path) -> None:
    env = {**os.environ, "ENGRAM_EMBEDDINGS__PROVIDER": "none"}
    home = str(tmp_path / "home")
    source = zipped(CHATGPT, tmp_path / "chatgpt-export.zip")
    done = subprocess.run([ENGRAM, "--home", home, "import", str(source)], capture_output=True, text=True,
                          timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stdout.split())
    assert "history: 9 messages added, 0 already present" in said, said
    assert f"conversations: 2 of 2 gained messages {LISBON} Trip to Lisbon (+5) {DOUGH} Sourdough starter (+4)" in said
    assert "messages on other branches (3)" in " ".join(done.stderr.split())
    data = export(CHATGPT)
    _node(data, 3)["message"]["author"]["role"] = ["user"]
    bad = subprocess.run([ENGRAM, "--home", home, "import",
                          str(zipped(CHATGPT, tmp_path / "bad.zip", conversations=data))],
                         capture_output=True, text=True, timeout=300, env=env)
    assert bad.returncode == 2, bad.stderr
    assert f"{NODE}3.message.author.role: got [\"user\"]" in " ".join(bad.stderr.split())


SPLIT = FIXTURES / "chatgpt-export-split"


@pytest.mark.parametrize("form", ["zip", "folder", "files"])
def test_a_chatgpt_export_split_into_numbered_files_brings_every_conversation(tmp_path: Path, form: str) -> None:
    """ChatGPT's exports since early 2026 hold conversations-000.json, conversations-001.json, ...
    (each a JSON array of conversations) instead of one conversations.json: all are read, in order,
    as one export."""
    home = tmp_path / "home"
    if form == "files":  # a folder's files, as an HTTP client or the library sends them
        files = {p.name: p.read_text(encoding="utf-8") for p in SPLIT.iterdir()}
        with Engram.from_settings(load_settings(home=home, embeddings={"provider": "none"})) as mem:
            summary = mem.import_from(files)
            first = {"kind": summary.kind, "messages_imported": summary.messages_imported, "warnings": summary.warnings}
    else:
        source = zipped(SPLIT, tmp_path / "chatgpt-export.zip", inside="export/") if form == "zip" else SPLIT
        first = as_json(home, "import", str(source))
    assert (first["kind"], first["messages_imported"]) == ("chatgpt", 9), first
    warnings = "\n".join(first["warnings"])
    assert "3 conversations read" in warnings and "messages on other branches (3)" in warnings, warnings
    assert "only conversations-000.json to conversations-001.json (2 files) are read" in warnings, warnings
    assert "not imported: chat.html, user.json" in warnings, warnings
    assert [(m["role"], m["content"]) for m in shown(home, LISBON)] == LISBON_SHOWN
    assert [(m["role"], m["content"]) for m in shown(home, DOUGH)][2:] == [
        ("user", "How often should I feed it?"), ("assistant", "Twice a day while it's warm.")]
    if form != "files":
        again = as_json(home, "import", str(source))
        assert (again["messages_imported"], again["messages_skipped"]) == (0, 9), again


def test_a_malformed_shard_of_a_split_chatgpt_export_is_named_by_its_file(tmp_path: Path) -> None:
    shard = json.loads((SPLIT / "conversations-001.json").read_text(encoding="utf-8"))
    shard[0]["mapping"][shard[0]["current_node"]]["message"]["author"]["role"] = 5
    folder = tmp_path / "export"
    folder.mkdir()
    for path in SPLIT.iterdir():
        (folder / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "conversations-001.json").write_text(json.dumps(shard), encoding="utf-8")
    home = tmp_path / "home"
    result = runner.invoke(app, ["--home", str(home), "import", str(folder)])
    assert isinstance(result.exception, SnapshotError), result.output
    assert str(result.exception).startswith("conversations-001.json [0].mapping."), result.exception
    assert "author.role: got 5" in str(result.exception)
    assert as_json(home, "history", "list") == []  # the first shard, though sound, is not imported either


# Claude.ai's memory of the person, as its export's memories.json holds it: one object per account,
# the summary Claude.ai keeps (markdown under bold headings) and one per project.
CLAUDE_MEMORY = ("**Work context**\n\nSam is a data engineer moving the team's metrics from MongoDB to "
                 "PostgreSQL.\n\n**Personal context**\n\nHas a sister whose birthday is in March.")
PROJECT_MEMORY = "**Purpose & context**\n\nPlanning the metrics migration; prefers TimescaleDB."
CLAUDE_MEMORIES = [{"conversations_memory": CLAUDE_MEMORY,
                    "project_memories": {"0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d": PROJECT_MEMORY,
                                         "5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b": ""},
                    "account_uuid": "a0b1c2d3-e4f5-4a6b-8c7d-8e9f0a1b2c3d"}]


@pytest.mark.parametrize("form", ["zip", "folder", "file", "files"])
def test_a_claude_exports_memories_are_core_memories(tmp_path: Path, form: str) -> None:
    """Claude.ai's memory (``memories.json``, beside ``conversations.json``) is what it gives the
    model of the person in every conversation: each summary one core memory, byte for byte, in
    every form the export is imported from; a second import adds nothing."""
    folder = tmp_path / "export"
    folder.mkdir()
    for path in CLAUDE.iterdir():
        (folder / path.name).write_bytes(path.read_bytes())
    (folder / "memories.json").write_text(json.dumps(CLAUDE_MEMORIES, ensure_ascii=False), encoding="utf-8")
    home = tmp_path / "home"
    if form == "files":
        files = {p.name: p.read_text(encoding="utf-8") for p in folder.iterdir()}
        with Engram.from_settings(load_settings(home=home)) as mem:
            first = mem.import_from(files, "claude")
        imported, warnings = first.imported, first.warnings
    else:
        source = {"zip": lambda: zipped(folder, tmp_path / "data.zip", inside="data-2025-03-03-18-00-00/"),
                  "folder": lambda: folder, "file": lambda: folder / "conversations.json"}[form]()
        summary = as_json(home, "import", str(source))
        imported, warnings = summary["imported"], summary["warnings"]
        again = as_json(home, "import", str(source))
        assert (again["imported"], again["skipped"]) == (0, 2), again
    assert imported == 2
    by_content = {m["content"]: m for m in as_json(home, "list")}
    assert set(by_content) == {CLAUDE_MEMORY, PROJECT_MEMORY}
    person, project = by_content[CLAUDE_MEMORY], by_content[PROJECT_MEMORY]
    assert (person["category"], person["tags"]) == ("core", ["claude", "claude-memory"])
    assert person["metadata"] == {"claude": {"memory": "conversations_memory",
                                             "account": "a0b1c2d3-e4f5-4a6b-8c7d-8e9f0a1b2c3d"}}
    assert (project["tags"], project["metadata"]["claude"]["project"]) == (
        ["claude", "claude-memory", "project"], "0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d")
    assert not any("memories.json" in w and "not imported" in w and "read;" not in w for w in warnings), warnings
    if form != "file":
        assert any(w.startswith("only conversations.json and memories.json are read; the export's other files are "
                                "not imported: projects.json, users.json") for w in warnings), warnings


def test_a_malformed_claude_memories_file_is_named_and_nothing_is_written(tmp_path: Path) -> None:
    folder = tmp_path / "export"
    folder.mkdir()
    for path in CLAUDE.iterdir():
        (folder / path.name).write_bytes(path.read_bytes())
    bad = [{**CLAUDE_MEMORIES[0], "project_memories": {"p": ["not", "text"]}}]
    (folder / "memories.json").write_text(json.dumps(bad), encoding="utf-8")
    home = tmp_path / "home"
    result = runner.invoke(app, ["--home", str(home), "import", str(folder)])
    assert isinstance(result.exception, SnapshotError), result.exception
    assert "memories.json[0].project_memories.p: got a list" in str(result.exception), result.exception
    assert as_json(home, "history", "list") == [] and as_json(home, "list") == []


def _regenerated(current_node: Any, *, absent: bool = False) -> list[dict[str, Any]]:
    """One ChatGPT conversation as its export writes it: a question and two answers to it, the
    second regenerated later (a branch of its own); the older answer listed last in ``mapping``."""

    def node(node_id: str, parent: str | None, children: list[str], role: str | None, text: str = "",
             at: float | None = None) -> dict[str, Any]:
        message = None if role is None else {
            "id": node_id, "author": {"role": role, "name": None, "metadata": {}}, "create_time": at,
            "update_time": None, "content": {"content_type": "text", "parts": [text]}, "status": "finished_successfully",
            "end_turn": True, "weight": 1.0, "metadata": {}, "recipient": "all"}
        return {"id": node_id, "message": message, "parent": parent, "children": children}

    mapping = {
        "root": node("root", None, ["q"], None),
        "q": node("q", "root", ["a-old", "a-new"], "user", "Name a good first houseplant?", 1717000000.0),
        "a-new": node("a-new", "q", [], "assistant", "A pothos: it forgives missed waterings.", 1717000300.5),
        "a-old": node("a-old", "q", [], "assistant", "A cactus.", 1717000010.0),
    }
    conversation: dict[str, Any] = {"title": "Houseplants", "create_time": 1717000000.0, "update_time": 1717000300.5,
                                    "mapping": mapping, "moderation_results": [], "current_node": current_node,
                                    "conversation_id": "68000000-0000-8000-8000-0000000000aa",
                                    "id": "68000000-0000-8000-8000-0000000000aa"}
    if absent:
        del conversation["current_node"]
    return [conversation]


@pytest.mark.parametrize("absent", [False, True])
def test_a_conversation_without_current_node_imports_the_branch_last_written_to(tmp_path: Path, absent: bool) -> None:
    # Real exports can give current_node as null: refused before ("[0].current_node: is missing"),
    # so the whole export imported nothing. The branch ChatGPT shows is the one last written to.
    folder = tmp_path / "export"
    folder.mkdir()
    (folder / "conversations.json").write_text(json.dumps(_regenerated(None, absent=absent)), encoding="utf-8")
    (folder / "user.json").write_text("{}", encoding="utf-8")
    home = tmp_path / "home"
    first = as_json(home, "import", str(zipped(folder, tmp_path / "export.zip")))
    assert (first["kind"], first["messages_imported"]) == ("chatgpt", 2), first
    warnings = "\n".join(first["warnings"])
    assert "1 conversation without current_node (null or absent): its branch ending at the latest message" in warnings, warnings
    assert "messages on other branches (1)" in warnings, warnings
    key = "chatgpt:68000000-0000-8000-8000-0000000000aa"
    assert [(m["role"], m["content"]) for m in shown(home, key)] == [
        ("user", "Name a good first houseplant?"), ("assistant", "A pothos: it forgives missed waterings.")]
    again = as_json(home, "import", str(tmp_path / "export.zip"))
    assert (again["messages_imported"], again["messages_skipped"]) == (0, 2), again
    # A current_node given still decides, the older branch included.
    given = tmp_path / "given.json"
    given.write_text(json.dumps(_regenerated("a-old")), encoding="utf-8")
    other = tmp_path / "other"
    as_json(other, "import", str(given))
    assert [m["content"] for m in shown(other, key)] == ["Name a good first houseplant?", "A cactus."]
