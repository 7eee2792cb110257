"""Per-agent databases (``per_agent_databases``) in folders that mean one agent on every file system:
``Alice`` and ``alice`` never share one on macOS's or Windows' case-insensitive default, an
adapter's ``adk:app:u1`` has no ``:`` (Windows refuses it), and a home an earlier version wrote with
the names as they are keeps every memory and conversation."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engram.config import Settings, load_settings
from engram.engine import Engram

# (memory backend, history backend): the SQLite file holding both, the JSON file with the
# conversations in a SQLite file beside it, the JSON file with JSON-lines conversations.
BACKENDS = [("sqlite", "sqlite"), ("jsonfile", "sqlite"), ("jsonfile", "jsonl")]


def _open(home: Path, agent: str, backend: str = "sqlite", history: str = "sqlite") -> Engram:
    settings = load_settings(home=home, agent=agent, per_agent_databases=True, backend=backend,
                             history={"backend": history}, files={"enabled": False})
    return Engram.from_settings(settings, mirror=False)


def _write(home: Path, agent: str, backend: str = "sqlite", history: str = "sqlite") -> None:
    with _open(home, agent, backend, history) as engram:
        engram.remember(f"{agent} keeps bees on the roof", key="bees")
        engram.history.append("telegram:42", "user", f"{agent} says hello")
        engram.history.close()


def _seen(home: Path, agent: str, backend: str = "sqlite", history: str = "sqlite") -> tuple[list[str], list[str]]:
    """What ``agent`` finds: its memories' contents and its conversation's messages."""
    with _open(home, agent, backend, history) as engram:
        memories = [m.content for m in engram.list(scope="agent")]
        messages = [m.content for m in engram.history.all("telegram:42")]
        engram.history.close()
        return memories, messages


@pytest.mark.parametrize(("backend", "history"), BACKENDS)
def test_agents_differing_only_in_case_get_folders_of_their_own(tmp_path: Path, backend: str, history: str) -> None:
    for agent in ("Alice", "alice"):
        _write(tmp_path, agent, backend, history)
    folders = os.listdir(tmp_path / "agents")
    assert len({name.casefold() for name in folders}) == 2, folders
    assert sorted(folders) == ["!alice", "alice"]
    for agent in ("Alice", "alice"):
        assert _seen(tmp_path, agent, backend, history) == ([f"{agent} keeps bees on the roof"], [f"{agent} says hello"])


@pytest.mark.parametrize(("backend", "history"), BACKENDS)
def test_an_adapters_agent_has_a_folder_windows_takes(tmp_path: Path, backend: str, history: str) -> None:
    _write(tmp_path, "adk:app:u1", backend, history)
    assert os.listdir(tmp_path / "agents") == ["adk+app+u1"]
    files = set(os.listdir(tmp_path / "agents" / "adk+app+u1"))
    assert {"memory.db" if backend == "sqlite" else "memory.json",
            "conversation-history.jsonl" if history == "jsonl" else "memory.db"} <= files
    assert not any(":" in str(path.relative_to(tmp_path)) for path in tmp_path.rglob("*"))
    assert _seen(tmp_path, "adk:app:u1", backend, history) == (["adk:app:u1 keeps bees on the roof"],
                                                              ["adk:app:u1 says hello"])


@pytest.mark.parametrize(("backend", "history"), BACKENDS)
def test_a_home_an_earlier_version_wrote_keeps_everything(tmp_path: Path, backend: str, history: str,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # Earlier versions named the folder with the agent's name as it is.
    with monkeypatch.context() as earlier:
        earlier.setattr(Settings, "agent_folder", lambda self, agent=None: self.home / "agents" / (agent or self.agent))
        _write(tmp_path, "Claude", backend, history)
        _write(tmp_path, "adk:app:u1", backend, history)
    assert sorted(os.listdir(tmp_path / "agents")) == ["Claude", "adk:app:u1"]

    assert _seen(tmp_path, "Claude", backend, history) == (["Claude keeps bees on the roof"], ["Claude says hello"])
    assert _seen(tmp_path, "adk:app:u1", backend, history) == (["adk:app:u1 keeps bees on the roof"],
                                                              ["adk:app:u1 says hello"])
    assert sorted(os.listdir(tmp_path / "agents")) == ["!claude", "adk+app+u1"]


def test_an_earlier_folder_of_another_case_is_left_to_its_agent(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # ``alice``'s folder keeps its name (lowercase names are written as they are): ``Alice``,
    # opened for the first time, starts empty beside it and takes nothing of alice's.
    _write(tmp_path, "alice")
    assert _seen(tmp_path, "Alice") == ([], [])
    assert sorted(os.listdir(tmp_path / "agents")) == ["!alice", "alice"]
    assert _seen(tmp_path, "alice") == (["alice keeps bees on the roof"], ["alice says hello"])



def test_the_backup_list_finds_an_earlier_versions_backups(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # ``engram backup --list`` (and ``restore``) open no engine: the command moves the folder itself,
    # or would find no backups (and restore one beside the memories it no longer sees).
    import json

    from typer.testing import CliRunner

    from engram.interfaces.cli.app import app

    def engram(*args: str) -> str:
        result = CliRunner().invoke(app, ["--home", str(tmp_path), "--agent", "Claude", *args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result.output

    monkeypatch.setenv("ENGRAM_PER_AGENT_DATABASES", "true")
    with monkeypatch.context() as earlier:
        earlier.setattr(Settings, "agent_folder", lambda self, agent=None: self.home / "agents" / (agent or self.agent))
        _write(tmp_path, "Claude")
        engram("backup")
    assert os.listdir(tmp_path / "agents") == ["Claude"]
    listed = json.loads(engram("--json", "backup", "--list"))
    assert os.listdir(tmp_path / "agents") == ["!claude"]
    assert [Path(b["path"]).parent for b in listed] == [tmp_path / "agents" / "!claude" / "backups"]


def test_switching_per_agent_databases_on_says_where_the_memories_went(tmp_path: Path,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    # Turned on for a home in use, each agent opened an empty database of its own and the shared
    # file's memories were out of sight without a word. The warning names the file and the way over,
    # and stops once they are brought over (an export and import keep the ids).
    shared = load_settings(home=tmp_path, agent="Alice:x", files={"enabled": False}, embeddings={"provider": "none"})
    with Engram.from_settings(shared, mirror=False) as engram:
        engram.remember("the spare key is under the mat", key="spare")
        engram.remember("the office closes at six", key="office", scope="global")
        engram.history.append("telegram:42", "user", "hello")
        engram.history.close()
        snapshot = engram.export_snapshot()
    switched = shared.model_copy(update={"per_agent_databases": True})
    with caplog.at_level("WARNING", logger="engram.backends.sqlite"):
        with Engram.from_settings(switched, mirror=False) as engram:
            assert engram.count() == 0
        warned = [r.getMessage() for r in caplog.records if "per_agent_databases is on" in r.getMessage()]
        assert len(warned) == 1
        assert str(tmp_path / "memory.db") in warned[0] and "2 memories of agent 'Alice:x'" in warned[0]
        assert "1 conversation is there too" in warned[0] and "export" in warned[0]
        with Engram.from_settings(switched, mirror=False) as engram:
            engram.import_snapshot(snapshot)
            assert engram.count() == 2
        caplog.clear()
        with Engram.from_settings(switched, mirror=False) as engram:
            pass
    assert not [r for r in caplog.records if "per_agent_databases is on" in r.getMessage()]


def test_a_folder_left_under_the_name_as_typed_beside_the_agents_own_is_named_with_the_way_over(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    # Review: an earlier version's process writing agents/Claude/ again after it was moved to
    # agents/!claude/ (or a copy put back) left memories that were silently never read.
    from tests.cli_in_process import cli_output

    _write(tmp_path, "Claude")
    with monkeypatch.context() as earlier:
        earlier.setattr(Settings, "agent_folder", lambda self, agent=None: self.home / "agents" / (agent or self.agent))
        with _open(tmp_path, "Claude") as engram:
            engram.remember("Claude learned this in the old folder", key="old-folder")
    assert sorted(os.listdir(tmp_path / "agents")) == ["!claude", "Claude"]

    with caplog.at_level("WARNING", logger="engram.agents"), _open(tmp_path, "Claude") as engram:
        assert [m.content for m in engram.list(scope="agent")] == ["Claude keeps bees on the roof"]
        engram.history.close()
    with caplog.at_level("WARNING", logger="engram.agents"), _open(tmp_path, "Claude"):
        pass
    [said] = [r.getMessage() for r in caplog.records if r.name == "engram.agents"]  # once a process
    leftover, own = tmp_path / "agents" / "Claude", tmp_path / "agents" / "!claude"
    assert f"folder {leftover}, named as an earlier version" in said and f"beside {own}, its folder now" in said

    # The way over it names works: the leftover's memories come into Claude's own database.
    old = leftover / "memory.db"
    monkeypatch.setenv("ENGRAM_EMBEDDINGS__PROVIDER", "none")
    snapshot = tmp_path / "claude.json"
    assert f"ENGRAM_PER_AGENT_DATABASES=false ENGRAM_PATH={old} engram -a Claude export FILE.json" in said
    cli_output(tmp_path, "-a", "Claude", "export", str(snapshot),
               env={"ENGRAM_PER_AGENT_DATABASES": "false", "ENGRAM_PATH": str(old), "ENGRAM_FILES__ENABLED": "false"})
    assert "engram -a Claude import FILE.json" in said
    cli_output(tmp_path, "-a", "Claude", "import", str(snapshot),
               env={"ENGRAM_PER_AGENT_DATABASES": "true", "ENGRAM_FILES__ENABLED": "false"})
    with _open(tmp_path, "Claude") as engram:
        assert sorted(m.content for m in engram.list(scope="agent")) == ["Claude keeps bees on the roof",
                                                                         "Claude learned this in the old folder"]
        engram.history.close()
