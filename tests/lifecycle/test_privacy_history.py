"""``privacy.pii`` on every path that writes conversation history, on engram's own imports and on
the summaries the lifecycle job writes.

Each test runs the real engine on a real SQLite file (history, its full-text and semantic index in
the same file) and reads the file's bytes, its write-ahead log included, for the values."""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path

import pytest

from engram.engine import Engram
from engram.history.compaction import MAX_SUMMARY_CHARS
from engram.model import Message
from engram.privacy import PiiPolicy

EMAIL, CARD, KEY, PHONE = "ops@example.com", "4111 1111 1111 1111", "sk-ant-" + "a1B2c3D4e5F6g7H8i9J0k1L2", "+44 20 7946 0958"
VALUES = (EMAIL, CARD, KEY, PHONE, "example.com", "4111 1111", "7946 0958", "a1B2c3D4e5F6")


def raw_bytes(db: Path) -> bytes:
    """The database file as it is on disk, with its write-ahead log (where a fresh commit sits)."""
    wal = Path(str(db) + "-wal")
    return db.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


def assert_absent(db: Path) -> None:
    data = raw_bytes(db)
    found = [value for value in VALUES if value.encode() in data]
    assert not found, f"{found} reached {db.name}"


@pytest.fixture
def redacting(tmp_path: Path):
    db = tmp_path / "memory.db"
    engram = Engram.from_settings(home=tmp_path, path=db, privacy={"pii": "redact"})
    yield engram, db
    engram.close()


def test_redact_keeps_pii_out_of_every_history_write(redacting) -> None:
    engram, db = redacting
    history = engram.history
    calls = [{"id": "c1", "name": "send_mail", "arguments": json.dumps({"to": EMAIL, "note": "line\nbreak"})}]
    history.append("web:1", "user", f"my card is {CARD}, mail me at {EMAIL}", metadata={"phone": PHONE})
    history.append("web:1", "assistant", "", tool_calls=calls)
    history.append("web:1", "tool", f"sent, key {KEY}", tool_call_id="c1")
    history.append_many("web:1", [{"role": "assistant", "content": f"done: {EMAIL}"}])
    history.add("web:2", Message(history.all("web:1")[0].role, f"again {EMAIL}"))
    history.set_summary("web:1", f"the user gave {EMAIL}")
    stored = history.all("web:1")
    assert stored[0].content == "my card is [REDACTED:card], mail me at [REDACTED:email]"
    assert stored[0].metadata == {"phone": "[REDACTED:phone]"}
    # The arguments stay JSON (the escaped newline kept): only the value is replaced.
    assert json.loads(stored[1].tool_calls[0].arguments) == {"to": "[REDACTED:email]", "note": "line\nbreak"}
    assert stored[2].content == "sent, key [REDACTED:api_key]" and stored[3].content == "done: [REDACTED:email]"
    assert history.all("web:2")[0].content == "again [REDACTED:email]"
    assert history.summary("web:1") == "the user gave [REDACTED:email]"
    # The exchanges the answers ended were embedded and indexed as stored.
    assert {e.user for e in history.semantic_recall("card").exchanges} == {stored[0].content}
    assert_absent(db)


def test_redacted_tool_call_arguments_keep_the_rest_of_their_json_byte_for_byte(redacting) -> None:
    """Review: the arguments were read and written again, so 1e400 became ``Infinity`` (no JSON),
    a long number lost digits, a repeated name was dropped and a name holding PII stayed in clear."""
    engram, db = redacting
    arguments = f'{{"to": "mail {EMAIL} now",  "n": 1e400, "x": 1.00000000000000000001, "{EMAIL}": 1, "q": "a\\"b", "n": 2}}'
    engram.history.append("web:1", "assistant", "", tool_calls=[{"id": "c1", "name": "send", "arguments": arguments}])
    stored = engram.history.all("web:1")[0].tool_calls[0].arguments
    assert stored == arguments.replace(EMAIL, "[REDACTED:email]")
    json.loads(stored)  # still JSON
    assert_absent(db)


def test_redact_screens_a_compaction_summary(redacting) -> None:
    engram, db = redacting

    class Echoing:  # a model's summary may quote what it read (stored before redact was set)
        def summarize(self, messages: Sequence[Message]) -> str:
            return f"the user's address is {EMAIL}"

    for n in range(8):
        engram.history.append("web:1", "user", f"question {n}")
        engram.history.append("web:1", "assistant", f"answer {n}")
    result = engram.history.compact("web:1", summarizer=Echoing(), force=True)
    assert result.compacted and result.summary == "the user's address is [REDACTED:email]"
    assert engram.history.summary("web:1") == "the user's address is [REDACTED:email]"
    assert_absent(db)


def vacuumed_bytes(db: Path) -> bytes:
    """The file's bytes once SQLite has rewritten it with only what it holds now: a value replaced
    (a summary stored before ``redact`` was set) otherwise lingers in a free page."""
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("VACUUM")
    return raw_bytes(db)


def test_the_count_summary_is_screened_when_it_copies_a_summary_stored_before_redact(tmp_path: Path, caplog) -> None:
    db = tmp_path / "memory.db"
    with Engram.from_settings(home=tmp_path, path=db) as warned:  # warn: the summary is kept as set
        warned.history.set_summary("web:1", f"the admin is {EMAIL}")
        for n in range(8):
            warned.history.append("web:1", "user", f"question {n}")
            warned.history.append("web:1", "assistant", f"answer {n}")
    with Engram.from_settings(home=tmp_path, path=db, privacy={"pii": "redact"}) as engram:
        with caplog.at_level(logging.INFO, logger="engram.history"):
            result = engram.history.compact("web:1", force=True)  # no summariser: the count summary
        assert result.compacted and result.summarizer == "count"
        assert result.summary.startswith("the admin is [REDACTED:email]\n[Conversation history compacted.")
        assert engram.history.summary("web:1") == result.summary
        assert "summary: redacted possible PII" in caplog.text and EMAIL not in caplog.text
    assert EMAIL.encode() not in vacuumed_bytes(db)



# A marker is longer than the shortest address it replaces (``a@b.io``: 6 characters, 16 once
# redacted), so a summary made to fit MAX_SUMMARY_CHARS no longer fits once screened: it is cut
# again, not stored past the bound (nor, past the store's limit, refused and the compaction lost).
SHORT_EMAILS = " ".join(["a@b.io"] * 1100)  # 7,699 characters, 17,599 once redacted


def test_a_count_summary_that_redaction_grows_is_cut_to_fit_keeping_its_counts(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    with Engram.from_settings(home=tmp_path, path=db) as warned:  # warn: the summary is kept as set
        warned.history.set_summary("web:1", SHORT_EMAILS)
        for n in range(8):
            warned.history.append("web:1", "user", f"question {n}")
            warned.history.append("web:1", "assistant", f"answer {n}")
    with Engram.from_settings(home=tmp_path, path=db, privacy={"pii": "redact"}) as engram:
        result = engram.history.compact("web:1", force=True)
        stored = engram.history.summary("web:1")
        assert result.compacted and result.summarizer == "count" and stored == result.summary
        assert len(stored) == MAX_SUMMARY_CHARS and "@" not in stored and "[REDACTED:email]" in stored
        # The end is kept: the counts line the next compaction adds to.
        assert stored.endswith("[REDACTED:email]\n[Conversation history compacted. Previous discussion covered: "
                               "3 user messages, 3 assistant responses, 0 tool calls]"), stored[-200:]


def test_a_model_summary_that_redaction_grows_is_cut_to_fit_keeping_its_beginning(redacting) -> None:
    engram, db = redacting

    class Quoting:  # a model's summary may quote what it read (stored before redact was set)
        def summarize(self, messages: Sequence[Message]) -> str:
            return f"The user listed their addresses: {SHORT_EMAILS}"

    for n in range(8):
        engram.history.append("web:1", "user", f"question {n}")
        engram.history.append("web:1", "assistant", f"answer {n}")
    result = engram.history.compact("web:1", summarizer=Quoting(), force=True)
    stored = engram.history.summary("web:1")
    assert result.compacted and result.summarizer == "llm" and stored == result.summary
    assert len(stored) == MAX_SUMMARY_CHARS and "@" not in stored
    assert stored.startswith("The user listed their addresses: [REDACTED:email] [REDACTED:email]")
    assert len(engram.history.all("web:1")) == 10  # the compaction happened: what it discarded is gone

def test_warn_logs_the_kinds_in_a_count_summary(tmp_path: Path, caplog) -> None:
    with Engram.from_settings(home=tmp_path, path=tmp_path / "memory.db") as engram:
        engram.history.set_summary("web:1", f"call {PHONE}")
        for n in range(8):
            engram.history.append("web:1", "user", f"question {n}")
            engram.history.append("web:1", "assistant", f"answer {n}")
        with caplog.at_level(logging.WARNING, logger="engram.history"):
            result = engram.history.compact("web:1", force=True)
        assert result.summary.startswith(f"call {PHONE}\n")  # kept as it was: warn stores it
        assert "summary: possible PII stored: phone number (1)" in caplog.text and PHONE not in caplog.text


def test_warn_reports_the_kinds_of_a_history_message_and_stores_it(tmp_path: Path, caplog) -> None:
    with Engram.from_settings(home=tmp_path, path=tmp_path / "memory.db") as engram:  # warn is the default
        done = engram.history.append_reported("web:1", "user", f"mail me at {EMAIL}")
        assert done.stored and done.messages[0].content == f"mail me at {EMAIL}"
        (warning,) = done.warnings
        assert "e-mail address (1)" in warning and EMAIL not in warning
        many = engram.history.append_many_reported("web:1", [{"role": "assistant", "content": "ok"},
                                                             {"role": "user", "content": f"card {CARD}"}])
        assert [w.split(": ")[0] for w in many.warnings] == ["messages[1]"] and "card number (1)" in many.warnings[0]
        assert engram.history.set_summary("web:1", f"about {EMAIL}") == (warning,)
        with caplog.at_level(logging.WARNING, logger="engram.history"):
            engram.history.append("web:1", "user", f"again {PHONE}")
        assert "phone number (1)" in caplog.text and PHONE not in caplog.text
        assert engram.history.all("web:1")[-1].content == f"again {PHONE}"


def test_an_import_into_history_is_redacted_and_found_again(redacting, tmp_path: Path) -> None:
    engram, db = redacting
    source = tmp_path / "clawless"
    source.mkdir()
    line = {"userMessage": f"write to {EMAIL}", "botResponse": f"Your card {CARD} is on file.", "chatId": "7",
            "platform": "telegram", "timestamp": "2026-02-10T08:15:00.000Z"}
    (source / "conversation-history.jsonl").write_text(json.dumps(line) + "\n")
    first = engram.import_from(source, "clawless")
    assert first.messages_imported == 2
    assert [m.content for m in engram.history.all("telegram:7")] == ["write to [REDACTED:email]",
                                                                    "Your card [REDACTED:card] is on file."]
    again = engram.import_from(source, "clawless")  # the redacted messages are known as the source's
    assert (again.messages_imported, again.messages_skipped) == (0, 2)
    assert_absent(db)


def test_engram_snapshot_import_is_screened_and_round_trips_redacted_content(redacting, tmp_path: Path) -> None:
    engram, db = redacting
    document = json.dumps({"memories": [{"id": "m1", "content": f"admin {EMAIL}; password: {KEY}",
                                         "search_context": f"call {PHONE}", "metadata": {"card": CARD}}]})
    result = engram.import_snapshot(document)
    assert result.imported == 1 and result.warnings[0].startswith("memories[0].content: redacted")
    (memory,) = engram.list()
    assert memory.content == "admin [REDACTED:email]; password: [REDACTED:api_key]"
    assert memory.metadata == {"card": "[REDACTED:card]"} and memory.search_context == "call [REDACTED:phone]"
    assert "example" not in memory.key
    assert_absent(db)
    # engram's own snapshot of content stored redacted comes back byte for byte, with nothing to report.
    exported = engram.export_snapshot()
    other = tmp_path / "other"
    with Engram.from_settings(home=other, path=other / "memory.db", privacy={"pii": "redact"}) as second:
        back = second.import_snapshot(exported)
        again = json.loads(second.export_snapshot())["memories"]
        assert back.warnings == () and again == json.loads(exported)["memories"]


def test_redaction_is_idempotent() -> None:
    policy = PiiPolicy("redact")
    once, _ = policy.screen(f"password: {KEY} and {EMAIL}")
    assert once == "password: [REDACTED:api_key] and [REDACTED:email]"
    assert policy.screen(once) == (once, [])


def test_a_finding_beside_another_is_redacted_at_once_and_comes_back_unchanged(tmp_path: Path) -> None:
    # The card's digits were read on from the phone's ("123-4567 4111 ..."), failed the card check
    # and were skipped: stored in clear, and redacted only by a later re-import of the export.
    text = f"call (555) 123-4567 {CARD} or +44 20 7946 0958 +44 20 7946 0959"
    assert PiiPolicy("warn").screen(text) == (text, ["possible PII stored: phone number (3), card number (1); "
                                                     'set privacy.pii = "redact" to mask it'])
    home = tmp_path / "home"
    with Engram.from_settings(home=home, path=home / "memory.db", privacy={"pii": "redact"}) as engram:
        stored = engram.remember(text, key="contact").memory.content
        assert stored == "call [REDACTED:phone] [REDACTED:card] or [REDACTED:phone] [REDACTED:phone]"
        exported = engram.export_snapshot()
    other = tmp_path / "other"
    with Engram.from_settings(home=other, path=other / "memory.db", privacy={"pii": "redact"}) as second:
        assert second.import_snapshot(exported).warnings == ()
        assert [m.content for m in second.list()] == [stored]


def test_a_memory_folder_written_under_warn_is_redacted_on_import(redacting, tmp_path: Path) -> None:
    from engram.files.export import export_folder

    engram, db = redacting
    with Engram.from_settings(home=tmp_path / "warned", path=tmp_path / "warned" / "memory.db") as warned:
        warned.remember(f"the admin is {EMAIL}", key="admin")  # kept as said under warn
        warned.remember("nothing to hide here", key="plain")
        export_folder(warned.visible_memories(), tmp_path / "folder", format="markdown")
    summary = engram.import_from(tmp_path / "folder")
    assert summary.imported == 2
    assert {m.key: m.content for m in engram.list()} == {"admin": "the admin is [REDACTED:email]",
                                                        "plain": "nothing to hide here"}
    (warning,) = summary.warnings  # named by its file and line, never by its value
    assert "warning: redacted possible PII" in warning and ".md:" in warning and EMAIL not in warning
    assert_absent(db)


def test_a_folder_entry_that_redaction_makes_too_long_is_named_by_its_file_and_line(tmp_path: Path) -> None:
    from engram.files.export import export_folder

    fits = "reach me at a@b.io " + "x" * 41  # 60 characters; "[REDACTED:email]" is longer than "a@b.io"
    with Engram.from_settings(home=tmp_path / "warned", path=tmp_path / "warned" / "memory.db", max_content_chars=60) as warned:
        warned.remember(fits, key="contact")
        warned.remember("nothing to hide here", key="plain")
        export_folder(warned.visible_memories(), tmp_path / "folder", format="markdown")
    db = tmp_path / "memory.db"
    with Engram.from_settings(home=tmp_path, path=db, privacy={"pii": "redact"}, max_content_chars=60) as engram:
        summary = engram.import_from(tmp_path / "folder")
        assert summary.imported == 1 and [m.key for m in engram.list()] == ["plain"]  # the rest is imported
        (problem,) = summary.warnings
        where, _, said = problem.partition(": ")
        path, line = where.rsplit(":", 1)
        # The file and line the user can open, where the entry's text is.
        text_lines = (tmp_path / "folder" / path).read_text("utf-8").splitlines()
        assert fits in text_lines[int(line) - 1]
        assert said == "entry not imported: once PII was redacted, content: is 70 characters; the maximum is 60 " \
                       "(allowed: 1-60 characters)"
    assert b"a@b.io" not in raw_bytes(db)


class Quoting:  # a model's summary may repeat what it read, or what its sources were stored with
    def summarize(self, texts: Sequence[str]) -> str:
        return f"{len(texts)} notes; the admin is {EMAIL}"


def _yesterday() -> float:
    return (int(time.time() // 86400) - 1) * 86400.0


def test_redact_screens_a_period_summary_written_by_a_model(redacting) -> None:
    from engram.lifecycle import summaries
    from engram.lifecycle.settings import SummarySettings

    engram, db = redacting
    engram.remember("the staging database moved", created_at=_yesterday() + 3600)
    report = summaries.run(engram, SummarySettings(weekly=False), now=time.time(), summarizer=Quoting())
    assert report.changed == 1
    (summary,) = summaries.list_summaries(engram)
    assert summary.content.endswith("1 notes; the admin is [REDACTED:email]")
    assert_absent(db)


def test_redact_screens_an_extractive_summary_of_memories_stored_before_redact(tmp_path: Path, caplog) -> None:
    from engram.lifecycle import summaries
    from engram.lifecycle.settings import SummarySettings

    db = tmp_path / "memory.db"
    with Engram.from_settings(home=tmp_path, path=db) as warned:  # warn: kept as said
        warned.remember(f"the admin is {EMAIL}", created_at=_yesterday() + 3600)
    with Engram.from_settings(home=tmp_path, path=db, privacy={"pii": "redact"}) as engram:
        with caplog.at_level(logging.INFO, logger="engram.lifecycle.summaries"):
            summaries.run(engram, SummarySettings(weekly=False), now=time.time())  # no model: extractive
        (summary,) = summaries.list_summaries(engram)
        assert summary.content.endswith("\n- the admin is [REDACTED:email]")
        assert "redacted possible PII before storing: e-mail address (1)" in caplog.text and EMAIL not in caplog.text
    # Read from the file itself: the source keeps what warn stored, the summary's row holds none of it.
    with closing(sqlite3.connect(db)) as conn:
        rows = dict(conn.execute("SELECT type, content FROM memories").fetchall())
    assert EMAIL in rows["learned"] and EMAIL not in rows["summary"] and "[REDACTED:email]" in rows["summary"]


def test_the_chat_agent_extracts_facts_from_what_redact_keeps(redacting) -> None:
    """Review: the agent's extractor read the message as given: a fact's slot key carried the address
    (``user-prefers-ops-example-com``: a key is stored as given), and the rule extractor cut it at
    its last dot ("ops@example."), which no detector finds, so the fact's text kept it too."""
    from engram.agent.loop import MemoryAgent
    from engram.agent.settings import ChatSettings

    engram, db = redacting
    agent = MemoryAgent(engram, None, ChatSettings(synthesis=False, extractor="rules"), conversation="cli:pii:")
    agent.process(f"I prefer {EMAIL}")
    agent.process(f"my card is {CARD}")
    stored = {m.key: m.content for m in engram.list(limit=10)}
    assert stored == {"user-prefers-redacted-email": "The user prefers [REDACTED:email].",
                      "user-card": "The user's card is [REDACTED:card]."}
    assert_absent(db)
    assert b"ops@example" not in raw_bytes(db)


def test_the_read_trail_keeps_a_recall_query_as_redact_stores_text(redacting) -> None:
    """Review: the audit trail recorded each recall's query as given (``lifecycle.audit_reads``, on by
    default), and the chat agent recalls with the user's message: what redact masked everywhere
    else stayed in the trail."""
    engram, db = redacting
    engram.remember("the ops lead answers mail")
    engram.recall(f"who reads {EMAIL}?")
    with closing(sqlite3.connect(db)) as conn:
        queries = [json.loads(d)["query"] for (d,) in conn.execute("SELECT detail FROM audit_log WHERE action = 'recalled'")]
    assert queries == ["who reads [REDACTED:email]?"]
    assert_absent(db)


def test_a_note_key_the_model_spells_an_address_in_is_made_from_the_note_as_stored(redacting) -> None:
    """Review: synthesis stored the key its model proposed as given, and the model reads the
    conversation: a key spelling an address kept it in the key column, the audit trail and the
    memory folder. Such a key is dropped (the engine makes one from the note as stored); two notes
    of two addresses stay two memories, and a note naming one by its proposed key still links to it."""
    from engram.agent.synthesize import Synthesizer
    from engram.llm.base import assistant_message, user_message
    from engram.llm.openai import OpenAIChat
    from engram.testing.llm_servers import OpenAICompatServer, Reply

    engram, db = redacting
    proposed = [{"key": f"admin-{EMAIL}", "content": f"The admin is {EMAIL}."},
                {"key": "backup-admin-jo@example.org", "content": "The backup admin is jo@example.org."},
                {"key": "admin-hours", "content": "The admin works mornings.", "links": [f"admin-{EMAIL}"]}]
    with OpenAICompatServer(Reply.say(json.dumps(proposed))) as server:
        synthesizer = Synthesizer(engram, OpenAIChat("m", base_url=server.base_url, max_retries=0))
        report = synthesizer.run([user_message("the admin is [REDACTED:email]"), assistant_message("Noted.")])
    assert [a.outcome for a in report.applied] == ["created"] * 3
    stored = {m.key: m for m in engram.list(limit=10)}
    assert {key: m.content for key, m in stored.items()} == {
        "admin-redacted-email": "The admin is [REDACTED:email].",
        "backup-admin-redacted-email": "The backup admin is [REDACTED:email].",
        "admin-hours": "The admin works mornings."}
    assert stored["admin-hours"].links == (stored["admin-redacted-email"].id,)
    assert_absent(db)
    assert b"jo@example" not in raw_bytes(db)
