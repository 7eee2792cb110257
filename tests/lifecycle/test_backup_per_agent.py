"""Backups in a home with one database per agent (``per_agent_databases``): one
``lifecycle.backup.folder`` for all keeps each agent's backups apart, and the operator's
``engram backup`` backs up every agent's database. The CLI in-process against a real home
folder (real SQLite files).

Review: with a shared backup folder every agent's backups had the same file stem (``memory``), so
each agent listed everyone's, and pruning one agent's deleted the others'; and the operator's
``engram backup`` backed up the configured agent's database alone."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from engram.errors import ValidationError
from engram.interfaces.cli.app import app
from engram.lifecycle.backup import agents_in
from tests.cli_in_process import cli_output, runner

PER_AGENT = {"ENGRAM_PER_AGENT_DATABASES": "true", "ENGRAM_EMBEDDINGS__PROVIDER": "none", "ENGRAM_FILES__ENABLED": "false"}


def _cli(home: Path, env: dict[str, str], *args: str) -> str:
    return cli_output(home, *args, env=env)


def _contents(home: Path, env: dict[str, str], agent: str) -> list[str]:
    return sorted(m["content"] for m in json.loads(_cli(home, env, "--agent", agent, "--json", "list")))


def _listed(home: Path, env: dict[str, str], *view: str) -> list[dict]:
    return json.loads(_cli(home, env, *view, "--json", "backup", "--list"))


def test_a_shared_backup_folder_keeps_each_agents_backups_apart(tmp_path: Path) -> None:
    home, shared = tmp_path / "home", tmp_path / "backups"
    env = {**PER_AGENT, "ENGRAM_LIFECYCLE__BACKUP__FOLDER": str(shared), "ENGRAM_LIFECYCLE__BACKUP__KEEP": "2"}
    _cli(home, env, "--agent", "alice", "remember", "alice's diary is under the bed", "--key", "diary")
    alices = [json.loads(_cli(home, env, "--agent", "alice", "--json", "backup"))["path"] for _ in range(2)]
    _cli(home, env, "--agent", "bob", "remember", "bob plays chess", "--key", "chess")
    bobs = [json.loads(_cli(home, env, "--agent", "bob", "--json", "backup"))["path"] for _ in range(3)]

    # bob's rotation (keep 2) pruned his own oldest, never alice's.
    assert all(Path(p).is_file() for p in alices)
    assert not Path(bobs[0]).exists() and all(Path(p).is_file() for p in bobs[1:])
    assert {Path(p).parent for p in alices} == {shared / "alice"} and {Path(p).parent for p in bobs} == {shared / "bob"}
    # Each agent lists its own; the operator lists each agent's with its agent.
    assert sorted(b["path"] for b in _listed(home, env, "--agent", "alice")) == sorted(alices)
    assert sorted(b["path"] for b in _listed(home, env, "--agent", "bob")) == sorted(bobs[1:])
    assert sorted((b["agent"], b["path"]) for b in _listed(home, env)) == sorted(
        [("alice", p) for p in alices] + [("bob", p) for p in bobs[1:]])
    for path in alices:
        assert set(agents_in(Path(path))) == {"alice"}

    # The operator's restore by file name alone finds the one backup, into its agent's database.
    _cli(home, env, "--agent", "alice", "remember", "alice moved the diary", "--key", "moved")
    done = json.loads(_cli(home, env, "--json", "restore", Path(alices[-1]).name, "--yes"))
    assert done["restored"] == alices[-1] and done["database"] == str(home / "agents" / "alice" / "memory.db")
    assert _contents(home, env, "alice") == ["alice's diary is under the bed"]
    assert _contents(home, env, "bob") == ["bob plays chess"]


def test_a_backup_left_at_the_top_of_the_shared_folder_is_still_restored_by_its_path(tmp_path: Path) -> None:
    # Backups taken before each agent had a subfolder stay where they were: no agent lists or
    # prunes them, and the operator restores one by its path into the database of the agent it holds.
    home, shared = tmp_path / "home", tmp_path / "backups"
    env = {**PER_AGENT, "ENGRAM_LIFECYCLE__BACKUP__FOLDER": str(shared), "ENGRAM_LIFECYCLE__BACKUP__KEEP": "1"}
    _cli(home, env, "--agent", "alice", "remember", "alice's diary is under the bed", "--key", "diary")
    taken = Path(json.loads(_cli(home, env, "--agent", "alice", "--json", "backup"))["path"])
    earlier = shared / taken.name
    shutil.copyfile(taken, earlier)
    _cli(home, env, "--agent", "alice", "backup")  # keep 1: prunes her subfolder only
    _cli(home, env, "--agent", "alice", "remember", "alice moved the diary", "--key", "moved")

    done = json.loads(_cli(home, env, "--json", "restore", str(earlier), "--yes"))

    assert earlier.is_file() and done["database"] == str(home / "agents" / "alice" / "memory.db")
    assert _contents(home, env, "alice") == ["alice's diary is under the bed"]


def test_the_operators_backup_backs_up_every_agents_database(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for agent in ("alice", "bob"):
        _cli(home, PER_AGENT, "--agent", agent, "remember", f"{agent} keeps a note", "--key", "note")

    done = json.loads(_cli(home, PER_AGENT, "--json", "backup"))

    taken = {shown["agent"]: Path(shown["path"]) for shown in [done, *done["agent_databases"]]}
    assert {"alice", "bob"} <= set(taken)
    for agent in ("alice", "bob"):
        assert taken[agent].parent == home / "agents" / agent / "backups"
        assert set(agents_in(taken[agent])) == {agent}
    plain = _cli(home, PER_AGENT, "backup")
    assert "agent alice's backup written" in plain and "agent bob's backup written" in plain

    # --all-agents: the operator's, even with an agent set in the environment; beside --agent, refused.
    as_bob = {**PER_AGENT, "ENGRAM_AGENT": "bob"}
    alone = json.loads(_cli(home, as_bob, "--json", "backup"))
    assert alone["agent"] == "bob" and "agent_databases" not in alone
    every = json.loads(_cli(home, as_bob, "--json", "backup", "--all-agents"))
    assert {"alice", "bob"} <= {shown["agent"] for shown in [every, *every["agent_databases"]]}
    both = runner.invoke(app, ["--home", str(home), "--agent", "bob", "backup", "--all-agents"], env=PER_AGENT)
    assert isinstance(both.exception, ValidationError) and both.exception.field == "--all-agents"
    # An agent's backup is its own database's alone.
    assert [b["agent"] for b in _listed(home, PER_AGENT, "--agent", "alice")] == ["alice"] * 3


def test_the_operators_vacuum_rebuilds_every_agents_database(tmp_path: Path) -> None:
    """Review: ``engram vacuum`` run as the operator rebuilt the configured agent's database alone."""
    home = tmp_path / "home"
    for agent in ("alice", "bob"):
        _cli(home, PER_AGENT, "--agent", agent, "remember", f"{agent}'s note", "--key", "note")
        # Free pages in each file, as deleted rows leave them, for a vacuum to give back.
        with sqlite3.connect(home / "agents" / agent / "memory.db") as conn:
            conn.execute("CREATE TABLE scratch AS SELECT randomblob(400000) AS b")
        with sqlite3.connect(home / "agents" / agent / "memory.db") as conn:
            conn.execute("DROP TABLE scratch")
        with sqlite3.connect(home / "agents" / agent / "memory.db") as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # into the file itself, where a vacuum finds them
    sizes = {agent: (home / "agents" / agent / "memory.db").stat().st_size for agent in ("alice", "bob")}

    done = json.loads(_cli(home, PER_AGENT, "--json", "vacuum"))
    by_agent = {done["agent"]: done, **{d["agent"]: d for d in done["agent_databases"]}}
    assert {"alice", "bob"} <= set(by_agent)
    for agent in ("alice", "bob"):  # each file rebuilt: its free pages given back
        after = (home / "agents" / agent / "memory.db").stat().st_size
        assert by_agent[agent]["after_bytes"] == after < sizes[agent] == by_agent[agent]["before_bytes"]

    # One agent's run rebuilds its own file only; beside --all-agents it is refused.
    alone = json.loads(_cli(home, PER_AGENT, "--agent", "bob", "--json", "vacuum"))
    assert set(alone) == {"before_bytes", "after_bytes"}
    refused = runner.invoke(app, ["--home", str(home), "--agent", "bob", "vacuum", "--all-agents"], env=PER_AGENT)
    assert isinstance(refused.exception, ValidationError) and refused.exception.field == "--all-agents"


def test_an_agent_folder_left_under_its_name_as_typed_is_one_agent_to_the_operator(tmp_path: Path) -> None:
    # agents/Claude/ (an earlier version's name, left beside agents/!claude/ since the latter
    # existed) and agents/!claude/ are both Claude's. Review: the operator's run listed Claude twice:
    # `backup --list` showed each backup twice, `restore NAME` refused it as several agents' backup.
    home = tmp_path / "home"
    _cli(home, PER_AGENT, "--agent", "Claude", "remember", "claude keeps a note", "--key", "note")
    made = Path(json.loads(_cli(home, PER_AGENT, "--agent", "Claude", "--json", "backup"))["path"])
    (home / "agents" / "Claude").mkdir()
    shutil.copy(home / "agents" / "!claude" / "memory.db", home / "agents" / "Claude" / "memory.db")

    listed = json.loads(_cli(home, PER_AGENT, "--json", "backup", "--list"))
    assert [(b["agent"], b["path"]) for b in listed] == [("Claude", str(made))]
    _cli(home, PER_AGENT, "--agent", "Claude", "forget", "note")
    _cli(home, PER_AGENT, "restore", made.name, "--yes")
    assert _contents(home, PER_AGENT, "Claude") == ["claude keeps a note"]
