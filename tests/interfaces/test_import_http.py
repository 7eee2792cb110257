"""``POST /api/v1/import/{kind}`` over a real socket: other systems' data joins the caller's agent
only, all or nothing, and a second post imports nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.interfaces.conftest import Served

FIXTURES = Path(__file__).parent.parent / "fixtures" / "import"


def _files(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): p.read_text() for p in folder.rglob("*") if p.is_file()}


def test_import_text_and_folder_sources_into_the_callers_agent(served: Served) -> None:
    with served.client(served.alice) as alice, served.client(served.bob) as bob:
        mem0 = (FIXTURES / "mem0.json").read_text()
        first = alice.post("/api/v1/import/auto", json={"text": mem0})
        assert first.status_code == 200, first.text
        assert (first.json()["kind"], first.json()["imported"]) == ("mem0", 3)
        # ops-bot's run too: the answer lists the caller's agent and no session, as the memories are.
        assert (first.json()["agents"], first.json()["sessions"]) == (["alice"], []), first.json()
        assert alice.post("/api/v1/import/mem0", json={"text": mem0}).json()["skipped"] == 3
        # mem0's users and agents do not become other engram agents over HTTP: all of it is alice's.
        items = alice.get("/api/v1/memory").json()["memories"]
        assert {m["scope"] for m in items} == {"agent:alice"} and len(items) == 3
        vault = alice.post("/api/v1/import/basic-memory", json={"files": _files(FIXTURES / "basic-memory")})
        assert vault.json()["imported"] == 6, vault.text
        assert bob.get("/api/v1/stats").json()["memories"] == 0
        # The Clawless home: its history joins alice's history, the server's MEMORY.md is left alone.
        claw = alice.post("/api/v1/import/auto", json={"files": _files(FIXTURES / "clawless")}).json()
        assert (claw["kind"], claw["messages_imported"], claw["operator_notes"]) == ("clawless", 6, "skipped")


def test_malformed_source_is_a_problem_naming_the_line_and_stores_nothing(served: Served) -> None:
    with served.client(served.alice) as alice:
        bad = '{"type":"entity","name":"A","entityType":"x","observations":["ok"]}\n{"type":"relation"}\n'
        response = alice.post("/api/v1/import/mcp-memory", json={"text": bad})
        assert response.status_code == 422 and "line 2" in response.text, response.text
        assert alice.post("/api/v1/import/zep", json={"text": "{}"}).status_code == 422
        neither = alice.post("/api/v1/import/mem0", json={})
        # The validator's own words, without pydantic's "Value error, " before them.
        assert neither.status_code == 422 and neither.json()["detail"] == "body: give exactly one of text or files", \
            neither.json()
        assert alice.get("/api/v1/stats").json()["memories"] == 0


def test_http_callers_import_the_same_source_each_into_their_own_agent(served: Served) -> None:
    mem0 = (FIXTURES / "mem0.json").read_text()
    snapshot = {"memories": [{"content": "A shared fact", "key": "shared"}]}
    with served.client(served.alice) as alice, served.client(served.bob) as bob:
        assert alice.post("/api/v1/import/mem0", json={"text": mem0}).json()["imported"] == 3
        assert alice.post("/api/v1/import", json=snapshot).json()["imported"] == 1
        first = bob.post("/api/v1/import/mem0", json={"text": mem0}).json()
        assert (first["imported"], first["skipped"]) == (3, 0), first
        assert bob.post("/api/v1/import/mem0", json={"text": mem0}).json()["skipped"] == 3
        assert bob.post("/api/v1/import", json=snapshot).json()["imported"] == 1
        assert {m["scope"] for m in bob.get("/api/v1/memory").json()["memories"]} == {"agent:bob"}
        assert bob.get("/api/v1/stats").json()["memories"] == 4


def test_a_snapshot_repeating_an_id_with_other_content_is_refused_naming_it(served: Served) -> None:
    # QA: the second entry under a repeated id was dropped, reported as "skipped, already present".
    same = "0190a1b2-0000-7000-8000-000000000001"
    document = {"memories": [{"id": same, "key": "a", "content": "first"}, {"id": same, "key": "b", "content": "second"}]}
    with served.client(served.alice) as alice:
        for response in (alice.post("/api/v1/import", json=document),
                         alice.post("/api/v1/import/snapshot", json={"text": json.dumps(document)})):
            assert response.status_code == 422, response.text
            assert f'memories[1].id: "{same}" repeats memories[0], which differs' in response.json()["detail"]
        assert alice.get("/api/v1/stats").json()["memories"] == 0
        copy = {"memories": [document["memories"][0], dict(document["memories"][0])]}
        assert alice.post("/api/v1/import", json=copy).json() == {"imported": 1, "skipped": 1, "warnings": []}


def test_an_import_body_refuses_unknown_fields_and_nul_naming_the_field(served: Served) -> None:
    mem0 = (FIXTURES / "mem0.json").read_text()
    claw = _files(FIXTURES / "clawless")
    name = next(iter(claw))
    with served.client(served.alice) as alice:
        for body, field in (({"text": mem0, "dry_run": True}, "dry_run"),
                            ({"text": mem0.replace("}", "}\x00", 1)}, "text"),
                            ({"files": {**claw, name: claw[name] + "\x00"}}, f"files.{name}"),
                            ({"files": {**claw, "memory/x\x00.md": "hi"}}, "files"),
                            ({"files": {**claw}, "text": mem0}, "body")):
            r = alice.post("/api/v1/import/auto", json=body)
            assert r.status_code == 422 and r.json()["field"].startswith(field), (field, r.text)
            assert field.split(".")[0] in r.json()["detail"] or field == "body", r.text
        assert alice.get("/api/v1/stats").json()["memories"] == 0
        assert alice.get("/api/v1/history").json()["conversations"] == []


def test_a_sqlite_database_kind_is_refused_as_text_naming_the_text(served: Served) -> None:
    # PtrClaw's and sclaw's memory.db are files read from disk (engram import FILE), not JSON bodies;
    # the problem names the body's field, `text` (the engine's `source`).
    with served.client(served.alice) as alice:
        for kind in ("ptrclaw-sqlite", "sclaw"):
            r = alice.post(f"/api/v1/import/{kind}", json={"text": "SQLite format 3"})
            assert r.status_code == 422 and r.json()["field"] == "text", r.text
            assert "SQLite database file" in r.json()["detail"], r.text
        assert alice.get("/api/v1/stats").json()["memories"] == 0


def test_a_refused_source_says_what_the_endpoint_takes_not_the_librarys_means(served: Served) -> None:
    # A file's name sent as the text was answered with the library's advice (`engram import x`,
    # Path('x')), which no HTTP client can follow: the problem names the body's field and says
    # what the body takes, the document's text or the folder's files.
    with served.client(served.alice) as alice:
        for kind, body, field in (("mem0", {"text": "x"}, "text"), ("auto", {"text": "memory.json"}, "text"),
                                  ("mem0", {"files": {"MEMORY.md": "x"}}, "files"),
                                  ("openclaw", {"text": "[]"}, "text")):
            r = alice.post(f"/api/v1/import/{kind}", json=body)
            problem = r.json()
            assert r.status_code == 422 and problem["field"] == field, (kind, r.text)
            assert '"text"' in problem["allowed"] and '"files"' in problem["allowed"], (kind, r.text)
            assert "engram import" not in r.text and "Path" not in r.text, (kind, r.text)
        # A field inside the document keeps what the document allows there.
        inner = alice.post("/api/v1/import/mem0", json={"text": "[1]"}).json()
        assert inner["field"] == "[0]" and inner["allowed"] == "a JSON object per memory", inner
        assert alice.get("/api/v1/stats").json()["memories"] == 0


def test_an_unknown_kind_is_named_before_the_body_it_would_read(served: Served) -> None:
    # `/import/bogus` with a text that is no document named `text`, as if the path were right: the
    # kind is what the body is judged by, so it is refused first, whatever the body holds.
    with served.client(served.alice) as alice:
        for body in ({"text": "x"}, {"text": "[]"}, {"files": {"a.md": "x"}}):
            r = alice.post("/api/v1/import/bogus", json=body)
            problem = r.json()
            assert r.status_code == 422 and problem["field"] == "kind", (body, r.text)
            assert "mem0" in problem["allowed"] and "letta" in problem["allowed"], r.text
        assert alice.get("/api/v1/stats").json()["memories"] == 0


def test_a_letta_agent_file_joins_the_callers_agent_and_history(served: Served) -> None:
    agent_file = (FIXTURES / "letta.af").read_text(encoding="utf-8")
    with served.client(served.alice) as alice, served.client(served.bob) as bob:
        first = alice.post("/api/v1/import/auto", json={"text": agent_file})
        assert first.status_code == 200, first.text
        assert (first.json()["kind"], first.json()["imported"], first.json()["messages_imported"]) == ("letta", 2, 4)
        again = alice.post("/api/v1/import/letta", json={"text": agent_file}).json()
        assert (again["skipped"], again["messages_skipped"]) == (2, 4), again
        # The Letta agent does not become another engram agent over HTTP: its blocks and history are alice's.
        items = alice.get("/api/v1/memory").json()["memories"]
        assert {(m["key"], m["scope"]) for m in items} == {("letta-human", "agent:alice"), ("letta-persona", "agent:alice")}
        messages = alice.get("/api/v1/history/letta:memgpt_agent").json()["messages"]
        assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
        assert bob.get("/api/v1/stats").json()["memories"] == 0
        assert bob.get("/api/v1/history").json()["conversations"] == []
        bad = alice.post("/api/v1/import/letta", json={"text": agent_file.replace('"role": "tool"', '"role": "robot"')})
        assert bad.status_code == 422 and "agents[0].messages[3].role" in bad.text, bad.text


def test_letta_agents_named_alike_keep_their_conversations_and_a_summary_message_its_summary(served: Served) -> None:
    from tests.importers.test_import_letta import two_agents_named_alike

    document = two_agents_named_alike()
    packed = {"type": "system_alert", "time": "2025-11-01 09:00:00 AM UTC+0000",
              "message": "Note: prior messages have been hidden from view due to conversation memory constraints.\n"
                         "The following is a summary of the previous messages:\n Dana prefers hiking to sailing."}
    # Letta's newer message types keep a summary as a message of its own role.
    document["agents"][1]["messages"].append({"type": "message", "role": "summary", "created_at": "2025-11-01T09:00:00Z",
                                              "content": [{"type": "text", "text": json.dumps(packed)}]})
    text = json.dumps(document)
    with served.client(served.alice) as alice:
        first = alice.post("/api/v1/import/letta", json={"text": text}).json()
        assert (first["imported"], first["messages_imported"], first["summaries_imported"]) == (3, 6, 1), first
        # Over HTTP both join alice, each its own conversation: the second agent's is letta:memgpt_agent-2.
        assert [m["content"] for m in alice.get("/api/v1/history/letta:memgpt_agent-2").json()["messages"]] == [
            "Hello, I'm Dana. I prefer hiking to sailing.", "Hiking it is, Dana."]
        assert len(alice.get("/api/v1/history/letta:memgpt_agent").json()["messages"]) == 4
        assert alice.get("/api/v1/history/letta:memgpt_agent-2/summary").json()["summary"] == \
            "Dana prefers hiking to sailing."
        assert alice.get("/api/v1/history/letta:memgpt_agent/summary").json()["summary"] == ""
        again = alice.post("/api/v1/import/letta", json={"text": text}).json()
        assert (again["imported"], again["messages_imported"], again["summaries_imported"]) == (0, 0, 0), again


def test_a_letta_block_longer_than_max_content_chars_is_a_problem_naming_it_and_the_setting(served: Served) -> None:
    document = json.loads((FIXTURES / "letta.af").read_text(encoding="utf-8"))
    document["blocks"][1]["value"] = "I am Sam. " * 1000
    with served.client(served.alice) as alice:
        r = alice.post("/api/v1/import/letta", json={"text": json.dumps(document)})
        assert r.status_code == 422 and r.json()["field"] == "blocks[1].value", r.text
        assert "the 'persona' block of memgpt_agent is 10000 characters; the maximum is 8000" in r.json()["detail"]
        assert "ENGRAM_MAX_CONTENT_CHARS=10000" in r.text, r.text
        assert alice.get("/api/v1/stats").json()["memories"] == 0
        assert alice.get("/api/v1/history").json()["conversations"] == []


def test_a_zep_dump_joins_the_callers_agent_with_its_valid_times_and_threads(served: Served) -> None:
    dump = (FIXTURES / "zep.json").read_text(encoding="utf-8")
    with served.client(served.alice) as alice, served.client(served.bob) as bob:
        first = alice.post("/api/v1/import/auto", json={"text": dump})
        assert first.status_code == 200, first.text
        assert (first.json()["kind"], first.json()["imported"], first.json()["messages_imported"]) == ("zep", 9, 8)
        again = alice.post("/api/v1/import/zep", json={"text": dump}).json()
        assert (again["skipped"], again["messages_skipped"]) == (9, 8), again
        # Zep's users do not become other engram agents over HTTP: their facts and threads are alice's.
        items = alice.get("/api/v1/memory", params={"limit": 50}).json()["memories"]
        assert len(items) == 9 and {m["scope"] for m in items} == {"agent:alice"}
        [acme] = [m for m in items if m["content"] == "Alice works at Acme Corp as a data engineer."]
        assert (acme["valid_from"], acme["valid_until"], acme["superseded_by"]) == (1736121600.0, 1748217600.0, None)
        messages = alice.get("/api/v1/history/zep:support-42").json()["messages"]
        assert [m["content"] for m in messages] == ["My espresso machine keeps tripping the breaker.",
                                                    "Let's check the heating element first."]
        assert bob.get("/api/v1/stats").json()["memories"] == 0
        bad = alice.post("/api/v1/import/zep", json={"text": dump.replace('"fact": "Alice works at Globex."',
                                                                         '"fact": 42')})
        assert bad.status_code == 422 and bad.json()["field"] == "users[0].edges[1].fact", bad.text


def test_chatgpt_and_claude_exports_join_the_callers_history_with_their_titles(served: Served) -> None:
    chatgpt = (FIXTURES / "chatgpt-export" / "conversations.json").read_text(encoding="utf-8")
    claude = {p.name: p.read_text(encoding="utf-8") for p in (FIXTURES / "claude-export").iterdir()}
    with served.client(served.alice) as alice, served.client(served.bob) as bob:
        first = alice.post("/api/v1/import/auto", json={"text": chatgpt})
        assert first.status_code == 200, first.text
        assert (first.json()["kind"], first.json()["messages_imported"], first.json()["agents"]) == (
            "chatgpt", 9, ["alice"])
        assert [(c["title"], c["messages_added"]) for c in first.json()["conversations"]] == [
            ("Trip to Lisbon", 5), ("Sourdough starter", 4)]
        again = alice.post("/api/v1/import/chatgpt", json={"text": chatgpt}).json()
        assert (again["messages_imported"], again["messages_skipped"]) == (0, 9), again
        messages = alice.get("/api/v1/history/chatgpt:6740c5b2-0a1c-8000-9f2e-1a2b3c4d5e6f").json()["messages"]
        assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "assistant"]
        assert messages[-1]["content"] == "  That's the Elevador de Santa Justa.\r\nIt opened in 1902."
        # The unzipped Claude.ai export as a folder's files.
        folder = alice.post("/api/v1/import/auto", json={"files": claude}).json()
        assert (folder["kind"], folder["messages_imported"]) == ("claude", 6), folder
        assert "not imported: projects.json, users.json" in " ".join(folder["warnings"])
        assert bob.get("/api/v1/history").json()["conversations"] == []
        bad = alice.post("/api/v1/import/claude", json={"text": claude["conversations.json"].replace(
            '"sender": "human"', '"sender": null', 1)})
        assert bad.status_code == 422 and bad.json()["field"] == "[0].chat_messages[0].sender", bad.text


def test_a_memory_the_caller_forgot_is_not_imported_again_and_is_counted(served: Served) -> None:
    mem0 = (FIXTURES / "mem0.json").read_text()
    with served.client(served.alice) as alice, served.client(served.bob) as bob:
        assert alice.post("/api/v1/import/mem0", json={"text": mem0}).json()["imported"] == 3
        key = alice.get("/api/v1/memory").json()["memories"][0]["key"]
        assert alice.delete("/api/v1/memory/by-key", params={"key": key, "reason": "wrong"}).status_code == 200
        again = alice.post("/api/v1/import/mem0", json={"text": mem0}).json()
        assert (again["imported"], again["skipped"], again["forgotten"]) == (0, 2, 1), again
        assert "engram audit --action forgotten" in again["warnings"][0]
        assert key not in {m["key"] for m in alice.get("/api/v1/memory").json()["memories"]}
        # Alice's forget is hers: bob's import of the same source brings his own copy of it.
        first = bob.post("/api/v1/import/mem0", json={"text": mem0}).json()
        assert (first["imported"], first["forgotten"]) == (3, 0), first


def test_chatgpt_saved_memories_arrive_only_when_asked_and_only_in_the_callers_agent(served: Served) -> None:
    export = _files(FIXTURES / "chatgpt-saved-memories")
    with served.client(served.alice) as alice, served.client(served.bob) as bob:
        plain = alice.post("/api/v1/import/auto", json={"files": export}).json()
        assert (plain["kind"], plain["imported"], plain["messages_imported"]) == ("chatgpt", 0, 6), plain
        assert any("5 saved-memory records found" in w and '"saved_memories": true' in w for w in plain["warnings"])
        # A flag is true or false, named as the body names it; and no other kind holds saved memories.
        for kind, body in (("chatgpt", {"files": export, "saved_memories": "yes"}),
                           ("mem0", {"text": (FIXTURES / "mem0.json").read_text(), "saved_memories": True})):
            refused = alice.post(f"/api/v1/import/{kind}", json=body)
            assert refused.status_code == 422 and "saved_memories" in refused.text, refused.text
        first = alice.post("/api/v1/import/chatgpt", json={"files": export, "saved_memories": True}).json()
        assert (first["imported"], first["messages_skipped"]) == (3, 6), first
        again = alice.post("/api/v1/import/auto", json={"files": export, "saved_memories": True}).json()
        assert (again["imported"], again["skipped"]) == (0, 3), again
        items = alice.get("/api/v1/memory").json()["memories"]
        assert {m["scope"] for m in items} == {"agent:alice"} and len(items) == 3
        assert "User prefers Python for scripting." in {m["content"] for m in items}
        assert all(m["metadata"]["chatgpt"]["saved_memory"] == "bio" for m in items)
        assert bob.get("/api/v1/stats").json()["memories"] == 0
        # An export holding ChatGPT's list of saved memories: what it no longer lists is not imported.
        listed = bob.post("/api/v1/import/chatgpt", json={"files": _files(FIXTURES / "chatgpt-saved-memories-listed"),
                                                           "saved_memories": True}).json()
        assert listed["imported"] == 3, listed
        assert any("2 written before it and absent from it are not imported" in w for w in listed["warnings"]), listed
        contents = {m["content"] for m in bob.get("/api/v1/memory").json()["memories"]}
        assert contents == {"User prefers Python for scripting.", "User bakes sourdough at 70% hydration.",
                            "User is learning Rust."}, contents
        assert alice.get("/api/v1/stats").json()["memories"] == 3


def test_platform_fields_and_fork_dates_over_http(served: Served) -> None:
    """mem0's platform ``owner``/``organization``/``structured_attributes`` kept in the caller's
    memories (the owner is no agent); an MCP memory fork's ``createdAt`` dates the memory, and a
    bad one is a 422 naming its line and field, with nothing stored."""
    with served.client(served.alice) as alice:
        bad = (FIXTURES / "mcp-memory-fork.jsonl").read_text().replace('"createdAt":"2025-04-02T08:14:09.512Z","version":1',
                                                                     '"createdAt":"2025-02-30","version":1')
        response = alice.post("/api/v1/import/mcp-memory", json={"text": bad})
        assert response.status_code == 422 and "line 2.createdAt" in response.text, response.text
        assert alice.get("/api/v1/stats").json()["memories"] == 0
        fork = alice.post("/api/v1/import/auto", json={"text": (FIXTURES / "mcp-memory-fork.jsonl").read_text()})
        assert (fork.json()["kind"], fork.json()["imported"]) == ("mcp-memory", 2), fork.text
        platform = alice.post("/api/v1/import/mem0", json={"text": (FIXTURES / "mem0-platform.json").read_text()})
        assert platform.json()["imported"] == 2, platform.text
        items = {m["content"]: m for m in alice.get("/api/v1/memory").json()["memories"]}
        assert {m["scope"] for m in items.values()} == {"agent:alice"}
        kept = items["Trying to balance work and workouts"]["metadata"]["mem0"]
        assert kept["owner"] == "dana-ops" and kept["structured_attributes"]["day_of_week"] == "saturday"
        marta = next(m for m in items.values() if m["key"] == "marta-ruiz")
        assert marta["created_at"] == 1743581649.512 and marta["metadata"]["mcp_memory"]["version"] == 3


def test_temporal_fork_observation_objects_over_http(served: Served) -> None:
    """``mcp-knowledge-graph``'s observation objects: a durability its server does not give is a 422
    naming the line, the observation and the field, with nothing stored; the fork's file imports into
    the caller's agent, each object kept in ``metadata["mcp_memory"]["observations"]``."""
    text = (FIXTURES / "mcp-memory-temporal.jsonl").read_text()
    with served.client(served.alice) as alice, served.client(served.bob) as bob:
        response = alice.post("/api/v1/import/mcp-memory", json={"text": text.replace('"short-term"', '"someday"')})
        assert response.status_code == 422 and "line 1.observations[2].durability" in response.text, response.text
        assert "long-term" in response.text and alice.get("/api/v1/stats").json()["memories"] == 0
        fork = alice.post("/api/v1/import/auto", json={"text": text})
        assert (fork.json()["kind"], fork.json()["imported"]) == ("mcp-memory", 2), fork.text
        ines = next(m for m in alice.get("/api/v1/memory").json()["memories"] if m["key"] == "ines-duarte")
        assert ines["scope"] == "agent:alice" and ines["created_at"] == pytest.approx(1748941964.318207)
        assert [o["durability"] for o in ines["metadata"]["mcp_memory"]["observations"]] == [
            "permanent", "long-term", "short-term", "temporary"]
        assert bob.get("/api/v1/stats").json()["memories"] == 0


def test_a_newer_mem0_export_updates_the_callers_memory_and_then_changes_nothing(served: Served) -> None:
    # mem0 updates a memory in place: the same id, new text, categories and expiry, a later updated_at.
    v1 = {"id": "m-1", "memory": "Likes green tea", "categories": ["food"], "metadata": {"source": "chat"},
          "created_at": "2024-01-10T09:00:00+00:00", "updated_at": "2024-01-10T09:00:00+00:00"}
    v2 = {**v1, "memory": "Likes oolong tea", "categories": ["drinks"], "metadata": {"source": "email"},
          "updated_at": "2024-06-02T12:00:00+00:00", "expiration_date": "2025-12-31"}
    with served.client(served.alice) as alice:
        assert alice.post("/api/v1/import/mem0", json={"text": json.dumps([v1])}).json()["imported"] == 1
        [before] = alice.get("/api/v1/memory").json()["memories"]
        newer = alice.post("/api/v1/import/mem0", json={"text": json.dumps([v2])}).json()
        assert (newer["imported"], newer["updated"], newer["skipped"]) == (0, 1, 0), newer
        now = alice.get(f"/api/v1/memory/{before['id']}").json()
        assert (now["content"], now["tags"], now["metadata"]["source"]) == ("Likes oolong tea", ["drinks"], "email")
        assert now["valid_until"] == 1767225600.0  # through 2025-12-31 (UTC)
        versions = alice.get(f"/api/v1/memory/{before['id']}/versions").json()["versions"]
        assert [v["content"] for v in versions] == ["Likes green tea"]
        for again in (v2, v1):  # the same export, then the older one: nothing changes
            summary = alice.post("/api/v1/import/mem0", json={"text": json.dumps([again])}).json()
            assert (summary["imported"], summary["updated"], summary["skipped"]) == (0, 0, 1), summary
            assert alice.get(f"/api/v1/memory/{before['id']}").json() == now
