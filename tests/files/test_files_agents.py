"""Agents kept apart in the memory folder: per-agent databases each sync only their own part of it,
and ClawCode's session folders belong to one agent whoever syncs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engram.interfaces.cli.app import app
from tests.cli_in_process import cli_output

runner = CliRunner()


def _run(home: Path, *args: str) -> str:
    result = runner.invoke(app, ["--home", str(home), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def _keys(home: Path, agent: str) -> set[str]:
    """Every key stored in ``agent``'s own database, whatever its scope."""
    import sqlite3

    with sqlite3.connect(home / "agents" / agent / "memory.db") as db:
        return {key for (key,) in db.execute("SELECT key FROM memories")}


@pytest.fixture
def per_agent(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("ENGRAM_PER_AGENT_DATABASES", "true")
    return tmp_path / "home"


def test_per_agent_databases_each_sync_only_their_own_agent_folder(per_agent: Path) -> None:
    home = per_agent
    _run(home, "--agent", "alice", "remember", "alice private diary", "--key", "adiary", "--tags", "notes")
    _run(home, "--agent", "bob", "remember", "bob private note", "--key", "bnote", "--tags", "notes")
    bob_sync = json.loads(_run(home, "--agent", "bob", "--json", "sync"))
    alice_sync = json.loads(_run(home, "--agent", "alice", "--json", "sync"))
    assert bob_sync["to_database"] == alice_sync["to_database"] == {"created": 0, "updated": 0, "forgotten": 0, "moved": 0}
    assert _keys(home, "alice") == {"adiary"} and _keys(home, "bob") == {"bnote"}

    _run(home, "--agent", "alice", "forget", "adiary")
    alice_notes = home / "memory/agents/alice/notes.md"
    assert "alice private diary" not in alice_notes.read_text()
    before = alice_notes.read_text()
    bob_sync = json.loads(_run(home, "--agent", "bob", "--json", "sync"))
    assert bob_sync["to_files"]["files_written"] == [] and alice_notes.read_text() == before
    alice_sync = json.loads(_run(home, "--agent", "alice", "--json", "sync"))
    assert alice_sync["to_database"]["created"] == 0
    assert json.loads(_run(home, "--agent", "alice", "--json", "list")) == []
    assert "alice private diary" not in alice_notes.read_text()
    assert _keys(home, "bob") == {"bnote"}


def test_per_agent_databases_share_global_memories_through_the_global_folder(per_agent: Path) -> None:
    # A global memory is every agent's: with a database per agent, global/ carries it to each, and
    # a forget by one agent reaches the others (each database keeps its own sync state).
    home = per_agent
    _run(home, "--agent", "alice", "remember", "The office closes at six", "--key", "office", "--scope", "global",
         "--tags", "facts")
    _run(home, "--agent", "bob", "sync")
    assert "office" in _keys(home, "bob")
    _run(home, "--agent", "alice", "sync")
    [copy] = json.loads(_run(home, "--agent", "bob", "--json", "list", "--scope", "global"))
    _run(home, "--agent", "bob", "forget", copy["id"])
    assert "The office closes" not in (home / "memory/global/facts.md").read_text()
    _run(home, "--agent", "alice", "sync")
    listed = json.loads(_run(home, "--agent", "alice", "--json", "list", "--scope", "global"))
    assert [m["key"] for m in listed] == []


def test_per_agent_databases_leave_other_agents_type_files(per_agent: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_FILES__TYPE_JSON", "true")
    home = per_agent
    _run(home, "--agent", "alice", "remember", "alice private diary", "--key", "adiary", "--tags", "notes")
    [diary] = list((home / "memory/types").rglob("*.json"))
    _run(home, "--agent", "bob", "remember", "bob private note", "--key", "bnote", "--tags", "notes")
    _run(home, "--agent", "bob", "sync")
    assert diary.exists() and len(list((home / "memory/types").rglob("*.json"))) == 2


@pytest.fixture
def session_folders(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("ENGRAM_FILES__SESSION_FOLDERS", "session")
    return tmp_path / "home"


def _count(home: Path, *who: str) -> int:
    return int(json.loads(_run(home, *who, "--json", "count"))["count"])


def test_session_folders_belong_to_one_agent_whoever_syncs(session_folders: Path) -> None:
    home = session_folders
    _run(home, "--agent", "alice", "--session", "s1", "remember", "--scope", "session", "alice private session note",
         "--key", "anote", "--tags", "notes")
    assert "alice private session note" in (home / "memory/sessions/s1/notes.md").read_text()
    out = json.loads(_run(home, "--json", "sync"))  # run as the default agent
    assert out["to_database"] == {"created": 0, "updated": 0, "forgotten": 0, "moved": 0}
    assert json.loads(_run(home, "--session", "s1", "--json", "list")) == []
    assert _count(home, "--agent", "alice", "--session", "s1") == 1

    # The default agent's own sessions stay nested under its name, and both survive either sync.
    _run(home, "--session", "s1", "remember", "--scope", "session", "default session note", "--key", "dnote", "--tags", "notes")
    assert "default session note" in (home / "memory/sessions/default/s1/notes.md").read_text()
    for who in (("--agent", "alice"), (), ("--agent", "alice")):
        out = json.loads(_run(home, *who, "--json", "sync"))
        assert out["to_database"] == {"created": 0, "updated": 0, "forgotten": 0, "moved": 0}, who
        assert out["problems"] == []
    assert _count(home, "--agent", "alice", "--session", "s1") == 1
    assert _count(home, "--session", "s1") == 1
    assert "alice private session note" not in (home / "memory/sessions/default/s1/notes.md").read_text()


def test_a_session_folder_sync_does_not_read_is_never_taken_as_deletions(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # Written as sessions/default/s1/ before the switch to ClawCode's layout, which reads the
    # default agent's sessions at sessions/s1/: reported, not read, and its entries kept.
    home = tmp_path / "home"
    _run(home, "--session", "s1", "remember", "--scope", "session", "default session note", "--key", "dnote", "--tags", "notes")
    monkeypatch.setenv("ENGRAM_FILES__SESSION_FOLDERS", "session")
    out = json.loads(_run(home, "--json", "sync"))
    assert out["to_database"]["forgotten"] == 0
    assert len(out["problems"]) == 1 and out["problems"][0].startswith("sessions/default/s1/notes.md")
    assert _count(home, "--session", "s1") == 1


def test_a_file_too_deep_in_an_agent_folder_is_not_named_a_session_folder(session_folders: Path) -> None:
    # agents/default/deep/ has three parts and names the default agent, as sessions/default/s1/
    # does: only the latter is a session folder in the other layout.
    home = session_folders
    _run(home, "remember", "a note", "--key", "anote")
    deep = home / "memory" / "agents" / "default" / "deep"
    deep.mkdir(parents=True)
    (deep / "x.md").write_text("- stray note\n")
    out = json.loads(_run(home, "--json", "sync"))
    assert len(out["problems"]) == 1, out["problems"]
    assert out["problems"][0].startswith("agents/default/deep/x.md")
    assert "at another level" in out["problems"][0] and "move this folder" not in out["problems"][0]


def _globals(home: Path, agent: str) -> list[tuple[str, str, str]]:
    """``agent``'s global memories as (id, key, content), read through the CLI."""
    listed = json.loads(_run(home, "--agent", agent, "--json", "list", "--scope", "global"))
    return sorted((m["id"], m["key"], m["content"]) for m in listed)


def _global_folder(home: Path) -> tuple[list[str], list[Path]]:
    """The keys of the entries in ``global/``'s memory files, and its ``.conflict`` files."""
    folder = home / "memory/global"
    keys = [line.split(" key:")[1].split()[0] for md in sorted(folder.glob("*.md")) for line in md.read_text().splitlines()
            if "<!-- id:" in line]
    return keys, sorted(folder.glob("*.conflict"))


def _sync_rounds(home: Path, *agents: str, rounds: int = 3) -> list[list[tuple[str, str, str]]]:
    """Each agent syncs in turn, ``rounds`` times; the global memories of each after every round."""
    seen = []
    for _ in range(rounds):
        for agent in agents:
            _run(home, "--agent", agent, "sync")
        seen.append([_globals(home, agent) for agent in agents])
    return seen


def test_two_databases_global_memories_of_one_key_are_one_memory_and_a_conflict(per_agent: Path) -> None:
    # alice and bob each remember a global `rule`: two versions of one memory (a key is unique in
    # its scope). global/ holds the earliest, every database comes to hold it under its id, and the
    # other version is a conflict; never a copy under a key made from its content (which also made
    # alice's sync forget her own memory and take bob's text under her key).
    home = per_agent
    alice_rule, bob_rule = "Alice's rule: deploy on Fridays", "Bob's rule: never deploy on Fridays"
    _run(home, "--agent", "alice", "remember", alice_rule, "--key", "rule", "--scope", "global", "--tags", "policy")
    _run(home, "--agent", "bob", "remember", bob_rule, "--key", "rule", "--scope", "global", "--tags", "policy")
    [(rule_id, _, _)] = _globals(home, "alice")
    for alice_sees, bob_sees in _sync_rounds(home, "alice", "bob"):
        assert alice_sees == bob_sees == [(rule_id, "rule", alice_rule)]
        keys, [conflict] = _global_folder(home)
        assert keys == ["rule"] and bob_rule in conflict.read_text()
    assert _keys(home, "alice") == _keys(home, "bob") == {"rule"}
    [listed] = json.loads(_run(home, "--agent", "bob", "--json", "conflicts"))
    assert (listed["id"], listed["kind"], listed["file_version"]) == (rule_id, "same-key", [bob_rule])

    # Taking bob's version applies it to the one memory, which reaches alice through the folder.
    _run(home, "--agent", "bob", "conflicts", "resolve", rule_id, "--take", "file")
    for alice_sees, bob_sees in _sync_rounds(home, "alice", "bob"):
        assert alice_sees == bob_sees == [(rule_id, "rule", bob_rule)]
        assert _global_folder(home) == (["rule"], [])

    # An edit of its entry reaches both databases; a forget by one is not brought back by the other.
    policy = home / "memory/global/policy.md"
    policy.write_text(policy.read_text().replace("never deploy", "never ever deploy"))
    for alice_sees, bob_sees in _sync_rounds(home, "alice", "bob"):
        assert alice_sees == bob_sees == [(rule_id, "rule", "Bob's rule: never ever deploy on Fridays")]
    _run(home, "--agent", "alice", "forget", rule_id)
    for alice_sees, bob_sees in _sync_rounds(home, "bob", "alice"):
        assert alice_sees == bob_sees == []
        assert _global_folder(home) == ([], [])


def test_a_third_database_settles_two_global_versions_of_one_key_it_holds_neither_of(per_agent: Path) -> None:
    # alice's and bob's versions of `rule` reach global/ in two files before either sees the other's;
    # carol, syncing first, keeps the earliest (alice's) as the memory and bob's as the conflict, and
    # every database then holds that one memory, however often they sync.
    home = per_agent
    alice_rule, bob_rule = "Alice's rule: deploy on Fridays", "Bob's rule: never deploy on Fridays"
    _run(home, "--agent", "alice", "remember", alice_rule, "--key", "rule", "--scope", "global", "--tags", "policy")
    _run(home, "--agent", "bob", "remember", bob_rule, "--key", "rule", "--scope", "global", "--tags", "rules")
    [(rule_id, _, _)] = _globals(home, "alice")
    for seen in _sync_rounds(home, "carol", "bob", "alice"):
        assert seen == [[(rule_id, "rule", alice_rule)]] * 3
        keys, [conflict] = _global_folder(home)
        assert keys == ["rule"] and bob_rule in conflict.read_text()
    assert _keys(home, "alice") == _keys(home, "bob") == _keys(home, "carol") == {"rule"}


def test_two_databases_global_memories_of_one_key_and_one_text_are_one_memory(per_agent: Path) -> None:
    # The same fact remembered by both under one key is no conflict: bob's copy simply leaves.
    home = per_agent
    for agent in ("alice", "bob"):
        _run(home, "--agent", agent, "remember", "The office closes at six", "--key", "office", "--scope", "global",
             "--tags", "facts")
    [(office_id, _, _)] = _globals(home, "alice")
    for alice_sees, bob_sees in _sync_rounds(home, "bob", "alice"):
        assert alice_sees == bob_sees == [(office_id, "office", "The office closes at six")]
        assert _global_folder(home) == (["office"], [])


def test_a_same_key_conflict_is_resolved_once_the_database_holds_the_memory(per_agent: Path) -> None:
    # alice's sync keeps bob's version as the conflict before bob's database learns of alice's
    # memory: bob's --take file is refused until he syncs (applied to his own version, it would be
    # lost when his sync forgets it), then applied to the one memory.
    home = per_agent
    alice_rule, bob_rule = "Alice's rule: deploy on Fridays", "Bob's rule: never deploy on Fridays"
    _run(home, "--agent", "alice", "remember", alice_rule, "--key", "rule", "--scope", "global", "--tags", "policy")
    _run(home, "--agent", "bob", "remember", bob_rule, "--key", "rule", "--scope", "global", "--tags", "rules")
    [(rule_id, _, _)] = _globals(home, "alice")
    _run(home, "--agent", "alice", "sync")
    refused = runner.invoke(app, ["--home", str(home), "--agent", "bob", "conflicts", "resolve", rule_id, "--take", "file"])
    assert refused.exit_code != 0 and "engram sync, then resolve it" in str(refused.exception)
    assert [content for _, _, content in _globals(home, "bob")] == [bob_rule]
    _run(home, "--agent", "bob", "sync")
    _run(home, "--agent", "bob", "conflicts", "resolve", rule_id, "--take", "file")
    for alice_sees, bob_sees in _sync_rounds(home, "alice", "bob"):
        assert alice_sees == bob_sees == [(rule_id, "rule", bob_rule)]
        assert _global_folder(home) == (["rule"], [])


def test_a_version_edited_after_another_sync_took_it_out_is_one_more_same_key_conflict(per_agent: Path) -> None:
    # bob's version of `rule` reached global/, alice's sync took it out as a same-key conflict, and
    # bob then edits it before his next sync. That sync first sees an entry the file lost while his
    # database changed it (which puts it back as a deleted-in-file conflict), then the same-key rule
    # takes it out again: only the second says what happened, so each version is one conflict.
    home = per_agent
    alice_rule, bob_rule, bob_edit = ("Alice's rule: deploy on Fridays", "Bob's rule: never deploy on Fridays",
                                      "Bob's rule: never deploy after noon on Fridays")
    _run(home, "--agent", "alice", "remember", alice_rule, "--key", "rule", "--scope", "global", "--tags", "policy")
    # In another file than alice's: bob's write reads only its own file, so it meets no other version.
    _run(home, "--agent", "bob", "remember", bob_rule, "--key", "rule", "--scope", "global", "--tags", "rules")
    [(rule_id, _, _)] = _globals(home, "alice")
    _run(home, "--agent", "alice", "sync")
    assert len(_global_folder(home)[1]) == 1 and [content for _, _, content in _globals(home, "bob")] == [bob_rule]
    _run(home, "--agent", "bob", "remember", bob_edit, "--key", "rule", "--scope", "global", "--tags", "rules")
    for alice_sees, bob_sees in _sync_rounds(home, "bob", "alice"):
        assert alice_sees == bob_sees == [(rule_id, "rule", alice_rule)]
        assert _global_folder(home)[0] == ["rule"]
    listed = json.loads(_run(home, "--agent", "bob", "--json", "conflicts"))
    assert sorted((c["id"], c["kind"], tuple(c["file_version"])) for c in listed) == [
        (rule_id, "same-key", (bob_edit,)), (rule_id, "same-key", (bob_rule,))]
    assert len(_global_folder(home)[1]) == 2


def _global_versions(home: Path, agent: str) -> list[tuple[str, str, float, tuple[str, ...]]]:
    """``agent``'s global memories as (id, content, created_at, tags)."""
    listed = json.loads(_run(home, "--agent", agent, "--json", "list", "--scope", "global"))
    return sorted((m["id"], m["content"], m["created_at"], tuple(m["tags"])) for m in listed)


def _forgotten_winner(home: Path) -> tuple[str, tuple[str, str, float, tuple[str, ...]]]:
    """alice's and bob's global `rule` settled (alice's stays, bob's is the same-key conflict),
    then alice's forgotten in both databases: the forgotten id and bob's version."""
    _run(home, "--agent", "alice", "remember", "Alice's rule: deploy on Fridays", "--key", "rule", "--scope", "global",
         "--tags", "policy")
    _run(home, "--agent", "bob", "remember", "Bob's rule: never deploy on Fridays", "--key", "rule", "--scope", "global",
         "--tags", "rules")
    [(rule_id, *_)] = _global_versions(home, "alice")
    [bobs] = _global_versions(home, "bob")
    _sync_rounds(home, "alice", "bob", rounds=1)
    _run(home, "--agent", "alice", "forget", rule_id)
    assert _sync_rounds(home, "alice", "bob", rounds=1) == [[[], []]]
    return rule_id, bobs


def test_a_same_key_version_taken_after_the_memory_that_stayed_was_forgotten_comes_back_as_itself(per_agent: Path) -> None:
    # Review: it came back under the forgotten memory's id (alice's), with bob's text, time and
    # tags, so the id the audit trail says was forgotten was a memory again.
    home = per_agent
    rule_id, bobs = _forgotten_winner(home)
    _run(home, "--agent", "bob", "conflicts", "resolve", rule_id, "--take", "file")
    for alice_sees, bob_sees in _sync_rounds(home, "alice", "bob"):
        assert alice_sees == bob_sees == [(bobs[0], "rule", bobs[1])]
    assert _global_versions(home, "alice") == _global_versions(home, "bob") == [bobs]
    assert _global_folder(home) == (["rule"], [])


def test_a_same_key_version_taken_after_another_memory_took_the_key_is_applied_to_it(per_agent: Path) -> None:
    # Review: once alice had remembered a new `rule` after forgetting the one that stayed, bob's
    # --take file was refused as "not in this database yet ... until it syncs", however often he synced.
    home = per_agent
    rule_id, bobs = _forgotten_winner(home)
    _run(home, "--agent", "alice", "remember", "Alice's new rule", "--key", "rule", "--scope", "global", "--tags", "policy")
    _sync_rounds(home, "alice", "bob", rounds=1)
    [(new_id, *_)] = _global_versions(home, "alice")
    _run(home, "--agent", "bob", "conflicts", "resolve", rule_id, "--take", "file")
    for alice_sees, bob_sees in _sync_rounds(home, "alice", "bob"):
        assert alice_sees == bob_sees == [(new_id, "rule", bobs[1])]
    assert _global_folder(home) == (["rule"], [])


def test_a_version_put_back_and_taken_out_in_one_sync_is_neither_added_nor_removed_in_its_report(per_agent: Path) -> None:
    # bob edits his version of `rule` (taken out of global/ by alice's sync) while his folder is
    # not synced (files off for that run). His sync puts the edit back (deleted-in-file) and takes
    # it out again (same-key) before any file is written. Review: the report said 1 added, 1 removed.
    home = per_agent
    _run(home, "--agent", "alice", "remember", "Alice's rule: deploy on Fridays", "--key", "rule", "--scope", "global",
         "--tags", "policy")
    _run(home, "--agent", "bob", "remember", "Bob's rule: never deploy on Fridays", "--key", "rule", "--scope", "global",
         "--tags", "rules")
    _run(home, "--agent", "alice", "sync")
    cli_output(home, "--agent", "bob", "remember", "Bob's rule: never deploy after noon", "--key", "rule", "--scope",
               "global", "--tags", "rules", env={"ENGRAM_FILES__ENABLED": "false"})
    report = json.loads(_run(home, "--agent", "bob", "--json", "sync"))
    assert report["to_database"] == {"created": 1, "updated": 0, "forgotten": 1, "moved": 0}  # alice's came, his edit left
    assert report["to_files"] == {"added": 0, "updated": 0, "removed": 0, "files_written": []}
    [conflict] = report["conflicts"]
    assert "Bob's rule: never deploy after noon" in (home / "memory" / conflict).read_text()


@pytest.mark.parametrize("operator", [(), ("--all-agents",)])
def test_the_operators_resolve_settles_a_conflict_of_an_agents_folder_in_that_agents_database(
        per_agent: Path, operator: tuple[str, ...]) -> None:
    # Review: run as no agent (or --all-agents with ENGRAM_AGENT=alice), resolve looked for bob's
    # memory in the database it opened (the default agent's, or alice's): `conflicts` showed it
    # "(forgotten)", and --take file said "applied the file version", deleted the .conflict file
    # and left bob's memory as it was: the file's version was lost.
    home = per_agent
    _run(home, "--agent", "bob", "remember", "bob plays chess", "--key", "chess", "--tags", "games")
    _run(home, "--agent", "bob", "sync")
    games = home / "memory/agents/bob/games.md"
    games.write_text(games.read_text().replace("bob plays chess", "bob plays chess badly"))
    cli_output(home, "--agent", "bob", "remember", "bob plays chess well", "--key", "chess", "--tags", "games",
               env={"ENGRAM_FILES__ENABLED": "false"})
    _run(home, "--agent", "bob", "sync")
    env = {"ENGRAM_AGENT": "alice"} if operator else None
    [conflict] = json.loads(cli_output(home, "--json", "conflicts", *operator, env=env))
    assert "database: bob plays chess well" in cli_output(home, "conflicts", *operator, env=env)

    cli_output(home, "conflicts", "resolve", conflict["id"], "--take", "file", *operator, env=env)

    assert [m["content"] for m in json.loads(_run(home, "--agent", "bob", "--json", "list"))] == ["bob plays chess badly"]
    assert json.loads(cli_output(home, "--json", "conflicts", *operator, env=env)) == []
    # Nor was a database made for the agent the run names (the default agent, or alice), whose is none.
    assert _keys(home, "bob") == {"chess"} and sorted(p.name for p in (home / "agents").iterdir()) == ["bob"]


@pytest.mark.parametrize("operator", [(), ("--all-agents",)])
def test_the_operators_conflicts_settle_a_global_conflict_in_every_database_and_make_none(
        per_agent: Path, operator: tuple[str, ...]) -> None:
    # Review: run as no agent, `conflicts` and `conflicts resolve` opened the default agent's
    # database, made it empty in a home where only alice and bob had written, and looked for a
    # global conflict's memory there: shown "(forgotten)", though both databases held it.
    home = per_agent
    _run(home, "--agent", "alice", "remember", "the office closes at six", "--key", "office", "--scope", "global",
         "--tags", "facts")
    _run(home, "--agent", "bob", "remember", "bob plays chess", "--key", "chess", "--tags", "games")
    _run(home, "sync")  # bob's database holds the global memory too
    facts = home / "memory/global/facts.md"
    facts.write_text(facts.read_text().replace("closes at six", "closes at seven"))
    cli_output(home, "--agent", "alice", "remember", "the office closes at five", "--key", "office", "--scope", "global",
               "--tags", "facts", env={"ENGRAM_FILES__ENABLED": "false"})
    _run(home, "sync")  # both changed: alice's version stays in every database, the file's is kept
    env = {"ENGRAM_AGENT": "carol"} if operator else None  # --all-agents: the operator, whoever is set
    [conflict] = json.loads(cli_output(home, "--json", "conflicts", *operator, env=env))
    assert conflict["kind"] == "both-changed" and conflict["file_version"] == ["the office closes at seven"]
    assert "database: the office closes at five" in cli_output(home, "conflicts", *operator, env=env)

    cli_output(home, "conflicts", "resolve", conflict["id"], "--take", "file", *operator, env=env)

    for agent in ("alice", "bob"):  # settled in alice's database, carried to bob's by the closing sync
        office = json.loads(_run(home, "--agent", agent, "--json", "get", "office"))
        assert (office["id"], office["content"]) == (conflict["id"], "the office closes at seven"), agent
    assert json.loads(cli_output(home, "--json", "conflicts", *operator, env=env)) == []
    assert sorted(p.name for p in (home / "agents").iterdir()) == ["alice", "bob"]


def test_a_folder_named_as_an_earlier_version_named_it_is_reported_with_its_agent_spelt_as_json(tmp_path: Path) -> None:
    # Claude's folder is agents/!claude/ now; agents/Claude/ beside it (as an earlier version named
    # it) is not read, and the problem names the agent as JSON spells it (was Python's 'Claude').
    home = tmp_path / "home"
    _run(home, "--agent", "Claude", "remember", "a claude note", "--key", "cnote")
    _run(home, "--agent", "Claude", "sync")
    old = home / "memory/agents/Claude"
    old.mkdir(parents=True)
    (old / "old.md").write_text("- a stray old note\n", encoding="utf-8")
    out = json.loads(_run(home, "--agent", "Claude", "--json", "sync"))
    assert out["problems"] == ['agents/Claude/old.md: not read: agents/Claude/ is agent "Claude"\'s folder as an '
                               "earlier version named it; engram names it agents/!claude/ now, which is there too: "
                               "move this folder's files into agents/!claude/"], out
    assert _count(home, "--agent", "Claude") == 1  # the stray note was not imported
