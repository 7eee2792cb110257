"""The operator's commands in a home with one database per agent (``per_agent_databases``) reach
every agent's database there without making one for an agent nobody used. The CLI in-process
against a real home folder (real SQLite files).

Review: run with no agent chosen, ``engram backup``, ``vacuum``, ``maintain``, ``sync``, ``watch``
and the folder export opened the configured agent's database first (``default``, the agent of a
run that names none), so each made ``agents/default/memory.db`` in a home where only alice and bob
had ever written, then backed up, maintained and synced that empty file as an agent's. A command
acting as that agent (``remember`` without ``--agent``) still makes it, as the docs promise."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_in_process import cli_output

PER_AGENT = {"ENGRAM_PER_AGENT_DATABASES": "true", "ENGRAM_EMBEDDINGS__PROVIDER": "none"}


def _agents_with_files(home: Path) -> set[str]:
    return {folder.name for folder in (home / "agents").iterdir() if (folder / "memory.db").exists()}


def _reported(shown: dict, field: str = "agent") -> list[str]:
    """The agents whose databases a --json report of an operator's command names (``field``), in its order."""
    return [part[field] for part in [shown, *shown.get("agent_databases", [])]]


@pytest.fixture()
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    for agent in ("alice", "bob"):
        cli_output(home, "--agent", agent, "remember", f"{agent} keeps a note", "--key", "note", env=PER_AGENT)
    assert _agents_with_files(home) == {"alice", "bob"}
    return home


@pytest.mark.parametrize("command", [("backup",), ("vacuum",)])
def test_the_operators_care_of_the_files_reaches_every_agents_database_and_makes_none(
        home: Path, command: tuple[str, ...]) -> None:
    done = json.loads(cli_output(home, "--json", *command, env=PER_AGENT))
    assert sorted(_reported(done)) == ["alice", "bob"]
    assert _agents_with_files(home) == {"alice", "bob"}


def test_the_operators_maintain_reaches_every_agents_database_and_makes_none(home: Path) -> None:
    done = json.loads(cli_output(home, "--json", "maintain", "--force", env=PER_AGENT))
    assert sorted(_reported(done, "database_of")) == ["alice", "bob"] and done["store_wide"]
    # With ENGRAM_AGENT naming an agent with no database, --all-agents is the operator's run too.
    every = json.loads(cli_output(home, "--json", "maintain", "--all-agents", env={**PER_AGENT, "ENGRAM_AGENT": "carol"}))
    assert sorted(_reported(every, "database_of")) == ["alice", "bob"]
    assert _agents_with_files(home) == {"alice", "bob"}


def test_the_operators_sync_watch_and_folder_export_reach_every_agent_and_make_no_database(
        home: Path, tmp_path: Path) -> None:
    cli_output(home, "sync", env=PER_AGENT)
    notes = {agent: (home / "memory" / "agents" / agent).rglob("*.md") for agent in ("alice", "bob")}
    assert all(any(f"{agent} keeps a note" in f.read_text() for f in files) for agent, files in notes.items())
    cli_output(home, "watch", "--duration", "0", env=PER_AGENT)
    exported = json.loads(cli_output(home, "--json", "export", "--format", "json", str(tmp_path / "out"), env=PER_AGENT))
    assert exported["exported"] == 2 and exported["view"] == "store"
    assert _agents_with_files(home) == {"alice", "bob"}


def test_a_command_of_the_default_agent_still_makes_its_database_and_the_operator_then_reaches_it(home: Path) -> None:
    cli_output(home, "remember", "the default agent keeps a note", "--key", "note", env=PER_AGENT)
    assert _agents_with_files(home) == {"alice", "bob", "default"}
    listed = json.loads(cli_output(home, "--json", "list", env=PER_AGENT))
    assert [m["content"] for m in listed] == ["the default agent keeps a note"]
    done = json.loads(cli_output(home, "--json", "backup", env=PER_AGENT))
    assert _reported(done) == ["default", "alice", "bob"]


def test_a_home_where_no_agent_has_a_database_yet_backs_up_the_configured_agents(tmp_path: Path) -> None:
    # Nothing to reach but the configured agent's: as `backup --list` lists it, and as before.
    home = tmp_path / "home"
    done = json.loads(cli_output(home, "--json", "backup", env=PER_AGENT))
    assert _reported(done) == ["default"] and Path(done["path"]).is_file()


@pytest.mark.parametrize("env", [PER_AGENT, {**PER_AGENT, "ENGRAM_AGENT": "carol"}], ids=["no-agent", "agent-without-database"])
def test_the_operators_stats_shows_every_agents_database_and_makes_none(home: Path, env: dict[str, str]) -> None:
    # Review: `stats --all-agents` showed the figures of the one database it opened (the default
    # agent's, made empty for it: 0 memories) as the whole store's.
    cli_output(home, "--agent", "bob", "remember", "bob keeps a second note", "--key", "second", env=PER_AGENT)
    shown = json.loads(cli_output(home, "--json", "stats", "--all-agents", env=env))
    every = [shown, *shown["agent_databases"]]
    assert {part["agent"]: part["memories"] for part in every} == {"alice": 1, "bob": 2}
    assert {part["agent"]: Path(part["location"]) for part in every} == {
        agent: home / "agents" / agent / "memory.db" for agent in ("alice", "bob")}
    assert all(part["view"] == "store" and part["by_scope"] == {f"agent:{part['agent']}": part["memories"]} for part in every)
    printed = cli_output(home, "stats", "--all-agents", env=env)
    assert "memories     1 in agent alice's own database" in printed and "memories     2 in agent bob's own database" in printed
    assert _agents_with_files(home) == {"alice", "bob"}


def test_stats_of_an_agent_with_no_database_reports_nothing_stored_and_makes_none(home: Path) -> None:
    # Review: plain `engram stats` (the default agent's view) opened that agent's engine to count,
    # making agents/default/memory.db for an agent nobody used; `--agent carol stats` made carol's.
    # A read makes no database: the view of an agent with none holds nothing, and says so.
    for args, agent in (((), "default"), (("--agent", "carol"), "carol"), (("--agent", "carol", "--session", "s1"), "carol")):
        shown = json.loads(cli_output(home, *args, "--json", "stats", env=PER_AGENT))
        assert (shown["agent"], shown["memories"], shown["links"], shown["vectors"]) == (agent, 0, 0, 0)
        assert shown["by_category"] == {"core": 0, "knowledge": 0, "conversation": 0}
        assert shown["location"].endswith(f"{agent}/memory.db")
        assert _agents_with_files(home) == {"alice", "bob"}
    shown = cli_output(home, "stats", env=PER_AGENT)
    assert "memories     0 visible to agent default" in shown and "agent default has no database yet" in shown
    assert _agents_with_files(home) == {"alice", "bob"}
    # An agent with a database is counted from it, as before.
    alice = json.loads(cli_output(home, "--agent", "alice", "--json", "stats", env=PER_AGENT))
    assert (alice["agent"], alice["memories"]) == ("alice", 1)


def test_reads_of_an_agent_with_no_database_answer_empty_and_make_none_until_its_first_write(home: Path, tmp_path: Path) -> None:
    # Review: `engram --agent carol list` (recall, count, get, export) opened carol's engine to read,
    # making agents/carol/memory.db for an agent nobody used, which the operator's backup, maintain
    # and sync then took for a real agent's. A read answers as her empty database would.
    from engram.errors import NotFoundError
    from tests.cli_in_process import app, runner

    carol = ("--agent", "carol", "--json")
    assert json.loads(cli_output(home, *carol, "list", env=PER_AGENT)) == []
    assert json.loads(cli_output(home, *carol, "recall", "note", env=PER_AGENT))["hits"] == []
    assert json.loads(cli_output(home, *carol, "count", env=PER_AGENT)) == {"count": 0}
    assert json.loads(cli_output(home, *carol, "export", env=PER_AGENT))["memories"] == []
    cli_output(home, *carol, "export", "--format", "mem0", str(tmp_path / "mem0.json"), env=PER_AGENT)
    assert json.loads(cli_output(home, *carol, "audit", env=PER_AGENT)) == []
    assert json.loads(cli_output(home, *carol, "history", "list", env=PER_AGENT)) == []
    assert json.loads(cli_output(home, *carol, "history", "show", "cli:c1", env=PER_AGENT))["count"] == 0
    for command in ("get", "neighbours"):
        missing = runner.invoke(app, ["--home", str(home), *carol, command, "note"], env=PER_AGENT)
        assert isinstance(missing.exception, NotFoundError), missing.output
    assert _agents_with_files(home) == {"alice", "bob"}
    assert not (home / "agents" / "carol").exists()
    # Her first write makes her database, and the reads then answer from it.
    cli_output(home, "--agent", "carol", "remember", "carol keeps a note", "--key", "note", env=PER_AGENT)
    assert _agents_with_files(home) == {"alice", "bob", "carol"}
    listed = json.loads(cli_output(home, *carol, "list", env=PER_AGENT))
    assert [m["content"] for m in listed] == ["carol keeps a note"]
    assert json.loads(cli_output(home, *carol, "get", "note", env=PER_AGENT))["content"] == "carol keeps a note"
    assert json.loads(cli_output(home, *carol, "count", env=PER_AGENT)) == {"count": 1}



def test_reads_of_an_agent_whose_conversations_are_kept_apart_show_them(home: Path, tmp_path: Path) -> None:
    # Conversations in a file of their own (history.path) may hold carol's before her database
    # exists: her reads open her engine as before, so `history list` shows them.
    apart = {**PER_AGENT, "ENGRAM_HISTORY__PATH": str(tmp_path / "conversations.db")}
    cli_output(home, "--agent", "carol", "history", "append", "cli:c1", "hello", env=apart)
    for made in (home / "agents" / "carol").glob("memory.db*"):  # as if another program wrote the file
        made.unlink()
    assert "carol" not in _agents_with_files(home)
    listed = json.loads(cli_output(home, "--agent", "carol", "--json", "history", "list", env=apart))
    assert listed == [{"key": "cli:c1", "messages": 1}]


@pytest.mark.parametrize("command", [
    ("summaries",), ("history", "summary", "cli:c1"), ("history", "transcript", "cli:c1"), ("conflicts",),
    ("export", "--format", "markdown", "{out}"), ("forget", "--query", "note", "--dry-run", "--reason", "tidy"),
], ids=["summaries", "history-summary", "history-transcript", "conflicts", "folder-export", "forget-dry-run"])
def test_more_reads_of_an_agent_with_no_database_answer_empty_and_make_none(
        home: Path, tmp_path: Path, command: tuple[str, ...]) -> None:
    # Review: these commands opened carol's engine to read (summaries, a conversation's summary or
    # transcript, her conflicts, her memory-folder export, a dry-run forget), making
    # agents/carol/memory.db for an agent nobody used. Each answers as her empty database would.
    out = tmp_path / "out"
    args = [part.replace("{out}", str(out)) for part in command]
    shown = json.loads(cli_output(home, "--agent", "carol", "--json", *args, env=PER_AGENT))
    empty = {
        "summaries": [], "conflicts": [],
        "history": {"key": "cli:c1", "summary": ""} if "summary" in command else
        {"key": "cli:c1", "path": str(home / "transcripts" / "carol" / "cli_c1.md"), "messages": 0, "indexed": False},
        "export": {"exported": 0, "format": "markdown", "path": str(out), "view": "agent", "agent": "carol", "session": None},
        "forget": {"dry_run": True, "removed": []},
    }
    assert shown == empty[command[0]]
    if "transcript" in command:  # written, as asked, with no message in it
        assert Path(shown["path"]).is_file()
    assert _agents_with_files(home) == {"alice", "bob"}
    assert not (home / "agents" / "carol").exists()


def test_a_command_that_reads_then_writes_gets_the_agents_own_engine_for_the_write(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Review: CliState kept the first engine it opened; a command that read through
    # ``reading_engram`` (carol has no database: an empty engine) and then wrote through ``engram``
    # got the empty one back and its write failed. The write opens carol's own, making her database.
    from engram.interfaces.cli.state import CliState

    for name, value in PER_AGENT.items():
        monkeypatch.setenv(name, value)
    state = CliState(home=home, agent="carol")
    try:
        assert state.reading_engram().count() == 0
        assert not (home / "agents" / "carol").exists()
        state.engram().remember("carol's first note", key="first")
        assert (home / "agents" / "carol" / "memory.db").is_file()
        assert [m.content for m in state.reading_engram().list()] == ["carol's first note"]
    finally:
        state.engram().close()
