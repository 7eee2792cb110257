"""A memory forgotten after an import stays forgotten when the source (or a newer export of it) is
imported again: the audit trail's ``forgotten`` rows are the record, ``ImportSummary.forgotten``
counts what was left out and one warning says where to see it. Forgets by the user, by a bulk
selector and by a lifecycle job count; another agent's import of the same source still gets its
copy; with the audit trail off there is no record and the memory comes back (the documented limit).
Through the library on a real SQLite file (and the JSON-file and in-memory backends' trails), and
through the ``engram`` executable in a subprocess."""

from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path
from typing import Any

import pytest

from engram.engine import Engram
from engram.importers.base import record_id
from engram.model import Memory, Scope
from tests.importers.test_import_cli import ENGRAM

SOURCE = json.dumps({"results": [{"id": "a1", "memory": "Likes tea", "user_id": "u1"},
                                 {"id": "a2", "memory": "Lives in Oslo", "user_id": "u1"}]})
NEWER = json.dumps({"results": [{"id": "a1", "memory": "Likes tea", "user_id": "u1"},
                                {"id": "a2", "memory": "Lives in Oslo", "user_id": "u1"},
                                {"id": "a3", "memory": "Works at Acme", "user_id": "u1"}]})


def opened(home: Path, **settings: Any) -> Engram:
    return Engram.from_settings(home=home, embeddings={"provider": "none"}, **settings)


def contents(engram: Engram) -> set[str]:
    return {m.content for m in engram.list(limit=50)}


def test_a_forgotten_memory_is_not_imported_again_and_is_counted(tmp_path: Path) -> None:
    with opened(tmp_path) as engram:
        assert engram.import_from(SOURCE, "mem0").imported == 2
        u1 = engram.for_agent("u1")
        u1.forget("likes-tea", reason="wrong")
        again = engram.import_from(SOURCE, "mem0")
        assert (again.imported, again.updated, again.skipped, again.forgotten) == (0, 0, 1, 1), again
        assert contents(u1) == {"Lives in Oslo"}
        [warning] = again.warnings
        assert warning.startswith("1 memory was forgotten in engram since an earlier import")
        assert "engram -a u1 audit --action forgotten" in warning and "engram remember" in warning
        # A newer export during a migration: only the new record arrives.
        newer = engram.import_from(NEWER, "mem0")
        assert (newer.imported, newer.skipped, newer.forgotten) == (1, 1, 1), newer
        assert contents(u1) == {"Lives in Oslo", "Works at Acme"}
        # What the importing agent itself forgot is named without -a.
        mine = engram.import_from(SOURCE, "mem0", keep_agents=False)
        assert mine.imported == 2
        engram.forget("lives-oslo")
        assert "engram audit --action forgotten" in engram.import_from(SOURCE, "mem0", keep_agents=False).warnings[0]


def test_with_the_audit_trail_off_a_forget_leaves_no_record_and_the_memory_comes_back(tmp_path: Path) -> None:
    with opened(tmp_path, lifecycle={"audit": False}) as engram:
        engram.import_from(SOURCE, "mem0")
        engram.for_agent("u1").forget("likes-tea")
        again = engram.import_from(SOURCE, "mem0")
        assert (again.imported, again.forgotten, again.warnings) == (1, 0, ())
        assert contents(engram.for_agent("u1")) == {"Likes tea", "Lives in Oslo"}


def test_bulk_and_lifecycle_forgets_count_too(tmp_path: Path) -> None:
    from engram.lifecycle import hygiene
    from engram.lifecycle.settings import HygieneSettings

    with opened(tmp_path) as engram:
        engram.import_from(NEWER, "mem0")
        u1 = engram.for_agent("u1")
        u1.forget(query="Acme")  # a bulk selector
        # Hygiene purges idle knowledge (chance 0: every idle entry), as the scheduled job does.
        later = engram.clock() + 400 * 86400
        report = hygiene.run(engram, HygieneSettings(knowledge_survival_chance=0.0), now=later,
                             rng=random.Random(1), agent="u1")
        assert len(report.removed) == 2 and u1.list() == [], report
        assert {e.origin for e in u1.audit_trail(action="forgotten")} == {"library", "maintenance"}
        again = engram.import_from(NEWER, "mem0")
        assert (again.imported, again.skipped, again.forgotten) == (0, 0, 3), again
        assert u1.list() == []


def test_one_agents_forget_does_not_keep_another_agents_copy_out(tmp_path: Path) -> None:
    with opened(tmp_path) as engram:
        alice, bob = engram.for_agent("alice"), engram.for_agent("bob")
        assert alice.import_from(SOURCE, "mem0", keep_agents=False).imported == 2
        alice.forget("likes-tea")
        first = bob.import_from(SOURCE, "mem0", keep_agents=False)
        assert (first.imported, first.forgotten) == (2, 0), first
        assert contents(bob) == {"Likes tea", "Lives in Oslo"}
        again = alice.import_from(SOURCE, "mem0", keep_agents=False)
        assert (again.imported, again.forgotten) == (0, 1)
        # Alice's view answers only for the agent each id is asked with.
        [forgotten_id] = [e.memory_id for e in alice.audit_trail(action="forgotten")]
        assert alice.forgotten([(forgotten_id, "alice"), (forgotten_id, "bob"), ("no-such-id", "alice")]) == {
            (forgotten_id, "alice")}


def test_a_memory_from_an_import_made_before_ids_were_per_agent_stays_forgotten(tmp_path: Path) -> None:
    with opened(tmp_path) as engram:
        alice = engram.for_agent("alice")
        old_id = record_id("mem0", "a1", None)  # as imports gave ids before: the same for every agent
        alice.store.import_memories([Memory(id=old_id, key="likes-tea", content="Likes tea", scope=Scope("alice"),
                                            created_at=1.0, updated_at=1.0)])
        alice.forget(old_id)
        # Free again, the old id went to bob's import (ids were one for every agent then).
        bob = engram.for_agent("bob")
        bob.store.import_memories([Memory(id=old_id, key="likes-tea", content="Likes tea", scope=Scope("bob"),
                                          created_at=1.0, updated_at=1.0)])
        again = alice.import_from(SOURCE, "mem0", keep_agents=False)
        assert (again.imported, again.skipped, again.forgotten) == (1, 0, 1), again
        assert contents(alice) == {"Lives in Oslo"}
        # Alice's forget is neither bob's memory nor a reason to leave bob's record out.
        assert bob.get(old_id).scope == Scope("bob")
        assert bob.import_from(SOURCE, "mem0", keep_agents=False).forgotten == 0


@pytest.mark.parametrize("backend", ["sqlite", "jsonfile", "inmemory"])
def test_a_view_answers_only_for_what_its_agent_may_see(tmp_path: Path, backend: str) -> None:
    with opened(tmp_path, backend=backend) as engram:
        alice, bob = engram.for_agent("alice"), engram.for_agent("bob")
        secret = bob.remember("Bob's diary: the surprise party is on Friday").memory
        shared = engram.remember("The office is closed on Mondays", scope="global").memory
        note = alice.for_session("s1").remember("Alice's note for this chat only", scope="session").memory
        bob.forget(secret.id)
        engram.forget(shared.id)
        alice.for_session("s1").forget(note.id)
        asked = [(secret.id, "bob"), (shared.id, None), (note.id, "alice")]
        # Bob's forget is his own: alice (or the default agent) learns nothing of it, asked either way.
        assert alice.forgotten(asked) == {(shared.id, None)}
        assert alice.forgotten([(secret.id, "alice")]) == set()
        assert engram.forgotten(asked) == {(shared.id, None)}
        assert bob.forgotten(asked) == {(secret.id, "bob"), (shared.id, None)}
        # As recall reads: the session's view sees its session's forget, the agent's view does not.
        assert alice.for_session("s1").forgotten(asked) == {(shared.id, None), (note.id, "alice")}


@pytest.mark.parametrize("backend", ["jsonfile", "inmemory"])
def test_the_other_backends_trails_keep_the_record(tmp_path: Path, backend: str) -> None:
    with opened(tmp_path, backend=backend) as engram:
        engram.import_from(SOURCE, "mem0")
        engram.for_agent("u1").forget("likes-tea")
        again = engram.import_from(SOURCE, "mem0")
        assert (again.imported, again.forgotten) == (0, 1), again
    if backend == "jsonfile":  # the JSON-lines trail outlives the process
        with opened(tmp_path, backend=backend) as engram:
            assert engram.import_from(SOURCE, "mem0").forgotten == 1


def engram_cli(home: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The ``engram`` executable run as a user would, its settings from the environment."""
    environ = {**os.environ, "HOME": str(home), "ENGRAM_EMBEDDINGS__PROVIDER": "none", **(env or {})}
    environ.pop("ENGRAM_HOME", None)
    done = subprocess.run([ENGRAM, *args], env=environ, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done


def test_the_cli_leaves_a_forgotten_memory_out_and_says_so(tmp_path: Path) -> None:
    source = tmp_path / "m0.json"
    source.write_text(SOURCE, encoding="utf-8")
    home = tmp_path / "home"
    engram_cli(home, "import", str(source))
    engram_cli(home, "-a", "u1", "forget", "likes-tea", "--reason", "wrong")
    again = engram_cli(home, "import", str(source))
    assert "imported 0 from mem0, skipped 1 already present, left out 1 forgotten since" in again.stdout
    assert "1 memory was forgotten in engram since an earlier import" in again.stderr
    assert "engram -a u1 audit --action forgotten" in again.stderr
    listed = json.loads(engram_cli(home, "--json", "-a", "u1", "list").stdout)
    assert [m["key"] for m in listed] == ["lives-oslo"]
    summary = json.loads(engram_cli(home, "--json", "import", str(source)).stdout)
    assert (summary["imported"], summary["skipped"], summary["forgotten"]) == (0, 1, 1)
    # The way back the warning names: the audit trail shows the content, remember stores it again.
    trail = json.loads(engram_cli(home, "--json", "-a", "u1", "audit", "--action", "forgotten").stdout)
    assert [row["detail"]["content"] for row in trail] == ["Likes tea"]
    engram_cli(home, "-a", "u1", "remember", "Likes tea", "--key", "likes-tea")
    last = json.loads(engram_cli(home, "--json", "import", str(source)).stdout)
    assert (last["imported"], last["forgotten"]) == (0, 1)  # no second copy of the remembered one
    assert json.loads(engram_cli(home, "--json", "-a", "u1", "count").stdout) == {"count": 2}


def test_the_cli_with_the_audit_trail_off_brings_it_back(tmp_path: Path) -> None:
    source = tmp_path / "m0.json"
    source.write_text(SOURCE, encoding="utf-8")
    home, off = tmp_path / "home", {"ENGRAM_LIFECYCLE__AUDIT": "false"}
    engram_cli(home, "import", str(source), env=off)
    engram_cli(home, "-a", "u1", "forget", "likes-tea", env=off)
    summary = json.loads(engram_cli(home, "--json", "import", str(source), env=off).stdout)
    assert (summary["imported"], summary["forgotten"]) == (1, 0)
