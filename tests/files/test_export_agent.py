"""``engram export --format markdown|yaml|json DIR`` as an agent writes what that agent reads (its
own memories, global ones, its session's when it runs as one), never another agent's, not even an
id in a link; run as no agent, or with ``--all-agents``, it writes the operator's copy of the whole
store. The CLI in-process against a real home folder (a real SQLite file)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from engram.errors import ValidationError
from engram.interfaces.cli.app import app

runner = CliRunner()


def _run(home: Path, *args: str, env: dict[str, str] | None = None, code: int = 0) -> str:
    result = runner.invoke(app, ["--home", str(home), *args], env=env, catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def _stored(home: Path, *args: str) -> str:
    """The id of a memory stored with ``args`` (global options first, then remember's)."""
    at = args.index("remember")
    return json.loads(_run(home, "--json", *args[:at], *args[at:]))["memory"]["id"]


def _folder_text(folder: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(folder.rglob("*")) if p.is_file())


def _home_of_two_agents(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """alice and bob each link a memory of their own to one global memory, whose stored links
    then name both; alice also keeps one in her session s1."""
    home = tmp_path / "home"
    ids = {
        "shared": _stored(home, "remember", "Office wifi is on floor 2", "--key", "wifi", "--scope", "global"),
        "alice": _stored(home, "--agent", "alice", "remember", "Alice likes tulips", "--key", "tulips",
                         "--link", "wifi"),
        "session": _stored(home, "--agent", "alice", "--session", "s1", "remember", "Alice is in a meeting",
                           "--scope", "session", "--key", "meeting"),
        "bob": _stored(home, "--agent", "bob", "remember", "Bob keeps a secret diary", "--key", "diary",
                       "--link", "wifi"),
    }
    return home, ids


def test_an_agent_exports_only_what_it_reads(tmp_path: Path) -> None:
    home, ids = _home_of_two_agents(tmp_path)
    for fmt in ("markdown", "yaml", "json"):
        dest = tmp_path / f"alice-{fmt}"
        out = json.loads(_run(home, "--json", "--agent", "alice", "export", "--format", fmt, str(dest)))
        assert (out["exported"], out["view"], out["agent"]) == (2, "agent", "alice"), out
        text = _folder_text(dest)
        assert "Alice likes tulips" in text and "Office wifi is on floor 2" in text, fmt
        # bob's memory, and its id in the global memory's links, stay out; so do alice's session's.
        assert "Bob keeps a secret diary" not in text and ids["bob"] not in text, fmt
        assert "Alice is in a meeting" not in text, fmt
        assert not (dest / "agents/bob").exists()


def test_the_agent_set_in_the_environment_is_honoured_and_a_session_sees_its_own(tmp_path: Path) -> None:
    home, ids = _home_of_two_agents(tmp_path)
    dest = tmp_path / "bob"
    _run(home, "export", "--format", "markdown", str(dest), env={"ENGRAM_AGENT": "bob"})
    text = _folder_text(dest)
    assert "Bob keeps a secret diary" in text and "Office wifi is on floor 2" in text
    assert "Alice" not in text and ids["alice"] not in text and ids["session"] not in text
    dest = tmp_path / "alice-s1"
    _run(home, "--agent", "alice", "--session", "s1", "export", "--format", "yaml", str(dest))
    text = _folder_text(dest)
    assert all(content in text for content in ("Alice is in a meeting", "Alice likes tulips", "Office wifi is on floor 2"))
    assert "Bob keeps a secret diary" not in text and ids["bob"] not in text


def test_no_agent_or_all_agents_writes_the_whole_store(tmp_path: Path) -> None:
    home, ids = _home_of_two_agents(tmp_path)
    everything = ("Office wifi is on floor 2", "Alice likes tulips", "Alice is in a meeting", "Bob keeps a secret diary")
    dest = tmp_path / "operator"
    out = json.loads(_run(home, "--json", "export", "--format", "markdown", str(dest)))
    assert (out["exported"], out["view"], out["agent"]) == (4, "store", None)
    text = _folder_text(dest)
    assert all(content in text for content in everything)
    assert ids["alice"] in text and ids["bob"] in text  # the global memory keeps both its links
    # An agent set in the environment (or the config file) gives way to an explicit --all-agents.
    dest = tmp_path / "operator-env"
    _run(home, "export", "--format", "json", "--all-agents", str(dest), env={"ENGRAM_AGENT": "alice"})
    assert all(content in _folder_text(dest) for content in everything)


def test_all_agents_is_refused_where_it_cannot_hold(tmp_path: Path) -> None:
    home, _ = _home_of_two_agents(tmp_path)
    refused = runner.invoke(app, ["--home", str(home), "--agent", "alice", "export", "--format", "markdown",
                                  "--all-agents", str(tmp_path / "both")])
    assert isinstance(refused.exception, ValidationError) and refused.exception.field == "--all-agents"
    assert "--agent" in refused.exception.allowed
    assert not (tmp_path / "both").exists()
    # A snapshot (and mem0, basic-memory) is always one agent's view: --all-agents is not silently dropped.
    refused = runner.invoke(app, ["--home", str(home), "export", "--all-agents"])
    assert isinstance(refused.exception, ValidationError) and refused.exception.field == "--all-agents"


def test_the_operators_copy_of_a_home_with_a_database_per_agent_holds_every_agents(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {"ENGRAM_PER_AGENT_DATABASES": "true", "ENGRAM_EMBEDDINGS__PROVIDER": "none"}
    for agent, content in (("alice", "Alice likes tulips"), ("bob", "Bob keeps a secret diary")):
        _run(home, "--agent", agent, "remember", content, env=env)
    dest = tmp_path / "operator"
    out = json.loads(_run(home, "--json", "export", "--format", "json", str(dest), env=env))
    assert out["exported"] == 2
    assert all(content in _folder_text(dest) for content in ("Alice likes tulips", "Bob keeps a secret diary"))
    mine = tmp_path / "alice"  # an agent's own export stays its own
    _run(home, "--agent", "alice", "export", "--format", "json", str(mine), env=env)
    assert "Alice likes tulips" in _folder_text(mine) and "Bob" not in _folder_text(mine)


def test_a_folder_imported_into_a_home_with_a_database_per_agent_puts_each_agents_in_its_own(tmp_path: Path) -> None:
    import sqlite3

    source, ids = _home_of_two_agents(tmp_path)
    folder = tmp_path / "folder"
    _run(source, "export", "--format", "markdown", str(folder))
    home = tmp_path / "per-agent"
    env = {"ENGRAM_PER_AGENT_DATABASES": "true", "ENGRAM_EMBEDDINGS__PROVIDER": "none"}
    _run(home, "--agent", "carol", "import", str(folder), env=env)

    def held(agent: str) -> set[str]:
        with sqlite3.connect(home / "agents" / agent / "memory.db") as conn:
            return {memory_id for (memory_id,) in conn.execute("SELECT id FROM memories")}

    # The global memory goes with the importing agent's own; alice's and bob's into their own.
    assert held("carol") == {ids["shared"]}
    assert held("alice") == {ids["alice"], ids["session"]}
    assert held("bob") == {ids["bob"]}


def test_two_agents_global_memories_of_one_key_each_go_back_to_their_own_database(tmp_path: Path) -> None:
    import sqlite3

    home = tmp_path / "home"
    # The memory folder off: with it, global/ shares every database's global memories (by design).
    env = {"ENGRAM_PER_AGENT_DATABASES": "true", "ENGRAM_EMBEDDINGS__PROVIDER": "none", "ENGRAM_FILES__ENABLED": "false"}
    ids = {agent: json.loads(_run(home, "--json", "--agent", agent, "remember", f"{agent} answers the phone", "--key",
                                  "policy", "--scope", "global", env=env))["memory"]["id"] for agent in ("alice", "bob")}
    _run(home, "--agent", "bob", "remember", "Bob keeps a secret diary", "--key", "diary", env=env)

    def held(home: Path, agent: str) -> set[tuple[str, str, str]]:
        with sqlite3.connect(home / "agents" / agent / "memory.db") as conn:
            return set(conn.execute("SELECT id, agent, content FROM memories"))

    alice, bob = held(home, "alice"), held(home, "bob")
    assert len(alice) == 1 and len(bob) == 2
    for fmt in ("markdown", "yaml", "json"):
        dest = tmp_path / fmt
        assert json.loads(_run(home, "--json", "export", "--format", fmt, str(dest), env=env))["exported"] == 3
        copy = tmp_path / f"copy-{fmt}"
        out = json.loads(_run(copy, "--json", "import", str(dest), env=env))
        assert (out["imported"], out["problems"]) == (3, []), fmt
        assert (held(copy, "alice"), held(copy, "bob")) == (alice, bob), fmt
    # Into one database the two cannot both go: the one not imported is named, not dropped unsaid.
    out = json.loads(_run(tmp_path / "one", "--json", "import", str(tmp_path / "markdown"),
                          env={"ENGRAM_EMBEDDINGS__PROVIDER": "none"}))
    assert out["imported"] == 2 and len(out["problems"]) == 1 and 'key "policy" in global repeats' in out["problems"][0]
    assert {memory_id for memory_id, _, _ in alice} == {ids["alice"]} and ids["bob"] in {i for i, _, _ in bob}
