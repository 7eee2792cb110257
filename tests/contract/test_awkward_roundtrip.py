"""Each named awkward content (tests/awkward_contents.py) round-trips byte for byte through the
library on every file backend: remember, then get, list, recall, an update's versions, a snapshot
imported into a fresh home, the conversation history (message, metadata, tool-call arguments,
summary) and an encrypted store, each read again after reopening; and through the memory folder
(markdown and YAML): the sync that follows the write changes nothing, and a fresh database reading
the folder holds the same memory once. Text no store can hold is refused naming the field, on
every history backend alike (the history contract's summary test), and nothing stored changes. PostgreSQL: tests/postgres/
test_awkward_roundtrip.py; HTTP, MCP and the CLI: tests/interfaces/test_awkward_roundtrip.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engram.engine import Engram
from engram.errors import ValidationError
from engram.files.sync import FileSync
from engram.model import ToolCall, parse_tags
from tests.awkward_contents import AWKWARD, KEYS, MAX_CHARS, ONE_MB_LINE, TAGS
from tests.fuzz_inputs import UNSTORABLE

CONTENTS = {**AWKWARD, "one mb line": ONE_MB_LINE}
NO_FILES: dict[str, Any] = {"files": {"enabled": False}, "max_content_chars": MAX_CHARS}


def check_library(engram: Engram, text: str) -> str:
    """Store ``text`` (content, a metadata value) and read it back every way the library offers;
    returns the snapshot exported."""
    engram.remember("kept", key="kept")
    stored = engram.remember(text, key="k1", tags=["t"], metadata={"v": text}).memory
    assert stored.content == text
    for memory in (engram.get("k1"), engram.get(stored.id), engram.get_by_key("k1")):
        assert (memory.content, memory.metadata) == (text, {"v": text})
    assert {m.key: m.content for m in engram.list()} == {"kept": "kept", "k1": text}
    for hit in engram.recall(text[:2000]):  # whatever ranks, no hit's content is changed
        assert hit.memory.content == {"kept": "kept", "k1": text}[hit.memory.key]
    engram.update("k1", content="changed")
    assert [v.content for v in engram.versions("k1")] == [text]
    engram.update("k1", content=text)
    return engram.export_snapshot()


def check_history(engram: Engram, text: str) -> None:
    engram.history.append("chat:1", "user", text, metadata={"v": text})
    engram.history.append("chat:1", "assistant", "", tool_calls=[ToolCall("c1", "f", json.dumps({"a": text}))])
    engram.history.set_summary("chat:1", text)


def read_history(engram: Engram, text: str) -> None:
    said, called = engram.history.all("chat:1")
    assert (said.content, dict(said.metadata)) == (text, {"v": text})
    assert json.loads(called.tool_calls[0].arguments) == {"a": text}
    assert engram.history.summary("chat:1") == text


@pytest.mark.parametrize("name", list(CONTENTS))
@pytest.mark.parametrize("backend", ["sqlite", "jsonfile"])
def test_library_round_trip(tmp_path: Path, backend: str, name: str) -> None:
    text = CONTENTS[name]
    # JSONL keeps max_chars_per_entry of each message (2000 by default, as Clawless does): raised here.
    history = {"backend": "sqlite"} if backend == "sqlite" else {"backend": "jsonl", "max_chars_per_entry": 2 * MAX_CHARS}
    settings = {**NO_FILES, "backend": backend, "history": history}
    with Engram.from_settings(home=tmp_path / "home", **settings) as engram:
        snapshot = check_library(engram, text)
        check_history(engram, text)
    with Engram.from_settings(home=tmp_path / "home", **settings) as reopened:
        assert (reopened.get("k1").content, reopened.get("k1").metadata) == (text, {"v": text})
        read_history(reopened, text)
    with Engram.from_settings(home=tmp_path / "fresh", **settings) as fresh:
        fresh.import_snapshot(snapshot)
        assert (fresh.get("k1").content, fresh.get("k1").metadata) == (text, {"v": text})


@pytest.mark.parametrize("name", list(CONTENTS))
def test_encrypted_round_trip(tmp_path: Path, name: str) -> None:
    text = CONTENTS[name]
    settings = {"privacy": {"encryption_key": "correct horse"}, "max_content_chars": MAX_CHARS}
    with Engram.from_settings(home=tmp_path, **settings) as engram:
        check_library(engram, text)
        check_history(engram, text)
    with Engram.from_settings(home=tmp_path, **settings) as reopened:
        assert reopened.get("k1").content == text
        read_history(reopened, text)


@pytest.mark.parametrize("name", list(CONTENTS))
@pytest.mark.parametrize("fmt", ["markdown", "yaml"])
def test_memory_folder_round_trip(tmp_path: Path, fmt: str, name: str) -> None:
    text, folder = CONTENTS[name], tmp_path / "memory"
    with Engram.from_settings(home=tmp_path / "home", **NO_FILES) as engram:
        live = FileSync(engram, folder, format=fmt)
        live.attach()
        stored = engram.remember(text, key="k1", metadata={"v": text}).memory
        again = live.sync()
        assert again.problems == [] and not again.changed, again  # it reads back what it wrote
        assert engram.count() == 1 and engram.get("k1").content == text
        live.detach()
    with Engram.from_settings(home=tmp_path / "fresh", **NO_FILES) as fresh:
        report = FileSync(fresh, folder, format=fmt).sync()
        assert report.problems == [] and report.db_created == 1, report
        back = fresh.get("k1")
        assert (back.id, back.content, back.metadata) == (stored.id, text, {"v": text})
        assert not FileSync(fresh, folder, format=fmt).sync().changed  # and a second pass makes no duplicate
        assert fresh.count() == 1


@pytest.mark.parametrize("fmt", ["markdown", "yaml"])
def test_odd_keys_and_tags_round_trip_through_folder_and_snapshot(tmp_path: Path, fmt: str) -> None:
    folder, want = tmp_path / "memory", {}
    with Engram.from_settings(home=tmp_path / "home", **NO_FILES) as engram:
        live = FileSync(engram, folder, format=fmt)
        live.attach()
        for i, key in enumerate(KEYS.values()):
            want[engram.remember(f"keyed {i}", key=key).memory.id] = (key, (), f"keyed {i}")
        for i, tag in enumerate(TAGS.values()):
            tags = parse_tags([tag, "plain"])
            want[engram.remember(f"tagged {i}", key=f"tagged-{i}", tags=[tag, "plain"]).memory.id] = (
                f"tagged-{i}", tags, f"tagged {i}")
        again = live.sync()
        assert again.problems == [] and not again.changed, again
        live.detach()
        snapshot = engram.export_snapshot()
    with Engram.from_settings(home=tmp_path / "fresh", **NO_FILES) as fresh:
        assert FileSync(fresh, folder, format=fmt).sync().problems == []
        assert {m.id: (m.key, m.tags, m.content) for m in fresh.list(limit=100)} == want
    with Engram.from_settings(home=tmp_path / "imported", **NO_FILES) as imported:
        imported.import_snapshot(snapshot)
        assert {m.id: (m.key, m.tags, m.content) for m in imported.list(limit=100)} == want
        assert all(imported.get_by_key(key).id == mid for mid, (key, _, _) in want.items())


@pytest.mark.parametrize("text", list(UNSTORABLE.values()), ids=list(UNSTORABLE))
def test_history_summary_refused_through_the_library(tmp_path: Path, text: str) -> None:
    with Engram.from_settings(home=tmp_path, files={"enabled": False}) as engram:
        engram.history.set_summary("chat:1", "kept summary")
        with pytest.raises(ValidationError) as raised:
            engram.history.set_summary("chat:1", text)
        assert raised.value.field == "summary"
        assert engram.history.summary("chat:1") == "kept summary"
