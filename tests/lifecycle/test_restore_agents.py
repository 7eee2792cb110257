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
from typer.testing import CliRunner

from engram.errors import ValidationError
from engram.interfaces.cli.app import app

runner = CliRunner()


def _cli(home: Path, env: dict[str, str], *args: str) -> str:
    done = runner.invoke(app, ["--home", str(home), *args], env=env, catch_exceptions=False)
    assert done.exit_code == 0, done.output
    return done.output


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
