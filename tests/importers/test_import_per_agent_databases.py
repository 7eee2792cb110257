"""An import naming several users in a home with one database per agent (``per_agent_databases``):
each user's memories and conversations land in that agent's own ``home/agents/<agent>/memory.db``,
where the agent finds them, and nothing of theirs in the importing agent's file; in a home with
one database of every agent the same import behaves as it always did.

Before, the shared import code wrote every record through the importing engine: ``engram import``
of a mem0 export for alice and bob said "imported 2", but neither ``agents/alice`` nor
``agents/bob`` was made and no agent found the memories (they sat in the importing agent's file,
under other agents' scopes). The mem0 facade's ``Memory.import_mem0`` did the same."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from engram.compat.mem0 import Memory
from engram.engine import Engram
from engram.errors import SnapshotError
from engram.ids import derived_id
from tests.importers.test_import_cli import FIXTURES, as_json, run

TWO_USERS = {"results": [
    {"id": "m-alice", "memory": "Alice keeps her blue umbrellas by the door", "user_id": "alice",
     "created_at": "2026-01-01T00:00:00+00:00"},
    {"id": "m-bob", "memory": "Bob feeds the cat at seven", "user_id": "bob",
     "created_at": "2026-01-02T00:00:00+00:00"},
]}


def _memories_in(db: Path) -> list[tuple[str, str]]:
    """(agent, content) of every memory a database file holds, read with sqlite3 itself."""
    with sqlite3.connect(db) as conn:
        return sorted(conn.execute("SELECT agent, content FROM memories"))


def _layout(home: Path, monkeypatch: pytest.MonkeyPatch, per_agent: bool) -> None:
    monkeypatch.setenv("ENGRAM_PER_AGENT_DATABASES", "true" if per_agent else "false")
    monkeypatch.setenv("ENGRAM_EMBEDDINGS__PROVIDER", "none")  # full text: the files are under test


@pytest.mark.parametrize("per_agent", [True, False], ids=["per-agent", "shared"])
def test_an_import_naming_two_users_lands_where_each_agent_finds_its_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, per_agent: bool) -> None:
    home = tmp_path / "home"
    _layout(home, monkeypatch, per_agent)
    source = tmp_path / "mem0.json"
    source.write_text(json.dumps(TWO_USERS))
    first = as_json(home, "-a", "app", "import", str(source))
    assert (first["imported"], first["skipped"], first["agents"]) == (2, 0, ["alice", "bob"]), first
    alice = [m["content"] for m in as_json(home, "-a", "alice", "list")]
    bob = [m["content"] for m in as_json(home, "-a", "bob", "list")]
    assert (alice, bob) == (["Alice keeps her blue umbrellas by the door"], ["Bob feeds the cat at seven"])
    assert as_json(home, "-a", "app", "list") == []
    assert [h["memory"]["content"] for h in as_json(home, "-a", "alice", "recall", "umbrellas")["hits"]] == [alice[0]]
    assert as_json(home, "-a", "bob", "recall", "umbrellas")["hits"] == []
    if per_agent:  # each user's file holds its own memories, the importing agent's none
        assert _memories_in(home / "agents" / "alice" / "memory.db") == [("alice", alice[0])]
        assert _memories_in(home / "agents" / "bob" / "memory.db") == [("bob", bob[0])]
        assert _memories_in(home / "agents" / "app" / "memory.db") == []
        assert not (home / "memory.db").exists()
        # The backup before a risky write: one of each database written, none of the untouched one.
        for agent in ("alice", "bob"):
            assert [p.name.endswith("-import.db") for p in (home / "agents" / agent / "backups").iterdir()] == [True]
        assert not (home / "agents" / "app" / "backups").exists()
    else:
        assert not (home / "agents").exists()
        assert _memories_in(home / "memory.db") == [("alice", alice[0]), ("bob", bob[0])]
    # A second run finds each memory in its agent's database; one alice forgot since stays forgotten
    # (her own audit trail records it) and bob's is still skipped.
    run(home, "-a", "alice", "forget", as_json(home, "-a", "alice", "list")[0]["key"])
    again = as_json(home, "-a", "app", "import", str(source))
    assert (again["imported"], again["skipped"], again["forgotten"]) == (0, 1, 1), again
    assert any("-a alice audit --action forgotten" in w for w in again["warnings"]), again["warnings"]
    assert (as_json(home, "-a", "alice", "count"), as_json(home, "-a", "bob", "count")) == ({"count": 0}, {"count": 1})


def test_a_refreshed_record_updates_the_memory_in_its_agents_own_database(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """mem0 updates a memory in place: a newer export's text replaces the imported one, in the file
    of the agent holding it (found there, not stored again as a new memory)."""
    home = tmp_path / "home"
    _layout(home, monkeypatch, True)
    source = tmp_path / "mem0.json"
    source.write_text(json.dumps(TWO_USERS))
    assert as_json(home, "import", str(source))["imported"] == 2
    newer = {"results": [{**TWO_USERS["results"][0], "memory": "Alice keeps her green umbrellas by the door",
                          "updated_at": "2026-02-01T00:00:00+00:00"}, TWO_USERS["results"][1]]}
    source.write_text(json.dumps(newer))
    again = as_json(home, "import", str(source))
    assert (again["imported"], again["updated"], again["skipped"]) == (0, 1, 1), again
    assert _memories_in(home / "agents" / "alice" / "memory.db") == [
        ("alice", "Alice keeps her green umbrellas by the door")]


def test_a_source_agents_conversation_joins_its_own_database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Letta agent's blocks and messages both go to the Letta agent's own file."""
    home = tmp_path / "home"
    _layout(home, monkeypatch, True)
    done = as_json(home, "-a", "app", "import", str(FIXTURES / "letta.af"))
    assert (done["imported"], done["messages_imported"], done["agents"]) == (2, 4, ["memgpt_agent"]), done
    own = home / "agents" / "memgpt_agent" / "memory.db"
    assert {agent for agent, _ in _memories_in(own)} == {"memgpt_agent"}
    with sqlite3.connect(own) as conn:
        assert conn.execute("SELECT count(*) FROM history_messages WHERE agent = 'memgpt_agent'").fetchone() == (4,)
    with sqlite3.connect(home / "agents" / "app" / "memory.db") as conn:
        assert conn.execute("SELECT count(*) FROM history_messages").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM memories").fetchone() == (0,)
    shown = as_json(home, "-a", "memgpt_agent", "history", "show", "letta:memgpt_agent")["messages"]
    assert [m["role"] for m in shown] == ["user", "assistant", "tool", "assistant"]


def test_a_malformed_record_for_one_agent_writes_no_agents_database(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every record is checked before the first write in any database: bob's bad record leaves
    alice's memory unstored too."""
    home = tmp_path / "home"
    _layout(home, monkeypatch, True)
    monkeypatch.setenv("ENGRAM_MAX_CONTENT_CHARS", "50")
    bad = {"results": [TWO_USERS["results"][0], {**TWO_USERS["results"][1], "memory": "x" * 60}]}
    source = tmp_path / "mem0.json"
    source.write_text(json.dumps(bad))
    with pytest.raises(SnapshotError) as refused:
        run(home, "-a", "app", "import", str(source))
    assert refused.value.field == "results[1].memory" and "nothing was imported" in str(refused.value)
    # Neither user's database is made: the refusal came before any was opened to write.
    assert sorted(p.name for p in (home / "agents").iterdir()) == ["app"]
    assert as_json(home, "-a", "alice", "count") == {"count": 0}


@pytest.mark.parametrize("per_agent", [True, False], ids=["per-agent", "shared"])
def test_the_mem0_facades_import_is_found_by_each_user(tmp_path: Path, per_agent: bool) -> None:
    home = tmp_path / "home"
    engram = Engram.from_settings(home=home, agent="app", per_agent_databases=per_agent,
                                  embeddings={"provider": "none"})
    with engram:
        memory = Memory(engram)
        assert memory.import_mem0(TWO_USERS) == {"imported": 2, "skipped": 0, "forgotten": 0}
        found = memory.search("umbrellas", user_id="alice")["results"]
        assert [r["memory"] for r in found] == ["Alice keeps her blue umbrellas by the door"]
        assert memory.search("umbrellas", user_id="bob")["results"] == []
        assert [r["memory"] for r in memory.get_all(user_id="bob")["results"]] == ["Bob feeds the cat at seven"]
        # Again: each item is found where its user's memories are, and nothing is stored twice.
        assert memory.import_mem0(TWO_USERS) == {"imported": 0, "skipped": 2, "forgotten": 0}
        assert len(memory.get_all(user_id="alice")["results"]) == 1
        # mem0 changed alice's item since: the facade finds the memory it made of it (by the ids an
        # import gives, in alice's own database) and brings the new text to it.
        newer = {"results": [{**TWO_USERS["results"][0], "memory": "Alice keeps her green umbrellas by the door",
                              "updated_at": "2026-02-01T00:00:00+00:00"}, TWO_USERS["results"][1]]}
        assert memory.import_mem0(newer) == {"imported": 1, "skipped": 1, "forgotten": 0}
        assert [r["memory"] for r in memory.get_all(user_id="alice")["results"]] == [
            "Alice keeps her green umbrellas by the door"]
    if per_agent:
        assert [c for _, c in _memories_in(home / "agents" / "alice" / "memory.db")] == [
            "Alice keeps her green umbrellas by the door"]
        assert _memories_in(home / "agents" / "app" / "memory.db") == []


def test_an_http_import_with_an_agents_token_writes_only_into_that_agents_database(tmp_path: Path) -> None:
    """A token is one agent's: the source's users do not become engram agents over HTTP, so bob's
    import naming alice and bob writes all of it into bob's own file, none into alice's (the
    server's own agent) and makes no other agent's database."""
    import httpx

    from engram.config import load_settings
    from engram.interfaces.http.app import create_app
    from engram.interfaces.http.serve import BackgroundServer
    from engram.interfaces.settings import ServerSettings
    from engram.root import open_tokens

    home = tmp_path / "home"
    engram = Engram.from_settings(home=home, agent="alice", per_agent_databases=True, embeddings={"provider": "none"})
    tokens = open_tokens(load_settings(home=home, agent="alice", per_agent_databases=True), engram.backend)
    try:
        bob_token, _ = tokens.create("bob", "test")
        server = BackgroundServer(create_app(engram, tokens, ServerSettings())).start()
        try:
            with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {bob_token}"}, timeout=30) as bob:
                done = bob.post("/api/v1/import/mem0", json={"text": json.dumps(TWO_USERS)})
                assert done.status_code == 200, done.text
                assert (done.json()["imported"], done.json()["agents"]) == (2, ["bob"]), done.json()
                assert len(bob.get("/api/v1/memory").json()["memories"]) == 2
        finally:
            server.stop()
    finally:
        tokens.close()
        engram.close()
    assert _memories_in(home / "agents" / "alice" / "memory.db") == []
    assert {agent for agent, _ in _memories_in(home / "agents" / "bob" / "memory.db")} == {"bob"}
    assert sorted(p.name for p in (home / "agents").iterdir()) == ["alice", "bob"]


def test_the_progress_of_an_import_into_several_databases_names_each_agent(tmp_path: Path) -> None:
    seen: list[tuple[str, int, int]] = []
    with Engram.from_settings(home=tmp_path / "home", agent="app", per_agent_databases=True,
                              embeddings={"provider": "none"}) as engram:
        engram.import_from(json.dumps(TWO_USERS), "mem0", progress=lambda *step: seen.append(step))
    assert ("storing (alice)", 1, 1) in seen and ("storing (bob)", 1, 1) in seen, seen


@pytest.mark.parametrize("configured", [None, "carol"], ids=["default", "config-agent"])
def test_an_import_without_an_agent_acts_as_the_configured_agent_as_remember_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, configured: str | None) -> None:
    """docs/cli.md: without ``-a`` an import acts as the configured agent (the config file's, else
    ``default``), as ``remember`` does: a snapshot's entries join it, in its own database; the
    source's own agents each get theirs."""
    home = tmp_path / "home"
    _layout(home, monkeypatch, True)
    if configured:
        home.mkdir(parents=True)
        (home / "config.toml").write_text(f'agent = "{configured}"\n')
    agent = configured or "default"
    snapshot, mem0 = tmp_path / "snap.json", tmp_path / "mem0.json"
    snapshot.write_text(json.dumps([{"content": "The office opens at nine"}]))
    mem0.write_text(json.dumps(TWO_USERS))
    assert as_json(home, "import", str(snapshot))["imported"] == 1
    assert as_json(home, "import", str(mem0))["agents"] == ["alice", "bob"]
    run(home, "remember", "The office closes at six")
    assert _memories_in(home / "agents" / agent / "memory.db") == [
        (agent, "The office closes at six"), (agent, "The office opens at nine")]
    assert sorted(p.name for p in (home / "agents").iterdir()) == sorted(["alice", "bob", agent])


def _ids_in(db: Path) -> list[tuple[str, str]]:
    """(id, agent) of every memory a database file holds, read with sqlite3 itself."""
    with sqlite3.connect(db) as conn:
        return sorted(conn.execute("SELECT id, agent FROM memories"))


@pytest.mark.parametrize("per_agent", [True, False], ids=["per-agent", "shared"])
@pytest.mark.parametrize("through_view", [False, True], ids=["own-engine", "for-agent-view"])
def test_a_snapshot_entry_of_the_importers_scope_gets_an_id_of_its_own_when_another_agent_holds_its_id(
        tmp_path: Path, per_agent: bool, through_view: bool) -> None:
    """An entry claiming alice's scope whose id bob holds: with one database of every agent it got an
    id of its own; with one per agent it kept bob's id in alice's file, one id then naming two
    memories (``engram migrate`` refused bob's file, the mem0 facade the id). Now both layouts give
    alice the same id, the one any entry re-id'd gets, and bob's memory stays as it was."""
    home = tmp_path / "home"
    options = {"home": home, "per_agent_databases": per_agent, "embeddings": {"provider": "none"},
               "files": {"enabled": False}}
    with Engram.from_settings(agent="bob", **options) as bob:
        taken = bob.remember("bob's locker code is 4411").memory.id
    entries = [{"id": taken, "scope": "agent:alice", "content": "alice waters the plants on sundays",
                "created_at": 1_700_000_000.0},
               {"id": "never-held-anywhere", "scope": "agent:alice", "content": "alice takes the early train",
                "created_at": 1_700_000_000.0}]
    document = json.dumps({"format": "engram-snapshot", "version": 1, "memories": entries})
    with Engram.from_settings(agent="app" if through_view else "alice", **options) as opened:
        alice = opened.for_agent("alice") if through_view else opened
        result = alice.import_snapshot(document)
        assert (result.imported, result.skipped, result.warnings) == (2, 0, ())
        by_content = {m.content: m.id for m in alice.list()}
        again = alice.import_snapshot(document)  # a re-run finds what it imported
        assert (again.imported, again.skipped) == (0, 2)
    renamed = by_content["alice waters the plants on sundays"]
    assert renamed != taken
    assert renamed == derived_id(("snapshot", "alice", taken), 1_700_000_000.0)  # any re-id'd entry's id
    assert by_content["alice takes the early train"] == "never-held-anywhere"  # an id no one holds is kept
    with Engram.from_settings(agent="bob", **options) as bob:
        assert [(m.id, m.content) for m in bob.list()] == [(taken, "bob's locker code is 4411")]
    if per_agent:
        assert _ids_in(home / "agents" / "alice" / "memory.db") == sorted(
            [(renamed, "alice"), ("never-held-anywhere", "alice")])
        assert _ids_in(home / "agents" / "bob" / "memory.db") == [(taken, "bob")]


@pytest.mark.parametrize("per_agent", [True, False], ids=["per-agent", "shared"])
def test_a_ptrclaw_import_links_by_key_to_the_agents_own_stored_entries_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, per_agent: bool) -> None:
    # PtrClaw keeps an imported entry's links, by key, to entries already stored; engram dropped a
    # link to a key not in the snapshot. It links to this agent's entry, never to another agent's.
    home = tmp_path / "home"
    _layout(home, monkeypatch, per_agent)
    run(home, "-a", "bob", "remember", "--key", "tools", "Bob's tools note")
    shell = as_json(home, "-a", "alice", "remember", "--key", "shell", "Uses zsh")
    source = tmp_path / "ptrclaw.json"
    source.write_text(json.dumps([{"key": "dotfiles", "content": "Keeps dotfiles in git", "links": ["shell", "tools"]}]))
    assert as_json(home, "-a", "alice", "import", str(source))["imported"] == 1
    assert as_json(home, "-a", "alice", "get", "dotfiles")["links"] == [shell["memory"]["id"]]
    assert as_json(home, "-a", "bob", "get", "tools")["links"] == []
