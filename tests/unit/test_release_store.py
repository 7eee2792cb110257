"""A store written by a released engram (``tests/fixtures/release_store``: the file as
``make.py`` left it, at schema 6) opens with the current code, migrates, and keeps every memory,
version, link, token and message; conversations written before agents were recorded belong to the
default agent."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from engram import Engram
from engram.auth import TokenStore
from engram.db.migrate import applied, available
from engram.history.keys import shown_key
from engram.model import message_from_dict

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "release_store"


def test_a_release_store_opens_migrates_and_keeps_everything(tmp_path: Path) -> None:
    expected = json.loads((FIXTURE / "expected.json").read_text("utf-8"))
    db = tmp_path / "memory.db"
    shutil.copyfile(FIXTURE / "memory.db", db)
    mem = Engram.from_settings(home=tmp_path, path=db, embeddings={"provider": "local"})
    try:
        assert applied(mem.store.db) == {m.version for m in available("sqlite")}  # migrated to the newest
        for agent, view in (("default", mem.for_session("s1")), ("alice", mem.for_agent("alice"))):
            found = sorted(
                [{"id": m.id, "key": m.key, "content": m.content, "scope": str(m.scope), "tags": list(m.tags),
                  "links": sorted(m.links)} for m in view.list(limit=1000)], key=lambda m: m["id"])
            assert found == expected["memories"][agent]
        assert [v.content for v in mem.versions("staging")] == expected["versions"]["staging"]
        # Vectors survived too: recall by meaning (no word in common) finds the memory.
        hits = mem.for_agent("alice").recall("insects that make honey").hits
        assert hits and hits[0].memory.key == "bees"
        history = mem.history
        # The release recorded its keys in their stored form (``web:u1:``); listings now show them as written.
        assert history.conversations() == sorted(shown_key(key) for key in expected["history"])
        for key, conversation in expected["history"].items():
            assert history.all(key) == [message_from_dict(m) for m in conversation["messages"]]
            assert history.summary(key) == conversation["summary"]
            assert mem.for_agent("alice").history.all(key) == []  # nobody else's
    finally:
        mem.close()
    tokens = TokenStore.open(db)
    try:
        assert [(t.id, t.agent) for t in tokens.list()] == [(t["id"], t["agent"]) for t in expected["tokens"]]
    finally:
        tokens.close()
