"""``privacy.pii`` at the history doors: HTTP over a real socket and the CLI in a subprocess, each
on a real SQLite file whose bytes (write-ahead log included) are read for the values."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.interfaces.conftest import Served, serving

EMAIL, CARD = "ops@example.com", "4111 1111 1111 1111"


def raw_bytes(db: Path) -> bytes:
    wal = Path(str(db) + "-wal")
    return db.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


@pytest.fixture
def redacting(tmp_path: Path) -> Iterator[Served]:
    """As ``served``, with ``privacy.pii = "redact"``."""
    with serving(tmp_path, privacy={"pii": "redact"}) as server:
        yield server


def test_http_history_appends_are_redacted_before_the_database(redacting: Served) -> None:
    with redacting.client(redacting.alice) as c:
        one = c.post("/api/v1/history/web:1", json={"role": "user", "content": f"mail me at {EMAIL}",
                                                    "metadata": {"card": CARD}})
        assert one.status_code == 201
        assert one.json()["appended"]["content"] == "mail me at [REDACTED:email]"
        assert one.json()["appended"]["metadata"] == {"card": "[REDACTED:card]"}
        assert any("e-mail address (1)" in w for w in one.json()["warnings"])
        many = c.post("/api/v1/history/web:1/messages", json={"messages": [
            {"role": "assistant", "content": "noted"}, {"role": "user", "content": f"card {CARD}"}]})
        assert many.status_code == 201 and many.json()["appended"][1]["content"] == "card [REDACTED:card]"
        assert many.json()["warnings"][0].startswith("messages[1]: redacted possible PII")
        listed = c.get("/api/v1/history/web:1").json()["messages"]
        assert [m["content"] for m in listed] == ["mail me at [REDACTED:email]", "noted", "card [REDACTED:card]"]
        imported = c.post("/api/v1/import", json={"memories": [{"content": f"admin is {EMAIL}"}]})
        assert imported.status_code == 200 and imported.json()["warnings"]
    data = raw_bytes(redacting.db_path)
    assert EMAIL.encode() not in data and b"example.com" not in data and b"4111 1111" not in data


def test_http_history_append_in_warn_mode_reports_the_kind_not_the_value(served: Served) -> None:
    with served.client(served.alice) as c:
        r = c.post("/api/v1/history/web:1", json={"role": "user", "content": f"mail me at {EMAIL}"})
        assert r.status_code == 201 and r.json()["appended"]["content"] == f"mail me at {EMAIL}"
        (warning,) = r.json()["warnings"]
        assert "e-mail address (1)" in warning and EMAIL not in warning
        clean = c.post("/api/v1/history/web:1", json={"role": "assistant", "content": "ok"})
        assert clean.json()["warnings"] == []


def run(home: Path, *args: str, pii: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env.update(ENGRAM_HOME=str(home), ENGRAM_PRIVACY__PII=pii)
    code = "from engram.interfaces.cli.app import main; main()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=120)


def test_cli_history_append_and_summary_are_redacted(tmp_path: Path) -> None:
    done = run(tmp_path, "--json", "history", "append", "web:1", f"mail me at {EMAIL}", pii="redact")
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert shown["content"] == "mail me at [REDACTED:email]" and shown["warnings"]
    listed = tmp_path / "messages.json"
    listed.write_text(json.dumps([{"role": "assistant", "content": f"card {CARD}"}]))
    assert run(tmp_path, "history", "append", "web:1", "--messages", str(listed), pii="redact").returncode == 0
    assert run(tmp_path, "history", "summary", "web:1", "--set", f"about {EMAIL}", pii="redact").returncode == 0
    data = raw_bytes(tmp_path / "memory.db")
    assert EMAIL.encode() not in data and b"4111 1111" not in data


def test_cli_history_append_in_warn_mode_prints_the_kind(tmp_path: Path) -> None:
    done = run(tmp_path, "history", "append", "web:1", f"mail me at {EMAIL}", pii="warn")
    assert done.returncode == 0
    assert "warning: possible PII stored: e-mail address (1)" in done.stderr and EMAIL not in done.stderr


SHORT = "a@b.io"  # its marker, [REDACTED:email], is 10 characters longer


def test_http_refuses_what_redaction_would_push_past_a_limit_or_make_one_name(tmp_path: Path) -> None:
    with serving(tmp_path, privacy={"pii": "redact"}, max_content_chars=500) as server, server.client(server.alice) as c:
        text = "x " * 240 + " ".join([SHORT] * 3)  # 500 characters as given, 530 once redacted
        grown = c.post("/api/v1/memory", json={"content": text})
        assert grown.status_code == 422 and grown.json()["field"] == "content", grown.text
        assert "once possible PII was redacted" in grown.text
        two = c.post("/api/v1/history/web:1", json={"role": "user", "content": "hi",
                                                    "metadata": {EMAIL: 1, "bob@example.com": 2}})
        assert two.status_code == 422 and two.json()["field"] == "metadata", two.text
        result = json.dumps({"ops@example.com": 1, "bob@example.com": 2})  # a tool's result is JSON: names too
        calls = c.post("/api/v1/history/web:1/messages", json={"messages": [
            {"role": "user", "content": "hi"}, {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "f"}]},
            {"role": "tool", "content": result, "tool_call_id": "c1"}]})
        assert calls.status_code == 422 and calls.json()["field"] == "messages[2].content", calls.text
        assert c.get("/api/v1/history/web:1").json()["messages"] == []
    assert b"example.com" not in raw_bytes(server.db_path)


def test_http_keeps_tool_call_ids_as_given_and_a_json_result_json(redacting: Served) -> None:
    # Luhn-valid runs, as a provider's random id may hold: two such ids were made one and refused.
    ids = ["call_4111111111111111", "call_5555555555554444"]
    with redacting.client(redacting.alice) as c:
        asked = c.post("/api/v1/history/web:1/messages", json={"messages": [
            {"role": "user", "content": "pay both"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": i, "name": "pay", "arguments": "{}"} for i in ids]}]})
        assert asked.status_code == 201, asked.text
        for i in ids:
            answered = c.post("/api/v1/history/web:1", json={"role": "tool", "tool_call_id": i,
                                                             "content": json.dumps({"card": 4111111111111111})})
            assert answered.status_code == 201, answered.text
        listed = c.get("/api/v1/history/web:1").json()["messages"]
    assert [call["id"] for call in listed[1]["tool_calls"]] == ids
    assert [m["tool_call_id"] for m in listed[2:]] == ids
    assert [json.loads(m["content"]) for m in listed[2:]] == [{"card": "[REDACTED:card]"}] * 2


def test_cli_refuses_a_message_that_redaction_pushes_past_the_limit(tmp_path: Path) -> None:
    assert run(tmp_path, "history", "append", "web:1", "kept", pii="redact").returncode == 0
    body = "zebrafill " * 99_997 + " ".join([SHORT] * 3)  # 999,990 + 20 characters; 30 more once redacted
    listed = tmp_path / "messages.json"
    listed.write_text(json.dumps([{"role": "assistant", "content": body}]))
    done = run(tmp_path, "history", "append", "web:1", "--messages", str(listed), pii="redact")
    assert done.returncode != 0
    assert "messages[0].content: is 1000020 characters once possible PII was redacted" in done.stderr, done.stderr[-500:]
    shown = run(tmp_path, "--json", "history", "show", "web:1", pii="redact")
    assert [m["content"] for m in json.loads(shown.stdout)["messages"]] == ["kept"], shown.stdout[:300]
    assert b"zebrafill" not in raw_bytes(tmp_path / "memory.db")


def test_a_message_dated_later_than_now_is_refused_at_the_doors_naming_the_field(served: Served, tmp_path: Path) -> None:
    """As a memory's ``created_at``: a message time more than five minutes ahead is refused, naming the
    field, and nothing of the batch is stored. HTTP's append bodies take no time (the server's clock
    dates each message): a ``created_at`` there is refused as no field of a message."""
    later = "2099-01-01T00:00:00Z"
    messages = tmp_path / "messages.json"
    messages.write_text(json.dumps([{"role": "user", "content": "hello"},
                                    {"role": "assistant", "content": "from the future", "created_at": later}]))
    env = {**os.environ, "ENGRAM_HOME": str(tmp_path / "home"), "ENGRAM_EMBEDDINGS__PROVIDER": "none"}
    done = subprocess.run([sys.executable, "-m", "engram", "-a", "alice", "history", "append", "web:1", "--messages",
                           str(messages)], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.startswith("error: --messages[1].created_at: 2099-01-01") and "later than now" in done.stderr
    assert "when the message was sent" in done.stderr
    count = subprocess.run([sys.executable, "-m", "engram", "-a", "alice", "history", "count", "web:1"],
                           capture_output=True, text=True, env=env, timeout=120)
    assert count.stdout.strip() == "0"
    with served.client(served.alice) as c:
        for path, body in (("/api/v1/history/web:1", {"role": "user", "content": "x", "created_at": later}),
                           ("/api/v1/history/web:1/messages",
                            {"messages": [{"role": "user", "content": "x", "created_at": later}]})):
            r = c.post(path, json=body)
            assert r.status_code == 422 and "created_at" in r.text, r.text
        assert c.get("/api/v1/history/web:1").json()["messages"] == []
