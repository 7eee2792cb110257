"""Clawless (reference 004) behaviours at its doors: the semantic-recall endpoint over a real socket,
and its configuration files and variables read by engram's settings."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from engram.config import load_settings
from engram.errors import ConfigError
from tests.interfaces.conftest import Served

FIXTURES = Path(__file__).parent.parent / "fixtures" / "import"


def test_semantic_recall_takes_a_plain_chat_id_and_echoes_it_back(served: Served) -> None:
    # Clawless: "Request body: `{"input":"current question","chatId":"optional","topK":3}`" and history
    # entries are "`{userMessage, botResponse, chatId, platform, timestamp}`"; its chat ids are plain.
    with served.client(served.alice) as c:
        for conversation, user, bot in (
            ("telegram:42", "My dog is called Biscuit", "Biscuit is a lovely name."),
            ("telegram:7", "My dog is called Rex", "Rex is a good dog."),
        ):
            c.post(f"/api/v1/history/{conversation}", json={"role": "user", "content": user})
            c.post(f"/api/v1/history/{conversation}", json={"role": "assistant", "content": bot})
        answer = c.post("/api/memory/semantic-recall", json={"input": "what is my dog called", "chatId": "42", "topK": 3})
        assert answer.status_code == 200, answer.text
        entries = answer.json()["entries"]
        assert [(e["userMessage"], e["chatId"], e["platform"]) for e in entries] == [
            ("My dog is called Biscuit", "42", "telegram")]
        # Its timestamp is written as Clawless writes it in conversation-history.jsonl (ISO 8601,
        # UTC): it was epoch seconds, which a script's `new Date(timestamp)` reads as January 1970.
        stamp = dt.datetime.fromisoformat(entries[0]["timestamp"].replace("Z", "+00:00"))
        assert entries[0]["timestamp"].endswith("Z") and abs(stamp.timestamp() - time.time()) < 120
        # A full engram key still selects one conversation; a malformed chat id names the field.
        keyed = c.post("/api/memory/semantic-recall", json={"input": "dog", "chatId": "telegram:7"}).json()
        assert [e["chatId"] for e in keyed["entries"]] == ["7"]
        bad = c.post("/api/memory/semantic-recall", json={"input": "dog", "chatId": "4 2"})
        assert bad.status_code == 422 and bad.json()["field"] == "chatId"


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("ENGRAM_", "CONVERSATION_", "AGENT_BRIDGE"))}
    return subprocess.run([sys.executable, "-m", "engram", *args], capture_output=True, text=True,
                          env={**clean, **env}, timeout=120)


def test_a_clawless_home_config_json_and_variables_carry_over(tmp_path: Path, monkeypatch) -> None:
    # Clawless: "Configuration precedence: 1. Environment variables 2. Config file values
    # (`~/.clawless/config.json` by default) 3. Built-in defaults"; its home is `AGENT_BRIDGE_HOME`.
    bridge = tmp_path / "clawless"
    bridge.mkdir()
    (bridge / "config.json").write_text(json.dumps({
        "CONVERSATION_HISTORY_MAX_ENTRIES": 55, "CONVERSATION_SEMANTIC_RECALL_ENABLED": False,
        "CONVERSATION_HISTORY_RECAP_TOP_K": 4}))
    stored = _run({"AGENT_BRIDGE_HOME": str(bridge)}, "remember", "The deploy server is atlas")
    assert stored.returncode == 0, stored.stderr
    assert (bridge / "memory.db").is_file()  # the bridge home is engram's home

    monkeypatch.delenv("ENGRAM_HOME")
    monkeypatch.setenv("AGENT_BRIDGE_HOME", str(bridge))
    monkeypatch.setenv("CONVERSATION_HISTORY_RECAP_TOP_K", "6")  # a variable beats the file
    settings = load_settings()
    assert settings.home == bridge and settings.history.max_entries == 55 and settings.history.semantic is False
    assert settings.history.recap_top_k == 6
    monkeypatch.setenv("ENGRAM_HISTORY__RECAP_TOP_K", "9")  # and ENGRAM_* beats Clawless's names
    assert load_settings().history.recap_top_k == 9
    monkeypatch.setenv("CONVERSATION_HISTORY_MAX_ENTRIES", "lots")
    with pytest.raises(ConfigError, match="max_entries"):
        load_settings()


def test_conversation_history_enabled_false_stores_no_appends(tmp_path: Path, monkeypatch) -> None:
    # Clawless: "If conversation history is enabled: Ensures conversation-history.jsonl file exists";
    # "Confirm append path is enabled (CONVERSATION_HISTORY_ENABLED=true)": off, nothing is appended.
    home = tmp_path / "home"
    first = _run({"ENGRAM_HOME": str(home)}, "history", "append", "telegram:42", "kept from before")
    assert first.returncode == 0, first.stderr
    off = {"ENGRAM_HOME": str(home), "CONVERSATION_HISTORY_ENABLED": "false", "COLUMNS": "200"}
    said = _run(off, "history", "append", "telegram:42", "hello while off")
    assert said.returncode == 0, said.stderr
    assert said.stdout == ""  # nothing done: a note on stderr, as forget's "nothing to forget"
    assert "not appended to telegram:42: conversation history is off (history.enabled = false)" in said.stderr
    assert json.loads(_run(off, "--json", "history", "append", "telegram:42", "again").stdout)["stored"] is False
    shown = json.loads(_run(off, "--json", "history", "show", "telegram:42").stdout)
    assert [m["content"] for m in shown["messages"]] == ["kept from before"]  # what was stored stays readable

    monkeypatch.setenv("CONVERSATION_HISTORY_ENABLED", "false")
    assert load_settings().history.enabled is False
    monkeypatch.setenv("ENGRAM_HISTORY__ENABLED", "true")  # ENGRAM_* beats Clawless's name
    assert load_settings().history.enabled is True
    monkeypatch.delenv("ENGRAM_HISTORY__ENABLED")
    monkeypatch.delenv("CONVERSATION_HISTORY_ENABLED")
    (tmp_path / "config.json").write_text(json.dumps({"CONVERSATION_HISTORY_ENABLED": False}))
    monkeypatch.setenv("ENGRAM_CONFIG", str(tmp_path / "config.json"))  # its config.json key too
    assert load_settings().history.enabled is False


def test_history_off_over_http_and_in_an_import(tmp_path: Path, monkeypatch) -> None:
    from engram.auth import TokenStore
    from engram.engine import Engram
    from engram.interfaces.http.app import create_app
    from engram.interfaces.http.serve import BackgroundServer

    monkeypatch.setenv("CONVERSATION_HISTORY_ENABLED", "false")
    db = tmp_path / "memory.db"
    with Engram.from_settings(home=tmp_path, path=db, embeddings={"provider": "none"}) as engram:
        tokens = TokenStore.open(db)
        token, _ = tokens.create("default", "test")
        server = BackgroundServer(create_app(engram, tokens)).start()
        try:
            with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {token}"}) as client:
                answer = client.post("/api/v1/history/telegram:42", json={"role": "user", "content": "hello"})
                assert answer.status_code == 201 and answer.json()["stored"] is False
                assert answer.json()["appended"]["content"] == "hello"
                assert client.get("/api/v1/history/telegram:42").json()["messages"] == []
                bad = client.post("/api/v1/history/telegram:42", json={"role": "wizard", "content": "x"})
                assert bad.status_code == 422  # still checked: bad input is refused, on or off
        finally:
            server.stop()
            tokens.close()
        imported = engram.import_from(FIXTURES / "clawless", kind="clawless")
        assert imported.messages_imported == 0 and imported.messages_skipped == 6
        off = "6 conversation messages and 0 summaries not imported: conversation history is off"
        assert any(off in w for w in imported.warnings)
        assert engram.history.conversations() == []


def test_semantic_recall_without_top_k_returns_the_configured_recap_top_k(tmp_path: Path, monkeypatch) -> None:
    # Clawless: "`CONVERSATION_HISTORY_RECAP_TOP_K` (default `3`)" and "History recap is always
    # generic: Increase CONVERSATION_HISTORY_RECAP_TOP_K": a request without topK gets that many
    # entries (it once got 3 whatever the setting said).
    from engram.auth import TokenStore
    from engram.engine import Engram
    from engram.interfaces.http.app import create_app
    from engram.interfaces.http.serve import BackgroundServer

    monkeypatch.setenv("CONVERSATION_HISTORY_RECAP_TOP_K", "5")
    db = tmp_path / "memory.db"
    with Engram.from_settings(home=tmp_path, path=db) as engram:
        tokens = TokenStore.open(db)
        token, _ = tokens.create("default", "test")
        server = BackgroundServer(create_app(engram, tokens)).start()
        try:
            with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as c:
                for pet in ("Biscuit", "Rex", "Luna", "Milo", "Coco", "Nala"):
                    c.post("/api/v1/history/telegram:42", json={"role": "user", "content": f"My dog is called {pet}"})
                    c.post("/api/v1/history/telegram:42", json={"role": "assistant", "content": f"{pet} is a fine name."})
                unsaid = c.post("/api/memory/semantic-recall", json={"input": "what is my dog called", "chatId": "42"})
                assert unsaid.status_code == 200, unsaid.text
                assert len(unsaid.json()["entries"]) == 5
                said = c.post("/api/memory/semantic-recall", json={"input": "dog", "chatId": "42", "topK": 2})
                assert len(said.json()["entries"]) == 2  # a topK sent still wins
        finally:
            server.stop()
            tokens.close()


def test_semantic_recall_gives_an_entrys_time_to_the_millisecond_as_clawless_wrote_it(served: Served) -> None:
    # Clawless writes `new Date().toISOString()` (`2026-03-02T07:41:09.318Z`); the stored message
    # keeps the milliseconds, and the answer gives them back in that form, `.000Z` included.
    lines = [
        {"userMessage": "Where did I park the van?", "botResponse": "Level 3 of the Rua Augusta garage.",
         "chatId": "42", "platform": "telegram", "timestamp": "2026-03-02T07:41:09.318Z"},
        {"userMessage": "What is my locker code?", "botResponse": "Your locker code is 5521.",
         "chatId": "42", "platform": "telegram", "timestamp": "2026-03-02T08:00:00.000Z"},
    ]
    history = "".join(json.dumps(line) + "\n" for line in lines)
    with served.client(served.alice) as c:
        done = c.post("/api/v1/import/clawless", json={"files": {"conversation-history.jsonl": history}})
        assert done.status_code == 200 and done.json()["messages_imported"] == 4, done.text
        answer = c.post("/api/memory/semantic-recall", json={"input": "where is the van parked", "chatId": "42", "topK": 2})
        assert answer.status_code == 200, answer.text
        assert [(e["userMessage"], e["timestamp"]) for e in answer.json()["entries"]] == [
            (line["userMessage"], line["timestamp"]) for line in lines]


def test_an_unread_clawless_history_in_the_bridge_home_is_said_where_history_comes_back_empty(
        tmp_path: Path, monkeypatch, caplog) -> None:
    # Clawless keeps `conversation-history.jsonl` in its home; with `AGENT_BRIDGE_HOME` at that home,
    # engram's own history (sqlite) came back empty everywhere with no word of the file beside it.
    import logging
    import shutil

    from engram import foreign_settings
    from engram.engine import Engram

    bridge = tmp_path / "clawless"
    shutil.copytree(FIXTURES / "clawless", bridge)
    said = _run({"AGENT_BRIDGE_HOME": str(bridge)}, "history", "list")  # a fresh home: no database yet
    assert said.returncode == 0 and said.stderr.count("Clawless's conversation history is there but not read") == 1
    assert f"engram import {bridge} --from clawless" in said.stderr and 'history.backend = "jsonl"' in said.stderr
    jsonl = _run({"AGENT_BRIDGE_HOME": str(bridge), "ENGRAM_HISTORY__BACKEND": "jsonl"}, "history", "list")
    assert "telegram:12345" in jsonl.stdout and "not read" not in jsonl.stderr  # the file is read: nothing to say

    monkeypatch.setattr(foreign_settings, "_warned", set())
    monkeypatch.setenv("AGENT_BRIDGE_HOME", str(bridge))
    monkeypatch.delenv("ENGRAM_HOME")
    with caplog.at_level(logging.WARNING, logger="engram.config"), Engram.from_settings() as engram:
        assert engram.history.semantic_recall("what is my dog called").hits == ()
        assert engram.history.conversations() == [] and engram.history.count("telegram:12345") == 0
        hints = [r for r in caplog.records if "not read" in r.getMessage()]
        assert len(hints) == 1 and str(bridge / "conversation-history.jsonl") in hints[0].getMessage()  # once
        monkeypatch.setattr(foreign_settings, "_warned", set())
        caplog.clear()
        engram.import_from(bridge, kind="clawless")  # brought in: a read is no longer empty, nor an unused key's
        assert engram.history.count("telegram:12345") == 4 and engram.history.all("telegram:9") == []
        assert not [r for r in caplog.records if "not read" in r.getMessage()]


def test_a_jsonl_history_keeps_max_entries_exchanges_of_one_chat(tmp_path: Path) -> None:
    # Clawless: "CONVERSATION_HISTORY_MAX_ENTRIES (default 100): max stored entries (FIFO rotation)".
    # A file of 100 exchanges of one chat keeps 100 after one more, its oldest gone: engram trimmed
    # the conversation to history.max_history_len (100 messages, 50 exchanges), deleting half of the
    # lines of Clawless's own file on one append; that bound is what a session restores.
    from engram.engine import Engram

    bridge = tmp_path / "clawless"
    bridge.mkdir()
    path = bridge / "conversation-history.jsonl"
    path.write_text("".join(json.dumps({
        "timestamp": f"2026-02-10T08:{i // 60:02d}:{i % 60:02d}.000Z", "chat_id": "42", "user_message": f"q{i}",
        "bot_response": f"a{i}", "platform": "telegram"}) + "\n" for i in range(100)))
    with Engram.from_settings(home=tmp_path / "home", history={"backend": "jsonl", "path": path}) as engram:
        engram.history.append("telegram:42", "user", "q100")
        engram.history.append("telegram:42", "assistant", "a100")
        assert engram.history.count("telegram:42") == 200
        assert len(engram.history.restore("telegram:42")) == 100  # a session restores max_history_len messages
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(lines) == 100 and lines[0]["user_message"] == "q1" and lines[-1]["user_message"] == "q100"


def test_semantic_recall_takes_any_topk_the_recap_top_k_setting_takes(served: Served) -> None:
    # Clawless: "CONVERSATION_HISTORY_RECAP_TOP_K (default 3)"; "Increase CONVERSATION_HISTORY_RECAP_TOP_K
    # if needed". The setting goes to 100 and a topK left out is that setting, so a request's topK goes
    # as far: the route refused topK 51-100 that the same server answered when it came from the setting.
    with served.client(served.alice) as c:
        c.post("/api/v1/history/telegram:42", json={"role": "user", "content": "My dog is called Biscuit"})
        c.post("/api/v1/history/telegram:42", json={"role": "assistant", "content": "Noted."})
        for top_k in (51, 100):
            answer = c.post("/api/memory/semantic-recall", json={"input": "dog", "topK": top_k})
            assert answer.status_code == 200, answer.text
            assert [e["userMessage"] for e in answer.json()["entries"]] == ["My dog is called Biscuit"]
        past = c.post("/api/memory/semantic-recall", json={"input": "dog", "topK": 101})
        assert past.status_code == 422 and past.json()["field"] == "topK" and "100" in past.json()["detail"], past.text


def test_semantic_recall_switched_off_still_refuses_a_malformed_chat_id(tmp_path: Path) -> None:
    # Clawless: "Semantic recall can be disabled at runtime by setting CONVERSATION_SEMANTIC_RECALL_ENABLED=false";
    # then recall finds nothing. A chatId that names no chat was still answered with that nothing, where
    # the same request with recall on is refused naming chatId: a caller's mistake hid until recall was on.
    from engram.engine import Engram
    from engram.errors import ValidationError

    with Engram.from_settings(home=tmp_path, history={"semantic": False}) as engram:
        assert engram.history.semantic_recall("dog", key="42").hits == ()
        assert engram.history.semantic_recall("dog", key="telegram:42").recap == ""
        for bad, field in (("4 2", "chatId"), ("", "chatId"), (7, "chatId"), ("a:b:c:d", "key")):
            with pytest.raises(ValidationError) as refused:
                engram.history.semantic_recall("dog", key=bad)
            assert refused.value.field == field, refused.value
