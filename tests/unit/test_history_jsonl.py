"""JSONL history (Clawless): the line format both ways, caps, atomic FIFO rotation, bad lines."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest

from engram.engine import Engram
from engram.history.jsonl import JsonlHistoryStore
from engram.model import Role, make_message

KEY = "telegram:42:"


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def exchange(store: JsonlHistoryStore, key: str, n: int) -> None:
    store.append(key, make_message("user", f"question {n}", created_at=1_700_000_000.0 + n))
    store.append(key, make_message("assistant", f"answer {n}", created_at=1_700_000_000.5 + n))


def test_one_clawless_exchange_per_line(tmp_path: Path) -> None:
    store = JsonlHistoryStore(tmp_path / "h.jsonl")
    exchange(store, KEY, 1)
    exchange(store, "slack:C1:th", 2)
    first, second = lines(tmp_path / "h.jsonl")
    assert {k: first[k] for k in ("userMessage", "botResponse", "chatId", "platform")} == {
        "userMessage": "question 1", "botResponse": "answer 1", "chatId": "42", "platform": "telegram"}
    assert first["timestamp"] == "2023-11-14T22:13:21.000Z"
    assert second["chatId"] == "C1:th" and second["platform"] == "slack"


def test_reads_lines_written_by_clawless(tmp_path: Path) -> None:
    path = tmp_path / "conversation-history.jsonl"
    path.write_text(json.dumps({"userMessage": "hi there", "botResponse": "hello!", "chatId": "123",
                                "platform": "telegram", "timestamp": "2026-02-09T10:30:00.000Z"}) + "\n")
    store = JsonlHistoryStore(path)
    messages = store.get_all("telegram:123")
    assert [(m.role, m.content) for m in messages] == [(Role.USER, "hi there"), (Role.ASSISTANT, "hello!")]
    assert messages[0].created_at == 1770633000.0
    store.append("telegram:123", make_message("user", "next"))
    assert lines(path)[0]["userMessage"] == "hi there"  # the old line is untouched
    assert store.count("telegram:123") == 3


def test_a_file_saved_with_a_byte_order_mark_keeps_its_first_line(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # A history file saved by a Windows editor ("UTF-8 with BOM", CRLF) lost its first exchange:
    # the mark made line 1 no JSON, skipped with a warning at every read. `engram import` read it.
    path = tmp_path / "conversation-history.jsonl"
    first = json.dumps({"userMessage": "my dog is Rex", "botResponse": "nice", "chatId": "42", "platform": "telegram",
                        "timestamp": "2026-02-09T10:30:00.000Z"})
    path.write_bytes(("\ufeff" + first + "\r\n").encode("utf-8"))
    store = JsonlHistoryStore(path)
    with caplog.at_level(logging.WARNING):
        assert [m.content for m in store.get_all("telegram:42")] == ["my dog is Rex", "nice"]
        exchange(store, "telegram:42", 1)
        assert store.count("telegram:42") == 4
    assert caplog.records == []
    assert path.read_text("utf-8-sig").startswith(first)  # the line itself is kept as it was


def test_exchanges_another_program_appends_are_recalled_by_meaning_without_a_restart(tmp_path: Path) -> None:
    # Clawless and engram sharing conversation-history.jsonl: the lines Clawless appended while an
    # engram server ran were in its history but not recalled by meaning until engram started again.
    from engram.history.semantic import ExchangeIndex
    from engram.history.service import History
    from tests.unit.fakes import HashedBagOfWords

    path = tmp_path / "conversation-history.jsonl"
    clawless = [{"userMessage": "I live in Lyon", "botResponse": "Lovely city", "chatId": "42", "platform": "telegram",
                 "timestamp": "2026-02-10T08:15:00.000Z"},
                {"userMessage": "My dog is called Rex", "botResponse": "Great name", "chatId": "42",
                 "platform": "telegram", "timestamp": "2026-02-10T08:20:00.000Z"}]
    path.write_text(json.dumps(clawless[0]) + "\n", encoding="utf-8")
    store = JsonlHistoryStore(path)
    index = ExchangeIndex.open(tmp_path / "index.db", HashedBagOfWords())
    index.warm(store)  # as engram does when it opens
    history = History(store, semantic=index, trims=False)
    try:
        assert [e.user for e in history.semantic_recall("where do I live", top_k=5).exchanges] == ["I live in Lyon"]
        with path.open("a", encoding="utf-8") as handle:  # Clawless appends, engram still running
            handle.write(json.dumps(clawless[1]) + "\n")
        found = history.semantic_recall("what is my dog called", top_k=1).exchanges
        assert [e.user for e in found] == ["My dog is called Rex"]
        history.append("telegram:42", "user", "and my cat?")  # engram's own writes are indexed as ever
        history.append("telegram:42", "assistant", "Tom")
        assert index.count() == 3
    finally:
        history.close()
        index.close()


def test_fifo_rotation_keeps_the_newest_entries(tmp_path: Path) -> None:
    store = JsonlHistoryStore(tmp_path / "h.jsonl", max_entries=5)
    for n in range(12):
        exchange(store, KEY, n)
    rows = lines(tmp_path / "h.jsonl")
    assert len(rows) == 5
    assert [r["userMessage"] for r in rows] == [f"question {n}" for n in range(7, 12)]
    assert store.count(KEY) == 10
    assert not list(tmp_path.glob(".h.jsonl.*.tmp"))  # no temporary file left behind


def test_the_cap_is_per_agent_and_never_trims_another_agents_lines(tmp_path: Path) -> None:
    """Each agent keeps its newest max_entries lines; bob's traffic never pushes out alice's, nor
    a line no agent owns (unreadable)."""
    path = tmp_path / "h.jsonl"
    alice, bob = JsonlHistoryStore(path, max_entries=10, agent="alice"), JsonlHistoryStore(path, max_entries=10, agent="bob")
    exchange(alice, KEY, 0)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("not json at all\n")
    for n in range(1, 13):
        exchange(bob, KEY, n)
    assert [m.content for m in alice.get_all(KEY)] == ["question 0", "answer 0"]
    assert [m.content for m in bob.get_all(KEY)] == [f"{kind} {n}" for n in range(3, 13) for kind in ("question", "answer")]
    assert "not json at all" in path.read_text("utf-8")
    # A smaller cap in another process's settings trims only the writer's own lines.
    JsonlHistoryStore(path, max_entries=2, agent="alice").append(KEY, make_message("user", "alice again"))
    assert bob.count(KEY) == 20 and [m.content for m in alice.get_all(KEY)] == ["question 0", "answer 0", "alice again"]
    JsonlHistoryStore(path, max_entries=1, agent="alice").append(KEY, make_message("user", "alice last"))
    assert bob.count(KEY) == 20 and [m.content for m in alice.get_all(KEY)] == ["alice last"]


def test_one_agents_traffic_keeps_anothers_conversation_through_the_engine(tmp_path: Path) -> None:
    with Engram.from_settings(home=tmp_path, history={"backend": "jsonl", "max_entries": 10}) as engram:
        alice, bob = engram.for_agent("alice"), engram.for_agent("bob")
        alice.history.append("telegram:1", "user", "alice asks")
        alice.history.append("telegram:1", "assistant", "alice is answered")
        for n in range(12):
            bob.history.append("telegram:1", "user", f"bob asks {n}")
            bob.history.append("telegram:1", "assistant", f"bob is answered {n}")
        assert [m.content for m in alice.history.restore("telegram:1")] == ["alice asks", "alice is answered"]
        assert bob.history.count("telegram:1") == 20


def test_per_entry_character_cap(tmp_path: Path) -> None:
    store = JsonlHistoryStore(tmp_path / "h.jsonl", max_chars_per_entry=50)
    store.append(KEY, make_message("user", "x" * 500))
    stored = store.get_all(KEY)[0].content
    assert len(stored) == 50 and stored.endswith("…")
    assert len(lines(tmp_path / "h.jsonl")[0]["userMessage"]) == 50


def test_recap_is_capped_and_chronological(tmp_path: Path) -> None:
    store = JsonlHistoryStore(tmp_path / "h.jsonl", max_total_chars=300)
    for n in range(20):
        exchange(store, KEY, n)
    recap = store.recap(KEY)
    assert len(recap) <= 300
    assert recap.startswith("[Conversation recap]") and recap.endswith("[/Conversation recap]")
    assert "question 19" in recap and "question 0 " not in recap
    assert recap.index("question 18") < recap.index("question 19")


def test_corrupted_line_is_skipped_with_a_warning_and_kept(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "h.jsonl"
    store = JsonlHistoryStore(path)
    exchange(store, KEY, 1)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write('{"userMessage": "half a li\n')
        handle.write("not json at all\n")
        handle.write(json.dumps({"userMessage": "no chat id"}) + "\n")
    exchange(store, KEY, 2)
    with caplog.at_level(logging.WARNING, logger="engram.history.jsonl"):
        contents = [m.content for m in store.get_all(KEY)]
    assert contents == ["question 1", "answer 1", "question 2", "answer 2"]
    assert "line 2 is not a readable history entry" in caplog.text
    raw = path.read_text("utf-8")
    assert "not json at all" in raw and "half a li" in raw  # nothing already stored is dropped


def test_torn_last_line_does_not_swallow_the_next_append(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    store = JsonlHistoryStore(path)
    exchange(store, KEY, 1)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write('{"userMessage": "crash mid-wri')  # no newline: a crash during an append
    store.append(KEY, make_message("user", "after the crash"))
    assert [m.content for m in store.get_all(KEY)][-1] == "after the crash"


def test_a_crash_during_rotation_leaves_the_old_file_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "h.jsonl"
    store = JsonlHistoryStore(path, max_entries=3)
    for n in range(3):
        exchange(store, KEY, n)
    before = path.read_bytes()

    def crash(*_: object) -> None:
        raise OSError("disk pulled out")

    monkeypatch.setattr(os, "replace", crash)  # the rename is the commit point of a rotation
    with pytest.raises(Exception, match="disk pulled out"):
        exchange(store, KEY, 3)
    assert path.read_bytes() == before
    assert not list(tmp_path.glob(".h.jsonl.*.tmp"))
    monkeypatch.undo()
    exchange(store, KEY, 4)
    assert [r["userMessage"] for r in lines(path)] == ["question 1", "question 2", "question 4"]


BATCHES = {
    # One new exchange: appended to the file in one write.
    "one exchange": [make_message("user", "q", created_at=10.0), make_message("assistant", "a", created_at=11.0)],
    # Several exchanges: a whole new file renamed over the old one.
    "several exchanges": [make_message("user", "q1", created_at=10.0), make_message("assistant", "a1", created_at=11.0),
                          make_message("user", "q2", created_at=12.0), make_message("assistant", "a2", created_at=13.0)],
}


@pytest.mark.parametrize("shape", list(BATCHES))
def test_a_batch_whose_write_fails_part_way_leaves_the_file_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shape: str
) -> None:
    from engram.errors import StorageError
    from engram.history import jsonl

    path = tmp_path / "h.jsonl"
    store = JsonlHistoryStore(path)
    exchange(store, KEY, 1)
    before = path.read_bytes()

    def disk_full(fd: int, data: bytes) -> None:
        os.write(fd, data[: len(data) // 2])  # half of it reaches the file, then the disk is full
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(jsonl, "_write_all", disk_full)
    with pytest.raises(StorageError, match="No space left"):
        store.append_many(KEY, BATCHES[shape])
    assert path.read_bytes() == before  # the half written was cut back off, or never renamed in
    assert not list(tmp_path.glob(".h.jsonl.*.tmp"))
    monkeypatch.undo()
    store.append_many(KEY, BATCHES[shape])
    assert store.get_all(KEY)[2:] == BATCHES[shape]


def test_a_batch_of_several_exchanges_is_never_appended_piecewise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A crash half-way through appending several lines would leave the first ones whole, a part
    # of the batch; so such a batch is one rename: a crash before it leaves the old file whole.
    path = tmp_path / "h.jsonl"
    store = JsonlHistoryStore(path)
    exchange(store, KEY, 1)
    before = path.read_bytes()

    def crash(*_: object) -> None:
        raise OSError("power lost")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(Exception, match="power lost"):
        store.append_many(KEY, BATCHES["several exchanges"])
    assert path.read_bytes() == before


def test_summaries_live_beside_the_file(tmp_path: Path) -> None:
    store = JsonlHistoryStore(tmp_path / "h.jsonl")
    store.set_summary(KEY, "we talked about trains")
    data = json.loads((tmp_path / "h.jsonl.summaries.json").read_text("utf-8"))
    assert data[KEY]["summary"] == "we talked about trains"


def test_caps_must_be_positive(tmp_path: Path) -> None:
    from engram.errors import ValidationError

    with pytest.raises(ValidationError) as info:
        JsonlHistoryStore(tmp_path / "h.jsonl", max_entries=0)
    assert info.value.field == "max_entries"


def test_without_flock_as_on_windows_it_imports_and_threads_still_take_turns(tmp_path: Path) -> None:
    """Windows has no ``fcntl``: the store must still import (it did not) and keep one process's
    threads from interleaving their rewrites."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(f"""
        import sys, threading
        sys.modules["fcntl"] = None  # as on Windows: importing it fails
        from engram.history.jsonl import JsonlHistoryStore
        from engram.model import make_message
        store = JsonlHistoryStore({str(tmp_path / "history.jsonl")!r})
        def talk(n):
            for i in range(20):
                store.append(f"cli:t{{n}}", make_message("user", f"question {{n}}.{{i}}"))
                store.append(f"cli:t{{n}}", make_message("assistant", f"answer {{n}}.{{i}}"))
        threads = [threading.Thread(target=talk, args=(n,)) for n in range(4)]
        [t.start() for t in threads]
        [t.join() for t in threads]
        print(sorted(store.count(f"cli:t{{n}}") for n in range(4)))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[40, 40, 40, 40]"
    assert not (tmp_path / "history.jsonl.lock").exists()


CLAWLESS_LINE = ('{"userMessage": "hi", "botResponse": "hello", "chatId": "1", "platform": "telegram", '
                 '"timestamp": "2025-01-01T00:00:00Z"}\n')


def test_reading_a_clawless_history_creates_nothing_in_its_folder(tmp_path: Path) -> None:
    # Reading took the write lock, creating `<file>.lock` (and a missing folder) in the user's
    # ~/.clawless; only a write may create files there.
    folder = tmp_path / "clawless"
    folder.mkdir()
    (folder / "conversation-history.jsonl").write_text(CLAWLESS_LINE)
    store = JsonlHistoryStore(folder / "conversation-history.jsonl")
    [key] = store.conversations()  # the line's platform:chatId
    assert key.startswith("telegram:1") and [m.content for m in store.get_all(key)] == ["hi", "hello"]
    assert store.get_summary("telegram:1") == "" and store.count("telegram:1") == 2
    assert sorted(p.name for p in folder.iterdir()) == ["conversation-history.jsonl"]
    absent = JsonlHistoryStore(tmp_path / "not-yet" / "conversation-history.jsonl")
    assert absent.conversations() == [] and absent.get_all("telegram:1") == []
    assert not (tmp_path / "not-yet").exists()
    # A write still takes the lock, and reads take it from then on.
    store.append("telegram:1", make_message(Role.USER, "again"))
    assert (folder / "conversation-history.jsonl.lock").exists()
    assert [m.content for m in store.get_all("telegram:1")] == ["hi", "hello", "again"]


def test_engram_history_list_and_show_leave_a_clawless_folder_as_it_was(isolated_home: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.unit.test_cli import engram as cli

    folder = isolated_home.parent / "clawless"
    folder.mkdir()
    (folder / "conversation-history.jsonl").write_text(CLAWLESS_LINE)
    for name, value in (("ENGRAM_HISTORY__BACKEND", "jsonl"), ("ENGRAM_EMBEDDINGS__PROVIDER", "none"),
                        ("ENGRAM_HISTORY__PATH", str(folder / "conversation-history.jsonl"))):
        monkeypatch.setenv(name, value)
    listed = cli(isolated_home, "history", "list")
    assert listed.returncode == 0 and "telegram:1" in listed.stdout, listed.stderr
    shown = cli(isolated_home, "history", "show", "telegram:1")
    assert shown.returncode == 0 and "hello" in shown.stdout, shown.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["conversation-history.jsonl"]
