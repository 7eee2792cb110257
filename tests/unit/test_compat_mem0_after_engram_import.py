"""A user moving from mem0: ``engram import export.json`` (the CLI), then the mem0 facade on the same
home with the same ``user_id``/``agent_id``/``run_id``, in both home layouts (one database of every
agent, one per agent).

The two placed a mem0 item differently: ``engram import`` put an item in the agent named by its
``agent_id`` (else ``user_id``) and its ``run_id``'s session, with the ids in ``metadata["mem0"]``
alone; the facade keeps a memory in its owner's agent (``user_id``, else ``agent:`` and the
``agent_id``, else ``run:`` and the ``run_id``) with the ids at the top of the metadata. So the
facade found none of what ``engram import`` brought: ``get_all``/``search`` were empty and
``get``/``update``/``delete`` answered "not found". Both now place an item by one rule
(``importers.mem0.owner``)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from engram.compat.mem0 import Memory, MemoryNotFoundError
from engram.engine import Engram
from engram.errors import SnapshotError
from engram.interfaces.cli.app import app
from tests.importers.test_import_cli import as_json, run, runner

EXPORT = {"results": [
    {"id": "5a0c6a1e-1111-4c1b-9d35-0a1b2c3d4e5f", "memory": "Keeps her blue umbrellas by the door",
     "hash": "h-umbrellas", "metadata": {"topic": "home"}, "categories": ["home"],
     "created_at": "2025-03-01T08:00:00-08:00", "updated_at": "2025-03-02T09:30:00-08:00", "user_id": "alice"},
    {"id": "5a0c6a1e-2222-4c1b-9d35-0a1b2c3d4e5f", "memory": "Runs five kilometres every Monday",
     "hash": "h-runs", "metadata": {"sport": "running"}, "categories": ["fitness"],
     "created_at": "2025-03-03T07:00:00+00:00", "updated_at": "2025-03-03T07:00:00+00:00",
     "user_id": "alice", "agent_id": "coach", "run_id": "r1"},
    {"id": "5a0c6a1e-3333-4c1b-9d35-0a1b2c3d4e5f", "memory": "Prefers short answers with one example",
     "hash": "h-short", "metadata": None, "created_at": "2025-03-04T10:00:00+00:00", "agent_id": "coach"},
    {"id": "5a0c6a1e-4444-4c1b-9d35-0a1b2c3d4e5f", "memory": "Feeds the cat at seven",
     "hash": "h-cat", "metadata": {"pet": "cat"}, "created_at": "2025-03-05T19:00:00+00:00", "user_id": "bob"},
    {"id": "5a0c6a1e-5555-4c1b-9d35-0a1b2c3d4e5f", "memory": "The standup moved to ten",
     "hash": "h-standup", "metadata": None, "created_at": "2025-03-06T09:00:00+00:00", "run_id": "r9"},
]}


@pytest.fixture(params=[True, False], ids=["per-agent", "shared"])
def per_agent(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    # The CLI reads the layout from the environment, the facade's engine below is given it too.
    monkeypatch.setenv("ENGRAM_PER_AGENT_DATABASES", "true" if request.param else "false")
    monkeypatch.setenv("ENGRAM_EMBEDDINGS__PROVIDER", "none")
    for name in ("ENGRAM_HOME", "ENGRAM_CONFIG", "ENGRAM_AGENT", "ENGRAM_SESSION", "ENGRAM_BACKEND", "ENGRAM_PATH"):
        monkeypatch.delenv(name, raising=False)
    return request.param


def _facade(home: Path, per_agent: bool) -> Memory:
    return Memory(Engram.from_settings(home=home, agent="app", per_agent_databases=per_agent,
                                       embeddings={"provider": "none"}))


@pytest.fixture
def imported(tmp_path: Path, per_agent: bool) -> Iterator[tuple[Path, Path, Memory]]:
    """The home after ``engram -a app import export.json``, the export's path, and the facade on it."""
    home, source = tmp_path / "home", tmp_path / "export.json"
    source.write_text(json.dumps(EXPORT), encoding="utf-8")
    summary = as_json(home, "-a", "app", "import", str(source))
    assert (summary["imported"], summary["skipped"], summary["sessions"]) == (5, 0, []), summary
    assert summary["agents"] == ["agent:coach", "alice", "bob", "run:r9"], summary
    m = _facade(home, per_agent)
    yield home, source, m
    m.close()


def _iso_seconds(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def test_the_facade_finds_and_lists_what_engram_import_brought(imported: tuple[Path, Path, Memory]) -> None:
    _, _, m = imported
    alice = {r["memory"]: r for r in m.get_all(user_id="alice")["results"]}
    assert sorted(alice) == ["Keeps her blue umbrellas by the door", "Runs five kilometres every Monday"]
    umbrellas, runs = alice["Keeps her blue umbrellas by the door"], alice["Runs five kilometres every Monday"]
    # The item as mem0 gave it: its metadata, ids and times (mem0's own id stays in engram's record).
    given = EXPORT["results"][0]
    assert (umbrellas["metadata"], umbrellas["user_id"]) == (given["metadata"], "alice")
    assert "agent_id" not in umbrellas and "run_id" not in umbrellas
    assert _iso_seconds(umbrellas["created_at"]) == _iso_seconds(given["created_at"])
    assert _iso_seconds(umbrellas["updated_at"]) == _iso_seconds(given["updated_at"])
    assert (runs["user_id"], runs["agent_id"], runs["run_id"], runs["metadata"]) == ("alice", "coach", "r1",
                                                                                      {"sport": "running"})
    # The ids narrow as mem0's filters do; an agent's or a run's own memories are theirs.
    assert [r["memory"] for r in m.get_all(user_id="alice", agent_id="coach", run_id="r1")["results"]] == [
        "Runs five kilometres every Monday"]
    assert [r["memory"] for r in m.get_all(filters={"user_id": "alice", "run_id": "r2"})["results"]] == []
    assert [r["memory"] for r in m.get_all(agent_id="coach")["results"]] == ["Prefers short answers with one example"]
    assert [r["memory"] for r in m.get_all(run_id="r9")["results"]] == ["The standup moved to ten"]
    assert [r["memory"] for r in m.search("umbrellas by the door", user_id="alice")["results"]][:1] == [
        "Keeps her blue umbrellas by the door"]
    # One owner never sees another's.
    assert [r["memory"] for r in m.get_all(user_id="bob")["results"]] == ["Feeds the cat at seven"]
    assert m.search("umbrellas by the door", user_id="bob")["results"] == []
    assert m.search("umbrellas by the door", agent_id="coach")["results"] == []
    assert m.get(umbrellas["id"])["memory"] == umbrellas["memory"]


def test_the_facade_updates_and_deletes_what_engram_import_brought(imported: tuple[Path, Path, Memory],
                                                                   per_agent: bool) -> None:
    home, source, m = imported
    alice = {r["memory"]: r["id"] for r in m.get_all(user_id="alice")["results"]}
    umbrellas, runs = alice["Keeps her blue umbrellas by the door"], alice["Runs five kilometres every Monday"]
    [cat] = [r["id"] for r in m.get_all(user_id="bob")["results"]]
    m.update(umbrellas, "Keeps her green umbrellas by the door", metadata={"mood": "sunny"})
    assert m.get(umbrellas)["memory"] == "Keeps her green umbrellas by the door"
    assert m.get(umbrellas)["metadata"] == {"topic": "home", "mood": "sunny"}
    assert [e["event"] for e in m.history(umbrellas)] == ["ADD", "UPDATE"]
    m.delete(cat)
    assert m.get(cat) is None
    with pytest.raises(MemoryNotFoundError):
        m.delete(cat)
    m.delete_all(user_id="alice", run_id="r1")
    assert [r["id"] for r in m.get_all(user_id="alice")["results"]] == [umbrellas] and m.get(runs) is None
    # engram's own doors see the same: alice's change, bob's and the run's deletes.
    assert [x["content"] for x in as_json(home, "-a", "alice", "list")] == ["Keeps her green umbrellas by the door"]
    assert as_json(home, "-a", "bob", "list") == []
    if per_agent:  # each owner's memories in its own database
        with sqlite3.connect(home / "agents" / "alice" / "memory.db") as conn:
            assert list(conn.execute("SELECT agent, content FROM memories WHERE json_extract(metadata, '$.mem0.id') = ?",
                                     (umbrellas,))) == [("alice", "Keeps her green umbrellas by the door")]
    # The same export again neither undoes the update (the item is older) nor brings back a delete.
    m.close()
    again = as_json(home, "-a", "app", "import", str(source))
    assert (again["imported"], again["updated"], again["skipped"]) == (0, 0, 3), again
    m2 = _facade(home, per_agent)
    try:
        assert [r["memory"] for r in m2.get_all(user_id="alice")["results"]] == ["Keeps her green umbrellas by the door"]
        assert m2.get_all(user_id="bob")["results"] == []
    finally:
        m2.close()


def test_what_the_facade_adds_goes_through_export_and_engram_import_unchanged(tmp_path: Path, per_agent: bool) -> None:
    # The facade's memories, exported (engram export --format mem0) and brought into another home by
    # engram import, are the facade's there too: the same items, but for engram's new ids.
    home, other = tmp_path / "home", tmp_path / "other"
    m = _facade(home, per_agent)
    m.add("I keep spare keys under the mat", user_id="alice", metadata={"topic": "home"}, infer=False)
    m.add([{"role": "user", "content": "Call me Al", "name": "al"}], user_id="alice", agent_id="coach", run_id="r1",
          infer=False)
    m.add("Answer in French", agent_id="coach", infer=False)
    before = {"alice": m.get_all(user_id="alice")["results"], "coach": m.get_all(agent_id="coach")["results"]}
    m.close()
    for agent in ("alice", "agent:coach"):
        out = tmp_path / f"{agent.replace(':', '-')}.json"
        run(home, "-a", agent, "export", str(out), "--format", "mem0")
        assert as_json(other, "-a", "app", "import", str(out))["imported"] == (2 if agent == "alice" else 1)
    back = _facade(other, per_agent)
    try:
        after = {"alice": back.get_all(user_id="alice")["results"], "coach": back.get_all(agent_id="coach")["results"]}
    finally:
        back.close()

    def without_ids(items: list[dict]) -> list[dict]:
        return sorted(({k: v for k, v in item.items() if k != "id"} for item in items), key=lambda i: i["memory"])

    assert {k: without_ids(v) for k, v in after.items()} == {k: without_ids(v) for k, v in before.items()}
    assert len(before["alice"]) == 2 and len(before["coach"]) == 1


def test_engram_import_refuses_a_user_id_naming_another_doors_agent(tmp_path: Path, per_agent: bool) -> None:
    # A user's memories go to the agent named by the id as it is: "adk:app:u-7" would put an item
    # among Google ADK user u-7's memories. The facade refuses such an id; engram import now too.
    home, source = tmp_path / "home", tmp_path / "export.json"
    source.write_text(json.dumps({"results": [EXPORT["results"][0],
                                              {"id": "x", "memory": "my card ends in 0000", "user_id": "adk:app:u-7"}]}))
    result = runner.invoke(app, ["--home", str(home), "-a", "app", "import", str(source)])
    assert isinstance(result.exception, SnapshotError), result.output
    # Spelt as JSON, as every door names a refused value (it was Python's 'adk:app:u-7').
    assert str(result.exception).startswith("results[1].user_id: \"adk:app:u-7\" holds ':'"), result.exception
    assert as_json(home, "-a", "alice", "list") == [] and as_json(home, "-a", "adk:app:u-7", "list") == []


def test_what_an_older_engram_import_brought_is_found_once_imported_again(tmp_path: Path, per_agent: bool) -> None:
    # An older build kept a user's item in the user's agent under the same id, with its ids in
    # metadata["mem0"] alone: the facade did not see it, and a re-run skipped it as held. Imported
    # again, such a memory takes its ids at the top of the metadata (nothing else changes), and the
    # facade finds it; a memory another door made is left as it is.
    home, source = tmp_path / "home", tmp_path / "export.json"
    source.write_text(json.dumps({"results": [EXPORT["results"][0]]}), encoding="utf-8")
    as_json(home, "-a", "app", "import", str(source))
    old = Engram.from_settings(home=home, agent="alice", per_agent_databases=per_agent, embeddings={"provider": "none"})
    try:
        [memory] = old.list()
        # The older build's layout: the ids in metadata["mem0"] alone.
        memory = old.update(memory, metadata={k: v for k, v in memory.metadata.items() if k != "user_id"}).memory
        assert "user_id" not in memory.metadata and memory.metadata["mem0"]["user_id"] == "alice"
        native = old.remember("Alice's own note", metadata={"topic": "home"}).memory
    finally:
        old.close()
    m = _facade(home, per_agent)
    assert m.get_all(user_id="alice")["results"] == [] and m.get(memory.id) is None
    m.close()
    again = as_json(home, "-a", "app", "import", str(source))
    assert (again["imported"], again["updated"], again["skipped"]) == (0, 1, 0), again
    m = _facade(home, per_agent)
    try:
        [item] = m.get_all(user_id="alice")["results"]
        # Under the id mem0 gave it (``public_id``), as every memory imported from mem0.
        assert (item["id"], item["memory"], item["metadata"]) == (EXPORT["results"][0]["id"], memory.content,
                                                                  {"topic": "home"})
        assert as_json(home, "-a", "app", "import", str(source))["updated"] == 0  # once
    finally:
        m.close()
    check = Engram.from_settings(home=home, agent="alice", per_agent_databases=per_agent, embeddings={"provider": "none"})
    try:
        assert check.get(native.id).metadata == {"topic": "home"}
        assert check.get(memory.id).content == memory.content
    finally:
        check.close()


def test_an_id_in_an_items_own_metadata_is_refused_unless_it_is_the_items(tmp_path: Path, per_agent: bool) -> None:
    # The ids sit at the top of the metadata, where the facade reads them: another run_id in the
    # item's own metadata would be lost (or name another run), so it is refused, naming it; the
    # item's own id repeated there loses nothing, and the item comes in.
    home, source = tmp_path / "home", tmp_path / "export.json"
    item = {"id": "x", "memory": "Likes tea", "user_id": "alice", "run_id": "r1"}
    source.write_text(json.dumps({"results": [{**item, "metadata": {"run_id": "r2"}}]}), encoding="utf-8")
    result = runner.invoke(app, ["--home", str(home), "-a", "app", "import", str(source)])
    assert isinstance(result.exception, SnapshotError), result.output
    assert str(result.exception).startswith('results[0].metadata.run_id: "r2" differs from the item\'s run_id ("r1")')
    source.write_text(json.dumps({"results": [{**item, "metadata": {"run_id": "r1", "k": 1}}]}), encoding="utf-8")
    assert as_json(home, "-a", "app", "import", str(source))["imported"] == 1
    m = _facade(home, per_agent)
    try:
        [found] = m.get_all(user_id="alice", run_id="r1")["results"]
        assert (found["memory"], found["metadata"], found["run_id"]) == ("Likes tea", {"k": 1}, "r1")
    finally:
        m.close()


def test_the_id_calls_take_the_id_mem0_gave(imported: tuple[Path, Path, Memory]) -> None:
    # An application moving from mem0 kept the ids mem0's add returned in its own tables and calls
    # get/update/delete/history with them. engram import derives engram's id from mem0's (with the
    # agent and the time) and keeps mem0's at metadata["mem0"]["id"]: the facade answered None and
    # "not found" for it. Now it finds the memory by it, and gives it as the memory's id everywhere
    # (compat.mem0.public_id), so the ids in search and get_all are the ones the application holds.
    home, _, m = imported
    umbrellas, runs, _, cat, standup = (item["id"] for item in EXPORT["results"])
    got = m.get(umbrellas)
    assert (got["id"], got["memory"], got["user_id"], got["metadata"]) == (
        umbrellas, "Keeps her blue umbrellas by the door", "alice", {"topic": "home"})
    assert sorted(r["id"] for r in m.get_all(user_id="alice")["results"]) == sorted([umbrellas, runs])
    assert [r["id"] for r in m.search("umbrellas by the door", user_id="alice")["results"]][:1] == [umbrellas]
    assert [r["id"] for r in m.get_all(run_id="r9")["results"]] == [standup]
    m.update(umbrellas, "Keeps her green umbrellas by the door", metadata={"mood": "sunny"})
    got = m.get(umbrellas)
    assert (got["id"], got["memory"], got["metadata"]) == (umbrellas, "Keeps her green umbrellas by the door",
                                                           {"topic": "home", "mood": "sunny"})
    history = m.history(umbrellas)
    assert [(e["event"], e["memory_id"], e["old_memory"], e["new_memory"]) for e in history] == [
        ("ADD", umbrellas, None, "Keeps her blue umbrellas by the door"),
        ("UPDATE", umbrellas, "Keeps her blue umbrellas by the door", "Keeps her green umbrellas by the door")]
    # The memory itself changed, under engram's id, as engram's own doors show.
    [stored] = as_json(home, "-a", "alice", "list", "--meta", "topic=home")
    assert stored["content"] == "Keeps her green umbrellas by the door" and stored["id"] != umbrellas
    assert m.get(stored["id"])["id"] == umbrellas  # engram's id still reaches it, under mem0's
    assert m.delete(cat) == {"message": "Memory deleted successfully!"}
    assert m.get(cat) is None and as_json(home, "-a", "bob", "list") == []
    with pytest.raises(MemoryNotFoundError):
        m.delete(cat)
    with pytest.raises(MemoryNotFoundError):
        m.update("5a0c6a1e-9999-4c1b-9d35-0a1b2c3d4e5f", "no such memory")


def test_a_mem0_id_reaches_no_memory_the_facade_did_not_make(tmp_path: Path, per_agent: bool) -> None:
    # The lookup by mem0's id reaches what the id calls reach by engram's: the memories the facade
    # made (or engram import placed as it would), in their owners' agents. The same export imported
    # into one engram agent (--into-agent) is that agent's, and an engram agent's own memory naming a
    # mem0 id in its metadata is its own: neither is found, changed or deleted by the id.
    home, source = tmp_path / "home", tmp_path / "export.json"
    source.write_text(json.dumps(EXPORT), encoding="utf-8")
    assert as_json(home, "-a", "support", "import", str(source), "--into-agent")["imported"] == 5
    own = Engram.from_settings(home=home, agent="carol", per_agent_databases=per_agent, embeddings={"provider": "none"})
    try:
        note = own.remember("Carol's own note", metadata={"mem0": {"id": "c-1"}}).memory
    finally:
        own.close()
    m = _facade(home, per_agent)
    try:
        for item in (*EXPORT["results"], {"id": "c-1"}):
            assert m.get(item["id"]) is None, item["id"]
            assert m.history(item["id"]) == []
            for call, args in (("update", (item["id"], "changed")), ("delete", (item["id"],))):
                with pytest.raises(MemoryNotFoundError):
                    getattr(m, call)(*args)
        assert m.get_all(user_id="alice")["results"] == [] and m.get_all(user_id="carol")["results"] == []
    finally:
        m.close()
    assert sorted(x["content"] for x in as_json(home, "-a", "support", "list")) == sorted(
        i["memory"] for i in EXPORT["results"])
    assert [x["content"] for x in as_json(home, "-a", "carol", "list")] == [note.content]


def test_mem0_ids_survive_export_and_import_into_another_home(imported: tuple[Path, Path, Memory],
                                                              tmp_path: Path, per_agent: bool) -> None:
    # engram export --format mem0 gives an imported memory's mem0 id back; imported into another home
    # it is kept there too, so the facade on that home takes the same ids as mem0 gave.
    home, _, m = imported
    umbrellas, runs = EXPORT["results"][0]["id"], EXPORT["results"][1]["id"]
    m.update(umbrellas, "Keeps her green umbrellas by the door")
    out, other = tmp_path / "alice.json", tmp_path / "other"
    run(home, "-a", "alice", "export", str(out), "--format", "mem0")
    assert sorted(i["id"] for i in json.loads(out.read_text(encoding="utf-8"))["results"]) == sorted([umbrellas, runs])
    assert as_json(other, "-a", "app", "import", str(out))["imported"] == 2
    back = _facade(other, per_agent)
    try:
        assert back.get(umbrellas)["memory"] == "Keeps her green umbrellas by the door"
        assert sorted(r["id"] for r in back.get_all(user_id="alice")["results"]) == sorted([umbrellas, runs])
        back.delete(runs)
        assert [r["id"] for r in back.get_all(user_id="alice")["results"]] == [umbrellas]
    finally:
        back.close()


def test_history_by_the_mem0_id_keeps_a_deleted_memorys_events(imported: tuple[Path, Path, Memory], per_agent: bool) -> None:
    # history(mem0 id) after delete(mem0 id) answered [] (the trail knows the memory by engram's id),
    # where mem0 gives its events, the DELETE included. The forget row keeps the memory whole, its
    # mem0 id too, and the facade finds the rows through it; only a memory the facade made.
    home, _, m = imported
    umbrellas, _, short, cat, _ = (item["id"] for item in EXPORT["results"])
    engram_id = m.engram.for_agent("alice").get_by_key(
        next(x["key"] for x in as_json(home, "-a", "alice", "list", "--meta", "topic=home"))).id
    m.update(umbrellas, "Keeps her green umbrellas by the door")
    m.delete(umbrellas)
    history = m.history(umbrellas)
    assert [(e["event"], e["memory_id"], e["old_memory"], e["new_memory"], e["is_deleted"]) for e in history] == [
        ("ADD", umbrellas, None, "Keeps her blue umbrellas by the door", False),
        ("UPDATE", umbrellas, "Keeps her blue umbrellas by the door", "Keeps her green umbrellas by the door", False),
        ("DELETE", umbrellas, "Keeps her green umbrellas by the door", None, True)]
    assert _iso_seconds(history[0]["created_at"]) == _iso_seconds("2025-03-01T08:00:00-08:00")
    assert m.history(engram_id) == history  # engram's id reaches the same, under mem0's
    m.delete_all(agent_id="coach")
    assert [e["event"] for e in m.history(short)] == ["ADD", "DELETE"]
    # reset drops the history with the memories, as mem0's reset does
    m.reset()
    assert m.history(cat) == [] and [e["event"] for e in m.history(umbrellas)] == ["ADD", "UPDATE", "DELETE"]


def test_history_by_a_mem0_id_reaches_no_deleted_memory_the_facade_did_not_make(tmp_path: Path, per_agent: bool) -> None:
    # The same export in one engram agent (--into-agent), and an engram agent's own memory naming a
    # mem0 id, forgotten there: their trails are those agents' own, never the facade's history.
    home, source = tmp_path / "home", tmp_path / "export.json"
    source.write_text(json.dumps(EXPORT), encoding="utf-8")
    assert as_json(home, "-a", "support", "import", str(source), "--into-agent")["imported"] == 5
    for agent, note in (("carol", "Carol's own note"), ("support", None)):
        own = Engram.from_settings(home=home, agent=agent, per_agent_databases=per_agent, embeddings={"provider": "none"})
        try:
            if note is not None:
                own.forget(own.remember(note, metadata={"mem0": {"id": "c-1"}}, source="mem0").memory)
            for memory in own.list(limit=100, scope="agent"):
                own.forget(memory)
        finally:
            own.close()
    m = _facade(home, per_agent)
    try:
        for mem0_id in (*(item["id"] for item in EXPORT["results"]), "c-1"):
            assert m.history(mem0_id) == [], mem0_id
    finally:
        m.close()


def test_import_mem0_keeps_a_future_time_as_engram_import_does(tmp_path: Path, per_agent: bool) -> None:
    # An import keeps its source's times as given. engram import kept an item created in 2999 (a clock
    # set wrong in the source, a date typed by hand); the facade's import_mem0 refused the whole export
    # with "created_at ... is later than now", as remember refuses it. Both now keep it, alike.
    item = {"id": "5a0c6a1e-7777-4c1b-9d35-0a1b2c3d4e5f", "memory": "Plans a trip to the Moon", "hash": "h-moon",
            "metadata": {"topic": "travel"}, "created_at": "2999-01-01T00:00:00+00:00",
            "updated_at": "2999-01-02T00:00:00+00:00", "user_id": "alice"}
    export = {"results": [EXPORT["results"][0], item]}
    cli_home, source = tmp_path / "cli", tmp_path / "export.json"
    source.write_text(json.dumps(export), encoding="utf-8")
    assert as_json(cli_home, "-a", "app", "import", str(source))["imported"] == 2
    by_cli = {x["content"]: (x["created_at"], x["updated_at"]) for x in as_json(cli_home, "-a", "alice", "list")}
    m = _facade(tmp_path / "facade", per_agent)
    try:
        assert m.import_mem0(export) == {"imported": 2, "skipped": 0, "forgotten": 0}
        got = m.get(item["id"])
        assert (got["memory"], _iso_seconds(got["created_at"]), _iso_seconds(got["updated_at"])) == (
            item["memory"], _iso_seconds(item["created_at"]), _iso_seconds(item["updated_at"]))
        assert m.import_mem0(export) == {"imported": 0, "skipped": 2, "forgotten": 0}  # and the same again stores nothing
    finally:
        m.close()
    by_facade = {x["content"]: (x["created_at"], x["updated_at"])
                 for x in as_json(tmp_path / "facade", "-a", "alice", "list")}
    assert by_facade == by_cli and by_cli[item["memory"]] == (_iso_seconds(item["created_at"]), _iso_seconds(item["updated_at"]))


def test_the_facade_reaches_what_engram_import_brought_for_an_id_that_is_no_agent_name(tmp_path: Path,
                                                                                       per_agent: bool) -> None:
    # mem0 takes any id ("José", an agent "ops bot/2"); engram import places such an owner in the agent its
    # importer names for it (Jos-24c2ab65). The facade named it by the id as it is, which no agent can be
    # named: get_all(user_id="José") was refused, so the memories imported for José were out of its reach.
    home, source = tmp_path / "home", tmp_path / "export.json"
    items = [{"id": "m-jose", "memory": "  Prefiere té verde\r\n", "user_id": "José", "created_at": "2025-03-01T08:00:00Z"},
             {"id": "m-bot", "memory": "Deploys go out on Tuesdays", "agent_id": "ops/bot", "created_at": "2025-03-01T08:00:00Z"}]
    source.write_text(json.dumps({"results": items}), encoding="utf-8")
    summary = as_json(home, "-a", "app", "import", str(source))
    assert summary["imported"] == 2 and all(agent.rsplit("-", 1)[0] in ("Jos", "agent:ops-bot")
                                            for agent in summary["agents"]), summary
    m = _facade(home, per_agent)
    try:
        found = m.get_all(user_id="José")["results"]
        assert [(r["id"], r["memory"], r["user_id"]) for r in found] == [("m-jose", "  Prefiere té verde\r\n", "José")]
        assert [r["id"] for r in m.search("té verde", user_id="José")["results"]] == ["m-jose"]
        assert [r["id"] for r in m.get_all(agent_id="ops/bot")["results"]] == ["m-bot"]
        # What the facade adds for José joins the same agent; another owner sees none of it.
        m.add("Vive en Oporto", user_id="José", infer=False)
        assert sorted(r["memory"] for r in m.get_all(user_id="José")["results"]) == [
            "  Prefiere té verde\r\n", "Vive en Oporto"]
        assert m.get_all(user_id="Jose")["results"] == [] and m.get_all(user_id="alice")["results"] == []
        # The facade's own import of the same export finds them where engram import put them.
        assert m.import_mem0({"results": items})["skipped"] == 2
    finally:
        m.close()
    assert {r["content"] for r in as_json(home, "-a", summary["agents"][0], "list")} >= {"  Prefiere té verde\r\n"}
