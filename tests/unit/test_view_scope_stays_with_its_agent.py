"""An agent's view of the engine never reaches another agent's memories through an explicit
``scope=``: remember, count, list and export refuse it naming ``scope`` and store nothing;
the agent's own sessions and global memories stay reachable, and ``for_agent`` opens the other."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.engine import Engram
from engram.errors import ValidationError
from engram.model import Scope


@pytest.fixture
def root(tmp_path: Path):
    with Engram.from_settings(home=tmp_path, embeddings={"provider": "none"}, files={"enabled": False}) as engram:
        engram.for_agent("bob").remember("bob's private note", key="secret")
        yield engram


@pytest.mark.parametrize("call", [
    lambda alice: alice.remember("planted in bob's memories", scope=Scope("bob")),
    lambda alice: alice.remember("planted in bob's session", scope=Scope("bob", "s1")),
    lambda alice: alice.count(scope=Scope("bob")),
    lambda alice: alice.list(scope=Scope("bob")),
    lambda alice: alice.export_snapshot(scope=Scope("bob")),
])
def test_another_agents_scope_is_refused(root: Engram, call) -> None:  # noqa: ANN001
    alice = root.for_agent("alice")
    with pytest.raises(ValidationError) as raised:
        call(alice)
    assert raised.value.field == "scope" and "for_agent" in str(raised.value)
    bob = root.for_agent("bob")
    assert [m.content for m in bob.list()] == ["bob's private note"]


def test_own_sessions_and_global_stay_reachable(root: Engram) -> None:
    alice = root.for_agent("alice")
    alice.remember("alice in a session", scope=Scope("alice", "s1"))
    alice.remember("for everyone", scope=Scope())
    assert alice.count(scope=Scope("alice", "s1")) == 1
    assert root.for_agent("bob").count(scope=Scope()) == 1


def test_an_agents_audit_trail_holds_its_own_entries_however_busy_others_are(tmp_path: Path) -> None:
    from engram.interfaces import seams

    with Engram.from_settings(home=tmp_path, agent="alice", embeddings={"provider": "none"},
                              files={"enabled": False}) as alice:
        alice.remember("alice note one")
        bob = alice.for_agent("bob")
        for i in range(120):
            bob.remember(f"bob filler {i} topic {i * 7}")
        recent = seams.audit(alice).recent(limit=5)
        assert [e["memory_scope"] for e in recent] == ["agent:alice"]
        assert all(e["memory_scope"] == "agent:bob" for e in seams.audit(bob).recent(limit=200))


def test_cli_audit_shows_only_the_agents_own_entries(tmp_path: Path) -> None:
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "ENGRAM_HOME": str(tmp_path / "home"), "ENGRAM_EMBEDDINGS__PROVIDER": "none"}

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "engram", *args], capture_output=True, text=True, env=env,
                              timeout=120)

    assert cli("-a", "bob", "remember", "Bob secret: launch code 1234").returncode == 0
    assert cli("-a", "alice", "remember", "alice's own note").returncode == 0
    shown = cli("-a", "alice", "--json", "audit")
    assert shown.returncode == 0, shown.stderr
    rows = json.loads(shown.stdout)
    assert rows and {r["memory_scope"] for r in rows} == {"agent:alice"}
    assert "launch code" not in shown.stdout


def test_an_agents_memory_cannot_supersede_a_global_one(root: Engram) -> None:
    root.remember("company policy is remote-first", key="policy", scope="global")
    s = root.for_agent("s")
    s.remember("company is office-first now", key="x")
    with pytest.raises(ValidationError) as raised:
        s.supersede("policy", "x")
    assert raised.value.field == "supersede" and "global" in str(raised.value)
    assert root.for_agent("other").get("policy").superseded_by is None
    s.remember("company is office-first, for everyone", key="y", scope="global")
    assert s.supersede("policy", "y").superseded_by is not None  # a global successor may


def test_forget_own_clears_the_views_own_scopes_and_nothing_else(root: Engram) -> None:
    """``forget_own`` (what a framework's ``clear`` calls): the agent's scope and the view's
    session, narrowed by the filters, each forget in the audit trail with its reason; global
    memories, another agent's and another session's stay."""
    from engram.engine import Filters
    from engram.interfaces import seams

    alice = root.for_agent("alice", "s1")
    alice.remember("alice agent-wide", scope=Scope("alice"))
    alice.remember("alice in s1")
    alice.remember("alice in s2", scope=Scope("alice", "s2"))
    alice.remember("alice core fact", category="core", scope=Scope("alice"))
    alice.remember("for everyone", scope=Scope())
    old = alice.remember("alice old plan", scope=Scope("alice")).memory
    alice.supersede(old, alice.remember("alice new plan", scope=Scope("alice")).memory)

    assert [m.content for m in alice.forget_own(filters=Filters(category="core"), dry_run=True)] == ["alice core fact"]
    removed = alice.forget_own(reason="clear for a test")
    assert sorted(m.content for m in removed) == ["alice agent-wide", "alice core fact", "alice in s1", "alice new plan"]
    left = root.for_agent("alice", "s2").list(filters=Filters(include_superseded=True))
    assert sorted(m.content for m in left) == ["alice in s2", "alice old plan", "for everyone"]
    assert alice.forget_own(filters=Filters(include_superseded=True))[0].content == "alice old plan"
    assert sorted(m.content for m in root.for_agent("bob").list()) == ["bob's private note", "for everyone"]
    reasons = [e["reason"] for e in seams.audit(alice).recent(limit=50) if e["action"] == "forgotten"]
    assert reasons.count("clear for a test") == 4


def test_a_link_row_on_a_global_memory_names_no_other_agents_memory(root: Engram) -> None:
    """Linking its memory to a global one writes an audit row on each end; the global end's row
    is read by every agent, so it must not name the linking agent's memory (its key), and naming
    nothing another agent may read, it is left out of their views (``visibility.without_others_links``:
    shown, it told them something hidden was linked)."""
    from engram.interfaces import seams

    alice, bob = root.for_agent("alice"), root.for_agent("bob")
    shared = bob.remember("the office opens at nine", key="office-hours", scope="global").memory
    alice.remember("alice plans to resign in May", key="alice-resigns-in-may")
    alice.link("alice-resigns-in-may", shared)
    alice.unlink("alice-resigns-in-may", shared)
    shown = seams.audit(bob).recent(limit=50)
    assert {e["action"] for e in shown}.isdisjoint({"linked", "unlinked"})
    assert "alice-resigns-in-may" not in str(shown)
    # the trail keeps the global end's rows, naming nothing
    kept = [e for e in root.audit_of(shared.id, every_agent=True) if e.action in ("linked", "unlinked")]
    assert [(e.action, e.detail) for e in kept] == [("linked", {"with": []}), ("unlinked", {"with": []})]
    # alice's own row still names the global end it was linked to
    own = [e for e in seams.audit(alice).recent(limit=50, memory="alice-resigns-in-may") if e["action"] == "linked"]
    assert [e["detail"] for e in own] == [{"with": ["office-hours"]}]


def test_a_forgotten_global_memorys_audit_row_shows_only_links_its_reader_may_read(root: Engram) -> None:
    """A forget keeps the memory whole in the trail, its links too; a global memory's row is read
    by every agent, so its links are shown as the memory's own are: to memories the reader may read."""
    from engram.interfaces import seams

    alice, bob = root.for_agent("alice"), root.for_agent("bob")
    shared = bob.remember("the office opens at nine", key="office-hours", scope="global").memory
    own = bob.remember("bob starts at ten", key="bob-starts").memory
    secret = alice.remember("alice plans to resign in May", key="alice-resigns").memory
    alice.link(secret, shared)
    bob.link(own, shared)
    bob.forget(shared.id)
    (row,) = [e for e in seams.audit(bob).recent(limit=50) if e["action"] == "forgotten"]
    assert row["detail"]["links"] == [own.id]
    assert secret.id not in str(seams.audit(bob).recent(limit=50))
    (seen,) = [e for e in alice.audit_trail(50, action="forgotten")]
    assert seen.detail is not None and seen.detail["links"] == [secret.id]
    # the trail itself (the operator's) keeps the memory whole
    from engram.audit import AuditQuery
    (kept,) = root.backend.audit_log().query(AuditQuery(action="forgotten"))
    assert kept.detail is not None and sorted(kept.detail["links"]) == sorted([own.id, secret.id])


def test_mark_used_never_touches_another_agents_memory(root: Engram) -> None:
    """``mark_used`` takes memories as records, so a caller can hand in one carrying another agent's
    id (as a ``Memory`` built by hand says global): the view marks only what it may read."""
    from dataclasses import replace

    bob = root.for_agent("bob")
    secret = bob.get("secret")
    alice = root.for_agent("alice")
    mine = alice.remember("alice's own note").memory
    alice.mark_used([replace(secret, scope=Scope()), mine])
    after = bob.get("secret")
    assert (after.recall_count, after.importance, after.last_accessed) == \
           (secret.recall_count, secret.importance, secret.last_accessed)
    assert alice.get(mine.id).recall_count == mine.recall_count + 1  # its own still counts


def test_link_keys_never_names_another_agents_memory_whatever_memories_are_handed_in(root: Engram) -> None:
    """``link_keys`` takes ``Memory`` records, which anyone can build: one carrying bob's id as its
    own id and as a link (or beside a record of bob's id) is shown nothing of bob's memory, whose
    key here (made from the content, or named) would tell alice what it holds."""
    from dataclasses import replace

    alice = root.for_agent("alice")
    theirs = root.for_agent("bob").get_by_key("secret")
    mine = alice.remember("alice's note", key="note").memory
    other = alice.remember("alice's other note", key="other", links=["note"]).memory
    assert alice.link_keys([replace(mine, id=theirs.id, links=(theirs.id,))]) == [[]]
    assert alice.link_keys([replace(other, links=(theirs.id, mine.id)), replace(mine, id=theirs.id, links=())]) \
        == [["note"], []]
    assert alice.link_keys([alice.get("note")]) == [["other"]]


def test_link_keys_of_a_memory_of_another_session_show_its_links_as_that_session_does(root: Engram) -> None:
    """A memory of another of alice's sessions, reached by its id, has its links named as that
    session shows them (``get`` shows them so); bob's memory, whatever record names it, stays unnamed."""
    from dataclasses import replace

    alice = root.for_agent("alice")
    in_session = root.for_agent("alice", "s1")
    first = in_session.remember("alice's plan for the trip", key="plan", scope="session").memory
    in_session.remember("alice's packing list", key="packing", links=["plan"], scope="session")
    theirs = root.for_agent("bob").get_by_key("secret")
    reached = alice.get(first.id)  # by id from alice's agent view, which does not list session s1
    assert alice.link_keys([reached]) == [["packing"]]
    assert alice.link_keys([replace(reached, links=(*reached.links, theirs.id))]) == [["packing"]]
