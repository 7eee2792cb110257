"""Maintenance run as an agent touches only that agent's memories; a store-wide run is asked for.

QA: ``engram -a alice maintain`` ran hygiene, decay, retention, consolidation and summaries over
the whole store, so alice's upkeep forgot and merged bob's memories. Now alice's pass leaves bob's
memories and global ones (which every agent sees) as they are; the store-wide pass (no agent
chosen, ``--all-agents``, ``engram serve``) still maintains everything.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engram.config import load_settings
from engram.engine import Engram
from engram.errors import ValidationError
from engram.interfaces.cli.app import app
from engram.lifecycle.scheduler import Maintenance
from engram.lifecycle.settings import LifecycleSettings
from engram.root import maintenance_for
from tests.lifecycle.conftest import FakeEmbedder, remember_at

DAY = 86400.0
DUPLICATES = ("The user prefers dark mode in the editor", "the user prefers DARK MODE in the editor!")


def seed(view: Engram, now: float, name: str) -> dict[str, str]:
    """One agent's (or global's) memories that a pass would remove or merge: an old conversation
    entry (hygiene), a long-idle fact (hygiene, decay, retention) and two near-duplicates; and a
    fact of two days ago that stays (a daily summary's source)."""
    scope = "global" if name == "global" else None
    ids = {
        "chat": remember_at(view, now - 8 * DAY, f"{name} said hello long ago", category="conversation",
                            scope=scope).memory.id,
        "old": remember_at(view, now - 100 * DAY, f"{name} once used the old build server", importance=0.1,
                           scope=scope).memory.id,
    }
    ids["recent"] = remember_at(view, now - 2 * DAY, f"{name} moved to the new office", importance=0.9,
                                scope=scope).memory.id
    ids["dup_a"] = view.remember(DUPLICATES[0], scope=scope, importance=0.6).memory.id
    ids["dup_b"] = view.remember(DUPLICATES[1], scope=scope, importance=0.4).memory.id
    return ids


def present(engram: Engram, ids: dict[str, str]) -> set[str]:
    stored = {m.id for m in engram.store.get_many(list(ids.values()))}
    return {name for name, memory_id in ids.items() if memory_id in stored}


EVERYTHING = {"chat", "old", "recent", "dup_a", "dup_b"}
AFTER_MAINTENANCE = {"recent", "dup_a"}  # the expired entries gone, the duplicates merged into the more important


def test_an_agents_pass_leaves_other_agents_and_global_memories_alone(make_engram, clock, embedder, tmp_path):
    alice = make_engram("sqlite", agent="alice", embedder=embedder)  # a real SQLite file
    bob = alice.for_agent("bob")
    mine, theirs, shared = seed(alice, clock.t, "alice"), seed(bob, clock.t, "bob"), seed(alice, clock.t, "global")
    settings = LifecycleSettings()
    settings.hygiene.knowledge_survival_chance = 0.0
    state = tmp_path / "memory.db.maintenance.json"

    report = Maintenance(alice, settings, state_path=state, rng=random.Random(1), agent="alice").run()
    assert report.agent == "alice"
    assert present(alice, mine) == AFTER_MAINTENANCE
    assert present(alice, theirs) == EVERYTHING  # bob's expired and duplicate memories are his
    assert present(alice, shared) == EVERYTHING  # global memories are every agent's: not alice's to delete
    summaries = [m for m in alice.store.iter_all() if m.type == "summary"]
    assert summaries and {m.scope.agent for m in summaries} == {"alice"}
    removed = [m for r in report.ran for m in r.removed]
    assert removed and {m.scope.agent for m in removed} == {"alice"}

    # alice's pass kept its own schedule: the store-wide pass is still due and handles the rest.
    everyone = Maintenance(alice, settings, state_path=state, rng=random.Random(1)).run()
    assert everyone.agent is None and "hygiene" in [r.job for r in everyone.ran]
    assert present(alice, theirs) == AFTER_MAINTENANCE
    assert present(alice, shared) == AFTER_MAINTENANCE
    assert {m.scope.agent for m in alice.store.iter_all() if m.type == "summary"} == {"alice", "bob"}
    saved = json.loads(state.read_text())
    assert set(saved["agents"]["alice"]["last_run"]) == {"hygiene", "decay", "retention", "consolidate", "summaries"}
    assert {"hygiene", "decay"} <= set(saved["last_run"])


def test_maintenance_for_is_store_wide_only_when_no_agent_was_chosen(tmp_path, monkeypatch):
    monkeypatch.setenv("ENGRAM_EMBEDDINGS__PROVIDER", "none")
    chosen = load_settings(home=tmp_path, agent="alice")
    with Engram.from_settings(chosen) as alice:
        assert maintenance_for(alice, chosen).agent == "alice"
        assert maintenance_for(alice, chosen, store_wide=True).agent is None  # engram serve's upkeep
    unchosen = load_settings(home=tmp_path)
    with Engram.from_settings(unchosen) as default:
        assert maintenance_for(default, unchosen).agent is None
        assert maintenance_for(default, unchosen, store_wide=False).agent == "default"
    monkeypatch.setenv("ENGRAM_AGENT", "bob")  # chosen through the environment is chosen too
    from_env = load_settings(home=tmp_path)
    with Engram.from_settings(from_env) as bob:
        assert maintenance_for(bob, from_env).agent == "bob"


# --- the command line, on the SQLite file under ENGRAM_HOME -----------------------------------------
def seed_home(home: Path) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """Both agents' and global memories, with vectors a bag-of-words embedder gives (no model to load)."""
    settings = load_settings(home=home, agent="alice")
    with Engram.from_settings(settings) as alice:
        now = alice.clock()
        ids = seed(alice, now, "alice"), seed(alice.for_agent("bob"), now, "bob"), seed(alice, now, "global")
        fake = FakeEmbedder()
        memories = alice.store.get_many([i for group in ids for i in group.values()])
        alice.store.set_vectors(fake.identity, [(m.id, fake.embed([m.content])[0]) for m in memories])
    return ids


def maintain(home: Path, *args: str) -> dict:
    result = CliRunner().invoke(app, ["--home", str(home), "--json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def still_there(home: Path, ids: dict[str, str]) -> set[str]:
    with Engram.from_settings(load_settings(home=home)) as engram:
        return present(engram, ids)


@pytest.fixture
def cli_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ENGRAM_EMBEDDINGS__PROVIDER", "none")
    monkeypatch.setenv("ENGRAM_LIFECYCLE__HYGIENE__KNOWLEDGE_SURVIVAL_CHANCE", "0")
    return tmp_path / "home"


def test_cli_maintain_as_alice_leaves_bob_alone_and_all_agents_maintains_both(cli_home: Path):
    alice, bob, shared = seed_home(cli_home)
    report = maintain(cli_home, "-a", "alice", "maintain", "--force")
    assert (report["agent"], report["store_wide"]) == ("alice", False)
    assert still_there(cli_home, alice) == AFTER_MAINTENANCE
    assert still_there(cli_home, bob) == EVERYTHING
    assert still_there(cli_home, shared) == EVERYTHING

    report = maintain(cli_home, "maintain", "--force")  # no agent chosen: the operator's run
    assert (report["agent"], report["store_wide"]) == (None, True)
    assert still_there(cli_home, bob) == AFTER_MAINTENANCE
    assert still_there(cli_home, shared) == AFTER_MAINTENANCE


def test_cli_all_agents_overrides_an_agent_from_the_environment(cli_home: Path, monkeypatch: pytest.MonkeyPatch):
    alice, bob, _ = seed_home(cli_home)
    monkeypatch.setenv("ENGRAM_AGENT", "alice")
    assert maintain(cli_home, "maintain", "--force")["agent"] == "alice"
    assert still_there(cli_home, bob) == EVERYTHING
    report = maintain(cli_home, "maintain", "--force", "--all-agents")
    assert report["store_wide"] is True
    assert still_there(cli_home, bob) == AFTER_MAINTENANCE


def test_cli_refuses_an_agent_and_all_agents_together(cli_home: Path):
    _, bob, _ = seed_home(cli_home)
    result = CliRunner().invoke(app, ["--home", str(cli_home), "-a", "alice", "maintain", "--all-agents"])
    assert isinstance(result.exception, ValidationError), result.output
    assert result.exception.field == "--all-agents"
    assert still_there(cli_home, bob) == EVERYTHING
