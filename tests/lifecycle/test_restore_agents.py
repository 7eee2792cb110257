"""``engram restore`` in one agent's view never brings another agent's data into play: a backup
(or a live database) holding another agent's memories, conversations or API tokens is refused,
naming them, and nothing changes; the operator's run (no agent chosen) restores any backup. The
CLI in-process against a real home folder (real SQLite files).

Review: with ``per_agent_databases``, ``engram --agent bob restore <alice's backup>`` accepted the
outside file and put alice's memories into bob's database."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram.errors import ValidationError
from engram.interfaces.cli.app import app
from tests.cli_in_process import cli_output, runner


def _cli(home: Path, env: dict[str, str], *args: str) -> str:
    return cli_output(home, *args, env=env)


def _contents(home: Path, env: dict[str, str], agent: str) -> list[str]:
    return sorted(m["content"] for m in json.loads(_cli(home, env, "--agent", agent, "--json", "list")))


@pytest.mark.parametrize("per_agent", [True, False])
def test_an_agent_cannot_restore_a_backup_of_another_agents_data(tmp_path: Path, per_agent: bool) -> None:
    home = tmp_path / "home"
    env = {"ENGRAM_PER_AGENT_DATABASES": str(per_agent).lower(), "ENGRAM_EMBEDDINGS__PROVIDER": "none",
           "ENGRAM_FILES__ENABLED": "false"}
    _cli(home, env, "--agent", "alice", "remember", "alice's diary is under the bed", "--key", "diary")
    _cli(home, env, "--agent", "alice", "history", "append", "telegram:1", "alice's private chat")
    alices = json.loads(_cli(home, env, "--agent", "alice", "--json", "backup"))["path"]
    _cli(home, env, "--agent", "bob", "remember", "bob plays chess", "--key", "chess")

    refused = runner.invoke(app, ["--home", str(home), "--agent", "bob", "restore", alices, "--yes"], env=env)

    err = refused.exception
    assert isinstance(err, ValidationError) and err.field == "backup", refused.output
    assert f"{alices} holds other agents' data: alice (conversations, memories)" in str(err)
    assert "restore as the operator (no --agent)" in err.allowed
    assert _contents(home, env, "bob") == ["bob plays chess"]
    assert _contents(home, env, "alice") == ["alice's diary is under the bed"]

    if per_agent:
        # bob's own backup, into his own database, is his to restore.
        bobs = json.loads(_cli(home, env, "--agent", "bob", "--json", "backup"))["path"]
        _cli(home, env, "--agent", "bob", "remember", "bob lost at chess", "--key", "lost")
        _cli(home, env, "--agent", "bob", "restore", bobs, "--yes")
        assert _contents(home, env, "bob") == ["bob plays chess"]
    else:
        # One shared file: its restore replaces every agent's data, so it is the operator's.
        _cli(home, env, "restore", alices, "--yes")
        assert _contents(home, env, "bob") == [] and _contents(home, env, "alice") == ["alice's diary is under the bed"]


def test_an_agent_cannot_restore_a_shared_database_that_holds_another_agents_data_since(tmp_path: Path) -> None:
    # bob's backup holds only bob's memories, but the shared file it would replace now holds
    # alice's too: restoring it in bob's view would wipe them.
    home = tmp_path / "home"
    env = {"ENGRAM_EMBEDDINGS__PROVIDER": "none", "ENGRAM_FILES__ENABLED": "false"}
    _cli(home, env, "--agent", "bob", "remember", "bob plays chess", "--key", "chess")
    bobs = json.loads(_cli(home, env, "--agent", "bob", "--json", "backup"))["path"]
    _cli(home, env, "--agent", "alice", "remember", "alice's diary is under the bed", "--key", "diary")

    refused = runner.invoke(app, ["--home", str(home), "--agent", "bob", "restore", bobs, "--yes"], env=env)

    err = refused.exception
    assert isinstance(err, ValidationError) and err.field == "backup", refused.output
    assert "holds other agents' data: alice (memories)" in str(err) and f"{bobs} holds" not in str(err)
    assert _contents(home, env, "alice") == ["alice's diary is under the bed"]


PER_AGENT = {"ENGRAM_PER_AGENT_DATABASES": "true", "ENGRAM_EMBEDDINGS__PROVIDER": "none", "ENGRAM_FILES__ENABLED": "false"}


def _shared_backup(tmp_path: Path, *agents: str) -> Path:
    """A backup of a shared database (no per_agent_databases) in which each of ``agents``
    remembered something, or, with none, which holds one global memory: outside every agent's
    backups folder of the per-agent home the tests restore into."""
    home = tmp_path / "shared-home"
    env = {**PER_AGENT, "ENGRAM_PER_AGENT_DATABASES": "false"}
    for agent in agents:
        _cli(home, env, "--agent", agent, "remember", f"{agent} keeps a note", "--key", "note")
    if not agents:
        _cli(home, env, "remember", "the office closes at six", "--key", "office", "--scope", "global")
    return Path(json.loads(_cli(home, env, "--json", "backup"))["path"])


def test_the_operators_restore_goes_into_the_database_of_the_agent_the_backup_is_of(tmp_path: Path) -> None:
    # Review: with per_agent_databases, the operator's `engram restore agents/bob/backups/...`
    # (no --agent) restored bob's backup into the default agent's database.
    home = tmp_path / "home"
    _cli(home, PER_AGENT, "--agent", "bob", "remember", "bob plays chess", "--key", "chess")
    bobs = json.loads(_cli(home, PER_AGENT, "--agent", "bob", "--json", "backup"))["path"]
    _cli(home, PER_AGENT, "--agent", "bob", "remember", "bob lost at chess", "--key", "lost")
    _cli(home, PER_AGENT, "--agent", "alice", "remember", "alice's diary is under the bed", "--key", "diary")

    done = json.loads(_cli(home, PER_AGENT, "--json", "restore", bobs, "--yes"))

    assert done["database"] == str(home / "agents" / "bob" / "memory.db")
    assert _contents(home, PER_AGENT, "bob") == ["bob plays chess"]
    assert _contents(home, PER_AGENT, "default") == []
    assert _contents(home, PER_AGENT, "alice") == ["alice's diary is under the bed"]

    # A backup outside every agent's folder holding one agent's data goes to that agent's database.
    alone = _shared_backup(tmp_path, "carol")
    done = json.loads(_cli(home, PER_AGENT, "--json", "restore", str(alone), "--yes"))
    assert done["database"] == str(home / "agents" / "carol" / "memory.db")
    assert _contents(home, PER_AGENT, "carol") == ["carol keeps a note"]
    assert _contents(home, PER_AGENT, "default") == [] and _contents(home, PER_AGENT, "bob") == ["bob plays chess"]


@pytest.mark.parametrize("agents", [("alice", "bob"), ()])
def test_the_operators_restore_refuses_a_backup_of_no_one_agents_database(tmp_path: Path, agents: tuple[str, ...]) -> None:
    home = tmp_path / "home"
    _cli(home, PER_AGENT, "--agent", "alice", "remember", "alice's diary is under the bed", "--key", "diary")
    outside = _shared_backup(tmp_path, *agents)

    refused = runner.invoke(app, ["--home", str(home), "restore", str(outside), "--yes"], env=PER_AGENT)

    err = refused.exception
    assert isinstance(err, ValidationError) and err.field == "backup", refused.output
    assert "it is in no agent's backups folder" in str(err) and "--agent NAME" in err.allowed
    said = "several agents' data, alice (memories), bob (memories)" if agents else "holds no agent's memories"
    assert said in str(err)
    assert _contents(home, PER_AGENT, "alice") == ["alice's diary is under the bed"]
    assert _contents(home, PER_AGENT, "default") == []
    if not agents:  # --agent chooses the database: global memories are anyone's to restore
        _cli(home, PER_AGENT, "--agent", "alice", "restore", str(outside), "--yes")
        assert _contents(home, PER_AGENT, "alice") == ["the office closes at six"]


def test_the_operators_backup_list_names_every_agents_backups(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for agent in ("alice", "bob"):
        _cli(home, PER_AGENT, "--agent", agent, "remember", f"{agent} keeps a note", "--key", "note")
        _cli(home, PER_AGENT, "--agent", agent, "backup")

    listed = json.loads(_cli(home, PER_AGENT, "--json", "backup", "--list"))

    assert sorted((b["agent"], Path(b["path"]).parent) for b in listed) == [
        ("alice", home / "agents" / "alice" / "backups"), ("bob", home / "agents" / "bob" / "backups")]
    plain = _cli(home, PER_AGENT, "backup", "--list")
    assert "alice" in plain and "bob" in plain
    # An agent's view lists its own.
    assert [b["agent"] for b in json.loads(_cli(home, PER_AGENT, "--agent", "bob", "--json", "backup", "--list"))] == ["bob"]
    # Without a backup named, the operator's restore cannot tell whose newest to take.
    refused = runner.invoke(app, ["--home", str(home), "restore", "--yes"], env=PER_AGENT)
    assert isinstance(refused.exception, ValidationError) and "no backup was named" in str(refused.exception)


def test_all_agents_restores_as_the_operator_when_an_agent_is_set_in_the_environment(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {"ENGRAM_EMBEDDINGS__PROVIDER": "none", "ENGRAM_FILES__ENABLED": "false"}
    _cli(home, env, "--agent", "alice", "remember", "alice's diary is under the bed", "--key", "diary")
    alices = json.loads(_cli(home, env, "--agent", "alice", "--json", "backup"))["path"]
    _cli(home, env, "--agent", "bob", "remember", "bob plays chess", "--key", "chess")
    as_bob = {**env, "ENGRAM_AGENT": "bob"}

    refused = runner.invoke(app, ["--home", str(home), "restore", alices, "--yes"], env=as_bob)
    assert isinstance(refused.exception, ValidationError) and "--all-agents" in refused.exception.allowed
    both = runner.invoke(app, ["--home", str(home), "--agent", "bob", "restore", alices, "--all-agents", "--yes"], env=env)
    assert isinstance(both.exception, ValidationError) and both.exception.field == "--all-agents"
    assert _contents(home, env, "bob") == ["bob plays chess"]

    _cli(home, as_bob, "restore", alices, "--all-agents", "--yes")

    assert _contents(home, env, "bob") == [] and _contents(home, env, "alice") == ["alice's diary is under the bed"]


@pytest.mark.parametrize("shared_folder", [False, True])
def test_the_operators_restore_reads_a_backups_folder_named_with_the_agents_name_as_typed(tmp_path: Path,
                                                                                           shared_folder: bool) -> None:
    # agents/Claude/backups/ (or <lifecycle.backup.folder>/Claude/) is Claude's, as agents/!claude/
    # is, the way the memory folder reads an agent's folder. Review: a backup there holding only
    # global memories was refused as "in no agent's backups folder".
    home = tmp_path / "home"
    env = {**PER_AGENT, **({"ENGRAM_LIFECYCLE__BACKUP__FOLDER": str(tmp_path / "backups")} if shared_folder else {})}
    _cli(home, env, "--agent", "Claude", "remember", "the office closes at six", "--key", "office", "--scope", "global")
    made = Path(json.loads(_cli(home, env, "--agent", "Claude", "--json", "backup"))["path"])
    typed = tmp_path / "backups" / "Claude" if shared_folder else home / "agents" / "Claude" / "backups"
    typed.mkdir(parents=True)
    moved = made.rename(typed / made.name)
    _cli(home, env, "--agent", "Claude", "forget", "office")
    _cli(home, env, "--agent", "alice", "remember", "alice's diary is under the bed", "--key", "diary")

    done = json.loads(_cli(home, env, "--json", "restore", str(moved), "--yes"))

    assert done["database"] == str(home / "agents" / "!claude" / "memory.db")
    assert _contents(home, env, "Claude") == ["the office closes at six"]
    assert _contents(home, env, "alice") == ["alice's diary is under the bed"]


def test_restoring_the_live_database_from_itself_is_refused_naming_the_backup(tmp_path: Path) -> None:
    """``engram restore <the live memory.db> --yes`` backed the file up, copied it onto itself and
    said "restored": the live file is no backup, refused (exit 2, naming ``backup``) before any
    question or change, by any path to it; with per_agent_databases an agent's own database too."""
    import os
    import subprocess
    import sys

    home = tmp_path / "home"
    _cli(home, {}, "remember", "the office closes at six", "--key", "office")
    live = home / "memory.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    code = "from engram.interfaces.cli.app import main; main()"
    for named in (str(live), str(home / "." / "memory.db")):
        done = subprocess.run([sys.executable, "-c", code, "--home", str(home), "restore", named, "--yes"],
                              capture_output=True, text=True, env=env, timeout=60)
        assert done.returncode == 2 and done.stdout == "", done.stderr
        assert done.stderr.startswith(f"error: backup: {named} is the live database itself, not a backup")
    assert not (home / "backups").exists()  # no pre-restore backup: nothing was done
    assert _contents(home, {}, "default") == ["the office closes at six"]

    _cli(home, PER_AGENT, "--agent", "bob", "remember", "bob plays chess", "--key", "chess")
    bobs_live = home / "agents" / "bob" / "memory.db"
    refused = runner.invoke(app, ["--home", str(home), "restore", str(bobs_live), "--yes"], env=PER_AGENT)
    err = refused.exception
    assert isinstance(err, ValidationError) and err.field == "backup", refused.output
    assert "is the live database itself" in str(err)
    assert not (home / "agents" / "bob" / "backups").exists()
    assert _contents(home, PER_AGENT, "bob") == ["bob plays chess"]
