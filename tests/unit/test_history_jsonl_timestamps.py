"""The JSONL history's ``timestamp``: written as Clawless writes it (JavaScript's ``toISOString``,
always three digits of milliseconds then ``Z``), while engram reads its own lines back at their
exact times (kept in the line's ``messages``), and lines written by earlier engram versions (with
microseconds, or no fraction when they were zero) still read. Real files, fresh stores reading them."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from engram.history.jsonl import JsonlHistoryStore
from engram.model import Role, make_message

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "import"
# Clawless's form: JavaScript's Date.prototype.toISOString().
CLAWLESS_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
KEY = "telegram:42"


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def test_clawless_own_lines_have_the_form_the_tests_check() -> None:
    # The pattern is Clawless's, not ours: every line of its real files matches it.
    for name in ("clawless", "clawless-home"):
        stamps = [row["timestamp"] for row in rows(FIXTURES / name / "conversation-history.jsonl")]
        assert stamps and all(CLAWLESS_TIME.fullmatch(stamp) for stamp in stamps), stamps


def test_a_written_line_has_clawless_timestamp_zero_milliseconds_included(tmp_path: Path) -> None:
    path = tmp_path / "conversation-history.jsonl"
    store = JsonlHistoryStore(path)
    store.append(KEY, make_message("user", "milliseconds", created_at=1770717309.318))
    store.append(KEY, make_message("user", "a whole second", created_at=1770717300.0))
    store.append(KEY, make_message("user", "finer than milliseconds", created_at=1770717300.1234567))
    # A joined answer rewrites its line (not an append): the rewritten line has the form too.
    store.append(KEY, make_message("assistant", "noted", created_at=1770717301.5))
    assert [row["timestamp"] for row in rows(path)] == [
        "2026-02-10T09:55:09.318Z", "2026-02-10T09:55:00.000Z", "2026-02-10T09:55:00.123Z"]


def test_a_line_added_to_clawless_own_file_has_its_timestamp_form(tmp_path: Path) -> None:
    # Clawless's code spells its lines user_message, ...: engram's new line is spelt so, timed so.
    path = tmp_path / "conversation-history.jsonl"
    shutil.copy(FIXTURES / "clawless-home" / "conversation-history.jsonl", path)
    store = JsonlHistoryStore(path, lock_path=tmp_path / "h.lock", summaries_path=tmp_path / "h.summaries.json")
    store.append("telegram:-1001987654321", make_message("user", "e amanhã?", created_at=1772600000.0))
    store.append("telegram:-1001987654321", make_message("assistant", "Nada marcado.", created_at=1772600002.25))
    new = rows(path)[-1]
    assert new["user_message"] == "e amanhã?" and new["bot_response"] == "Nada marcado."
    assert new["timestamp"] == "2026-03-04T04:53:20.000Z"
    assert all(CLAWLESS_TIME.fullmatch(row["timestamp"]) for row in rows(path))


def test_engram_reads_its_own_lines_back_at_their_exact_times(tmp_path: Path) -> None:
    # The line shows the time to the millisecond, as Clawless does; engram's exact time (finer
    # than that) is kept in the line's messages and is the one read back.
    path = tmp_path / "conversation-history.jsonl"
    times = [1770717309.3181234, 1770717309.9999999, 1770717310.0, 1770717311.0004]
    writer = JsonlHistoryStore(path)
    writer.append_many(KEY, [make_message("user", "q", created_at=times[0]),
                             make_message("assistant", "a", created_at=times[1])])
    writer.append(KEY, make_message("user", "q2", created_at=times[2]))
    writer.append(KEY, make_message("assistant", "a2", created_at=times[3]))
    assert [row["timestamp"] for row in rows(path)] == ["2026-02-10T09:55:09.318Z", "2026-02-10T09:55:10.000Z"]
    reader = JsonlHistoryStore(path)  # a fresh store: read from the file, not from the writer's cache
    assert [m.created_at for m in reader.get_all(KEY)] == times


def test_a_line_an_earlier_engram_wrote_still_reads_and_is_rewritten_in_clawless_form(tmp_path: Path) -> None:
    # Earlier engram versions wrote microseconds, or no fraction when they were zero; a line
    # without "messages" (as Clawless writes) is read at its timestamp, whatever its fraction.
    path = tmp_path / "conversation-history.jsonl"
    old = [
        {"userMessage": "first", "botResponse": "one", "chatId": "42", "platform": "telegram",
         "timestamp": "2026-02-10T09:55:09.318000Z",
         "messages": [{"role": "user", "content": "first", "created_at": 1770717309.318},
                      {"role": "assistant", "content": "one", "created_at": 1770717309.5}], "agent": "default"},
        {"userMessage": "second", "botResponse": "", "chatId": "42", "platform": "telegram",
         "timestamp": "2026-02-10T09:56:00Z",
         "messages": [{"role": "user", "content": "second", "created_at": 1770717360.0}], "agent": "default"},
        {"userMessage": "hand-made", "botResponse": "fine", "chatId": "7", "platform": "telegram",
         "timestamp": "2026-02-10T09:57:00.123456Z"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in old), encoding="utf-8")
    store = JsonlHistoryStore(path)
    assert [(m.content, m.created_at) for m in store.get_all(KEY)] == [
        ("first", 1770717309.318), ("one", 1770717309.5), ("second", 1770717360.0)]
    assert [(m.role, m.created_at) for m in store.get_all("telegram:7")] == [
        (Role.USER, 1770717420.123456), (Role.ASSISTANT, 1770717420.123456)]
    # An answer joins the old second line, which is rewritten: in Clawless's form, its times exact.
    store.append(KEY, make_message("assistant", "two", created_at=1770717361.75))
    written = rows(path)
    assert written[0] == old[0] and written[2] == old[2]  # lines not changed stay as they were
    assert written[1]["timestamp"] == "2026-02-10T09:56:00.000Z" and written[1]["botResponse"] == "two"
    assert [m.created_at for m in JsonlHistoryStore(path).get_all(KEY)] == [
        1770717309.318, 1770717309.5, 1770717360.0, 1770717361.75]
