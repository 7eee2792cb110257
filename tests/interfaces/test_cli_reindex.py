"""``engram reindex`` re-embeds a database: vectors and their model's identity are kept per database,
so in a shared database that is every agent's memories whichever agent runs it (and the output says
so), and with one database per agent (``per_agent_databases``) ``--agent NAME`` re-embeds that
agent's own database alone while the operator's run (no agent, or ``--all-agents``) re-embeds every
agent's in turn. The CLI in-process against real SQLite files; the embedder is the real Ollama
client against a local server speaking its wire format."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engram.errors import ValidationError
from engram.interfaces.cli.app import app
from engram.testing.provider_servers import ProviderServer
from tests.cli_in_process import cli_output

NO_VECTORS = {"ENGRAM_EMBEDDINGS__PROVIDER": "none"}


@pytest.fixture()
def embedder() -> Iterator[dict[str, str]]:
    with ProviderServer(api_key=None) as server:
        yield {"ENGRAM_EMBEDDINGS__PROVIDER": "ollama", "ENGRAM_EMBEDDINGS__MODEL": "nomic-embed-text",
               "ENGRAM_EMBEDDINGS__BASE_URL": server.url}


def _fill(home: Path, env: dict[str, str]) -> None:
    """alice keeps one memory, bob two; none embedded (written with no embedder)."""
    for agent, contents in (("alice", ["alice drinks green tea"]), ("bob", ["bob drinks coffee", "bob bakes bread"])):
        for n, content in enumerate(contents):
            cli_output(home, "--agent", agent, "remember", content, "--key", f"note-{n}", env={**env, **NO_VECTORS})


def _vectors(home: Path, agent: str, env: dict[str, str]) -> int:
    return json.loads(cli_output(home, "--agent", agent, "--json", "stats", env={**env, **NO_VECTORS}))["vectors"]


def test_an_agents_reindex_in_a_home_of_one_database_per_agent_re_embeds_its_own_database_alone(
        tmp_path: Path, embedder: dict[str, str]) -> None:
    home, env = tmp_path / "home", {"ENGRAM_PER_AGENT_DATABASES": "true", **embedder}
    _fill(home, env)
    done = json.loads(cli_output(home, "--agent", "alice", "--json", "reindex", env=env))
    assert done["embedded"] == 1 and done["embedding_identity"] == "ollama:nomic-embed-text:768"
    assert [(d["database_of"], d["embedded"]) for d in done["databases"]] == [("alice", 1)]
    assert done["databases"][0]["location"] == str(home / "agents" / "alice" / "memory.db")
    assert (_vectors(home, "alice", env), _vectors(home, "bob", env)) == (1, 0)  # bob's database untouched
    said = cli_output(home, "--agent", "alice", "reindex", env=env)
    assert "embedded 1 memory with ollama:nomic-embed-text:768 in" in said and "agent alice's own database" in said


def test_the_operators_reindex_re_embeds_every_agents_database_and_makes_none(
        tmp_path: Path, embedder: dict[str, str]) -> None:
    # Run as no agent it opened the configured agent's database (making agents/default/memory.db)
    # and embedded its 0 memories: alice's and bob's stayed without vectors after a model change.
    home, env = tmp_path / "home", {"ENGRAM_PER_AGENT_DATABASES": "true", **embedder}
    _fill(home, env)
    done = json.loads(cli_output(home, "--json", "reindex", env=env))
    assert done["embedded"] == 3
    assert sorted((d["database_of"], d["embedded"]) for d in done["databases"]) == [("alice", 1), ("bob", 2)]
    assert sorted(p.name for p in (home / "agents").iterdir()) == ["alice", "bob"]
    assert (_vectors(home, "alice", env), _vectors(home, "bob", env)) == (1, 2)
    said = cli_output(home, "reindex", "--all-agents", env=env)
    assert "agent bob's own database" in said and "in all: 3 memories in 2 databases" in said
    refused = CliRunner().invoke(app, ["--home", str(home), "--agent", "alice", "reindex", "--all-agents"], env=env)
    assert isinstance(refused.exception, ValidationError) and refused.exception.field == "--all-agents"
    assert "--agent chose one" in str(refused.exception)  # (main() turns it into exit 2)


def test_a_reindex_in_a_shared_database_says_it_re_embedded_every_agents_memories(
        tmp_path: Path, embedder: dict[str, str]) -> None:
    # One database holds one model's vectors: alice's run re-embeds bob's memories too, and said
    # "embedded 3 memories" as if they were alice's.
    home = tmp_path / "home"
    _fill(home, embedder)
    done = json.loads(cli_output(home, "--agent", "alice", "--json", "reindex", env=embedder))
    assert done["embedded"] == 3
    assert [(d["database_of"], d["embedded"]) for d in done["databases"]] == [(None, 3)]
    said = cli_output(home, "--agent", "alice", "reindex", env=embedder)
    assert f"embedded 3 memories with ollama:nomic-embed-text:768 in {home / 'memory.db'}" in said
    assert "every agent's memories" in said


def test_a_reindex_for_an_agent_with_no_database_makes_none_and_says_so(
        tmp_path: Path, embedder: dict[str, str]) -> None:
    # `-a carol reindex` made carol's empty database (agents/carol/memory.db), which the operator's
    # backups, maintenance and sync then took for a real agent's, and said "embedded 0 memories".
    home, env = tmp_path / "home", {"ENGRAM_PER_AGENT_DATABASES": "true", **embedder}
    _fill(home, env)
    said = CliRunner().invoke(app, ["--home", str(home), "--agent", "carol", "reindex"], env=env, catch_exceptions=False)
    assert said.exit_code == 0 and said.stdout == ""  # nothing done is no error: a note, as stats' for carol
    assert said.stderr.strip() == ("nothing to re-embed: agent carol has no database yet (its first write makes"
                                   f" {home / 'agents' / 'carol' / 'memory.db'})")
    done = json.loads(cli_output(home, "--agent", "carol", "--json", "reindex", env=env))
    assert done == {"embedded": 0, "embedding_identity": "none", "databases": []}
    assert sorted(p.name for p in (home / "agents").iterdir()) == ["alice", "bob"]  # none made for carol
    assert (_vectors(home, "alice", env), _vectors(home, "bob", env)) == (0, 0)  # nobody else's re-embedded

    new_home = tmp_path / "new"  # a new home, one shared database: none made either
    said = CliRunner().invoke(app, ["--home", str(new_home), "reindex"], env=embedder, catch_exceptions=False)
    assert said.exit_code == 0 and said.stdout == "" and "nothing to re-embed: there is no database yet" in said.stderr
    assert not new_home.exists()
