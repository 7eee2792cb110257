"""Zep's users, as the user's own code dumps them with Zep's SDK, through ``engram import`` (the CLI
runner on a real SQLite home) and ``Engram.import_from``. The fixture is written from zep-cloud's
types (Message, EntityEdge, EntityNode as ``GET`` returns them; one user as ``model_dump()`` gives
them, with ``uuid_``). Checked: each user becomes an agent with its facts (Zep's valid time kept, an
outdated one closed, not superseded), its entity summaries linked to their facts and its threads'
conversations in order; a second run imports nothing; contents arrive byte for byte; a malformed
dump names its JSON path and writes nothing."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from engram.config import load_settings
from engram.engine import Engram
from engram.errors import SnapshotError, StorageError
from engram.interfaces.cli.app import app
from engram.temporal.instants import parse_time
from tests.failing_writes import sqlite_insert_fails
from tests.importers.test_import_cli import ENGRAM, FIXTURES, as_json, run, runner

DUMP = FIXTURES / "zep.json"


def at(text: str) -> float | None:
    return parse_time(text, "t")


def document() -> dict[str, Any]:
    return json.loads(DUMP.read_text(encoding="utf-8"))


@pytest.mark.parametrize("kind", [None, "zep"])
def test_each_user_becomes_an_agent_with_its_facts_summaries_and_threads(tmp_path: Path, kind: str | None) -> None:
    home = tmp_path / "home"
    args = ["import", str(DUMP), *(["--from", kind] if kind else [])]
    first = as_json(home, *args)
    assert (first["kind"], first["imported"], first["messages_imported"], first["agents"]) == (
        "zep", 9, 8, ["alice", "bob"]), first
    warnings = "\n".join(first["warnings"])
    assert "users[0] (alice): facts Zep marked outdated (expired_at) (1) imported with their validity closed" in warnings
    assert "users[0] (alice): entity nodes without a summary (1)" in warnings
    assert "users[0].threads[0] (onboarding-2025-01): not imported: tool messages (1)" in warnings
    assert "users[0] (alice): first_name, last_name, email, metadata not imported" in warnings
    again = as_json(home, *args)
    assert (again["imported"], again["skipped"], again["messages_imported"], again["messages_skipped"]) == (0, 9, 0, 8)
    assert as_json(home, "list") == []  # the users are their own agents, not the importing one

    facts = {m["content"]: m for m in as_json(home, "-a", "alice", "list", "--tag", "works_at")}
    old, new = facts["Alice works at Acme Corp as a data engineer."], facts["Alice works at Globex."]
    assert (old["valid_from"], old["valid_until"]) == (at("2025-01-06T00:00:00Z"), at("2025-05-26T00:00:00Z"))
    assert (new["valid_from"], new["valid_until"], new["superseded_by"]) == (at("2025-05-26T00:00:00Z"), None, None)
    assert old["superseded_by"] is None  # Zep names no successor: closed, not superseded
    assert (old["category"], old["source"], old["related_entity"], old["scope"]) == (
        "knowledge", "zep", "Alice", "agent:alice")
    assert old["created_at"] == at("2025-01-10T09:01:21Z")
    assert old["metadata"] == {"zep": {
        "edge": "e7b2c4d6-2222-4ccc-8ddd-000000000001", "user_id": "alice", "name": "WORKS_AT",
        "source_node_uuid": "9e1f0c3a-1111-4aaa-8bbb-000000000001",
        "target_node_uuid": "9e1f0c3a-1111-4aaa-8bbb-000000000002", "source": "Alice", "target": "Acme Corp",
        "valid_at": "2025-01-06T00:00:00Z", "invalid_at": "2025-05-26T00:00:00Z",
        "expired_at": "2025-06-03T18:20:11Z", "episodes": ["c3a1e5f7-3333-4eee-8fff-000000000001"],
        # the text this import brought, for a later one to tell from an edit in engram
        "imported_text_sha256": hashlib.sha256(old["content"].encode()).hexdigest()}}
    # As of a time, the fact that held then: Acme in March, Globex in July.
    for when, holds in (("2025-03-01", "Acme"), ("2025-07-01", "Globex")):
        hits = as_json(home, "-a", "alice", "recall", "Alice works at", "--as-of", when)["hits"]
        assert [h["memory"]["content"] for h in hits if h["memory"]["tags"] == ["works_at"]] == [
            f"Alice works at {'Acme Corp as a data engineer' if holds == 'Acme' else 'Globex'}."]

    summary = as_json(home, "-a", "alice", "get", "acme-corp")
    assert (summary["content"], summary["tags"], summary["related_entity"]) == (
        "Acme Corp employed Alice as a data engineer until May 2025.", ["organization"], "Acme Corp")
    assert summary["metadata"]["zep"]["attributes"] == {"industry": "logistics"}
    # An entity's summary links the facts whose ends it is; a node without a summary names its entity.
    assert {m["content"] for m in as_json(home, "-a", "alice", "neighbours", "alice")} == {
        "Alice works at Acme Corp as a data engineer.", "Alice works at Globex.", "Alice lives in Lisbon.",
        "Alice enjoys pastéis de nata."}
    assert as_json(home, "-a", "alice", "list", "--tag", "likes")[0]["metadata"]["zep"]["target"] == "pastéis de nata"

    shown = as_json(home, "-a", "alice", "history", "show", "zep:onboarding-2025-01")["messages"]
    assert [(m["role"], m["content"]) for m in shown] == [
        ("user", "Hi! I just moved to Lisbon and started at Acme Corp as a data engineer."),
        ("assistant", "Welcome to Lisbon, Alice! How are you finding Acme so far?"),
        ("user", "Loving it — the pastéis de nata are dangerous 🥐"),
        ("assistant", "Ha! Try Manteigaria in Chiado.")]
    assert shown[0]["created_at"] == pytest.approx(at("2025-01-10T09:01:12.123456Z"))
    assert shown[0]["metadata"] == {"channel": "web", "zep": {"uuid": "a1d4e0b2-0001-4000-8000-000000000001",
                                                              "name": "Alice"}}
    assert len(as_json(home, "-a", "alice", "history", "show", "zep:career-2025-06")["messages"]) == 2
    # bob's objects as the SDK's model_dump() gives them: the id under uuid_.
    bob = as_json(home, "-a", "bob", "list")
    assert {m["content"] for m in bob} == {"Bob owns an espresso machine.",
                                           "Bob owns an espresso machine that trips the breaker."}
    assert [m["metadata"]["zep"].get("edge") for m in bob if m["tags"] == ["owns"]] == [
        "b0b00000-2222-4ccc-8ddd-000000000001"]
    messages = as_json(home, "-a", "bob", "history", "show", "zep:support-42")["messages"]
    assert messages[1]["metadata"] == {"zep": {"uuid": "b0b00000-0001-4000-8000-000000000002"}}


def test_into_agent_keeps_every_user_in_the_importing_one(tmp_path: Path) -> None:
    home = tmp_path / "home"
    done = as_json(home, "-a", "me", "import", str(DUMP), "--into-agent")
    assert (done["imported"], done["messages_imported"], done["agents"]) == (9, 8, ["me"]), done
    assert len(as_json(home, "-a", "me", "list")) == 9
    assert len(as_json(home, "-a", "me", "history", "show", "zep:support-42")["messages"]) == 2
    assert as_json(home, "-a", "alice", "list") == []
    assert as_json(home, "-a", "me", "import", str(DUMP), "--into-agent")["skipped"] == 9


TS_DUMP = FIXTURES / "zep-ts.json"


def test_a_dump_of_zeps_typescript_sdk_reads_its_camel_case_names(tmp_path: Path) -> None:
    """Zep's TypeScript SDK gives the API's objects with camelCase names (``userId``, ``createdAt``,
    ``sourceNodeUuid``, ``validAt``): a dump written from them (the fixture: ``JSON.stringify`` of
    zep-cloud's ``User``, ``Message``, ``EntityEdge`` and ``EntityNode``) imports as the API's JSON does.
    Such a file was not even recognised (no ``user_id``), nor, named, read."""
    home = tmp_path / "home"
    first = as_json(home, "import", str(TS_DUMP))
    assert (first["kind"], first["imported"], first["messages_imported"], first["agents"]) == (
        "zep", 2, 2, ["carol"]), first
    warnings = "\n".join(first["warnings"])
    assert "users[0] (carol): firstName, lastName, email not imported" in warnings, warnings
    assert "users[0].threads[0] (garden-2025-02): not imported: tool messages (1)" in warnings, warnings
    # Each warning names the fields as the file spells them (the edge's expiredAt and invalidAt).
    assert ("users[0] (carol): facts Zep marked outdated (expiredAt) (1) imported with their validity closed "
            "(valid_until = invalidAt, else expiredAt)") in warnings, warnings
    assert "expired_at" not in warnings and "invalid_at" not in warnings, warnings
    [fact] = as_json(home, "-a", "carol", "list", "--tag", "grows_in")
    assert (fact["content"], fact["related_entity"], fact["created_at"]) == (
        "Carol grows tomatoes in the south bed.", "Carol", at("2025-02-01T10:00:10Z"))
    assert (fact["valid_from"], fact["valid_until"]) == (at("2025-02-01T00:00:00Z"), at("2025-09-30T00:00:00Z"))
    assert fact["metadata"]["zep"] == {
        "edge": "c0c00000-2222-4ccc-8ddd-000000000001", "user_id": "carol", "name": "GROWS_IN",
        "source_node_uuid": "c0c00000-1111-4aaa-8bbb-000000000001",
        "target_node_uuid": "c0c00000-1111-4aaa-8bbb-000000000002", "source": "Carol", "target": "South bed",
        "valid_at": "2025-02-01T00:00:00Z", "invalid_at": "2025-09-30T00:00:00Z",
        "expired_at": "2025-10-02T08:00:00Z", "episodes": ["c0c00000-3333-4eee-8fff-000000000001"],
        "imported_text_sha256": hashlib.sha256(fact["content"].encode()).hexdigest()}
    summary = as_json(home, "-a", "carol", "get", "carol")
    assert (summary["content"], summary["tags"], summary["created_at"]) == (
        "Carol grows tomatoes in her south bed.", ["user"], at("2025-02-01T10:00:09Z"))
    assert [m["content"] for m in as_json(home, "-a", "carol", "neighbours", "carol")] == [fact["content"]]
    shown = as_json(home, "-a", "carol", "history", "show", "zep:garden-2025-02")["messages"]
    assert [(m["role"], m["content"]) for m in shown] == [
        ("user", "Where should the tomatoes go? 🍅"), ("assistant", "Tomatoes want at least six hours of sun.")]
    assert shown[0]["created_at"] == pytest.approx(at("2025-02-01T10:00:02.250Z"))
    assert shown[0]["metadata"] == {"channel": "app", "zep": {"uuid": "c0c00000-0001-4000-8000-000000000001",
                                                              "name": "Carol"}}
    again = as_json(home, "import", str(TS_DUMP), "--from", "zep")
    assert (again["imported"], again["skipped"], again["messages_skipped"]) == (0, 2, 2), again


def test_a_message_time_the_history_refuses_is_named_as_the_file_spells_it(tmp_path: Path) -> None:
    """A message dated later than now is refused by the history, which names engram's ``created_at``:
    the import names it as the TypeScript SDK's dump spells it, ``createdAt``, as ChatGPT's
    ``create_time`` is named."""
    data = json.loads(TS_DUMP.read_text(encoding="utf-8"))
    data["users"][0]["threads"][0]["messages"][0]["createdAt"] = "3000-01-01T00:00:00Z"
    with Engram.from_settings(load_settings(home=tmp_path / "home", embeddings={"provider": "none"})) as mem:
        with pytest.raises(SnapshotError) as refused:
            mem.import_from(json.dumps(data), "zep")
        assert str(refused.value).startswith(
            "users[0].threads[0].messages[0].createdAt: 3000-01-01T00:00:00+00:00 is later than now"), str(refused.value)
        assert mem.for_agent("carol").history.conversations() == []


@pytest.mark.parametrize(("dump", "node", "field"), [(DUMP, "3000-01-01T00:00:00Z", "created_at"),
                                                     (TS_DUMP, 32503680000, "createdAt")])
def test_a_node_time_in_the_year_3000_is_kept_and_named_in_a_warning(tmp_path: Path, dump: Path, node: Any,
                                                                      field: str) -> None:
    """A record time later than now (a node made in the year 3000) is kept as the source gives it,
    as every importer keeps a source's times, but named per record, as the file spells the field:
    it was stored without a word, the memory new to retention, hygiene and decay for ever after.
    A time past any date engram can show is refused, naming it (a time that is no date)."""
    data = json.loads(dump.read_text(encoding="utf-8"))
    data["users"][0]["nodes"][0][field] = node
    path = tmp_path / "zep.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    home = tmp_path / "home"
    summary = as_json(home, "import", str(path), "--from", "zep")
    named = [w for w in summary["warnings"] if "later than now" in w]
    assert named == [f"users[0].nodes[0]: {field} 3000-01-01T00:00:00+00:00 is later than now: kept as the source gives it "
                     "(remember would refuse it; retention, hygiene and decay count the memory as new until then)"], summary
    agent = data["users"][0].get("user_id") or data["users"][0]["userId"]
    name = data["users"][0]["nodes"][0]["name"]
    [kept] = [m for m in as_json(home, "-a", agent, "list", "--limit", "1000") if m["related_entity"] == name
              and m["content"] == data["users"][0]["nodes"][0]["summary"]]
    assert kept["created_at"] == 32503680000.0
    assert as_json(home, "import", str(path), "--from", "zep")["imported"] == 0  # found again: its id holds that time
    data["users"][0]["nodes"][0][field] = "9999-06-01T00:00:00Z"
    path.write_text(json.dumps(data), encoding="utf-8")
    result = runner.invoke(app, ["--home", str(tmp_path / "other"), "import", str(path), "--from", "zep"])
    assert isinstance(result.exception, SnapshotError)
    assert str(result.exception).startswith(f'users[0].nodes[0].{field}: "9999-06-01T00:00:00Z" is not a time engram can '
                                            "show as a date"), result.exception


@pytest.mark.parametrize(("change", "named"), [
    (lambda u: u["edges"][0].update(validAt="2025-13-40"), "users[0].edges[0].validAt"),
    (lambda u: u["edges"][0].update(invalidAt="2025-01-01T00:00:00Z"),
     "users[0].edges[0].invalidAt: \"2025-01-01T00:00:00Z\" is before validAt"),
    (lambda u: u["threads"][0]["messages"][0].update(createdAt="yesterday"),
     'users[0].threads[0].messages[0].createdAt: "yesterday" is not a time'),
    (lambda u: u["nodes"][0].update(createdAt=True), "users[0].nodes[0].createdAt: true is not a time"),
    (lambda u: u["threads"][0].update(threadId=["x"]), "users[0].threads[0].threadId"),
    (lambda u: u["threads"][0]["messages"][1].update(roleType="robot"),
     'users[0].threads[0].messages[1].roleType: "robot" is not a Zep role type (allowed: user, assistant, system, tool, '
     "function, norole (in role, or in roleType as Zep v2 wrote it"),
])
def test_a_malformed_camel_case_field_is_named_as_the_file_spells_it(tmp_path: Path, change: Any, named: str) -> None:
    data = json.loads(TS_DUMP.read_text(encoding="utf-8"))
    change(data["users"][0])
    home = tmp_path / "home"
    with Engram.from_settings(load_settings(home=home, embeddings={"provider": "none"})) as mem:
        with pytest.raises(SnapshotError) as refused:
            mem.import_from(json.dumps(data), "zep")
        assert str(refused.value).startswith(named), str(refused.value)
        assert mem.for_agent("carol").list() == [] and mem.for_agent("carol").history.conversations() == []


def test_zep_v4_names_an_edges_episodes_episode_uuids(tmp_path: Path) -> None:
    """Zep's v4 API gives an edge's episodes as ``episode_uuids`` (v3: ``episodes``), beside its
    ``graph_uuid`` and ``scope``: the episodes are kept in ``metadata["zep"]["episodes"]`` as v3's are
    (they were dropped without a word)."""
    data = document()
    edge = data["users"][0]["edges"][0]
    edge["episode_uuids"] = edge.pop("episodes")
    edge.update(graph_uuid="5f0c2a8e-2b1d-4c6a-9d3e-1a2b3c4d5e6f", scope="entity")
    with Engram.from_settings(load_settings(home=tmp_path, embeddings={"provider": "none"})) as mem:
        assert mem.import_from(json.dumps(data), "zep").imported == 9
        [acme] = [m for m in mem.for_agent("alice").list(limit=50) if m.content.startswith("Alice works at Acme")]
        assert acme.metadata["zep"]["episodes"] == ["c3a1e5f7-3333-4eee-8fff-000000000001"]


LONG = ("Ünïcödé 🧠 — 漢字テキスト, RTL עברית, e\u0301 combining, tab\tand CRLF\r\n" * 120)[:7990] + "  \n"


def test_contents_round_trip_byte_for_byte_and_the_plain_pieces_are_read(tmp_path: Path) -> None:
    data = document()
    alice = data["users"][0]
    alice["edges"][2]["fact"] = "  " + LONG
    alice["nodes"][3]["summary"] = LONG + "\n"
    alice["threads"][1]["messages"][0]["content"] = LONG * 3
    # Zep v2's messages: the role type in role_type, the sender's name in role.
    alice["threads"][1]["messages"][1] = {"uuid": "v2", "role": "Concierge", "role_type": "assistant",
                                          "content": "Congratulations!", "created_at": "2025-06-03T18:20:03Z"}
    with Engram.from_settings(load_settings(home=tmp_path, embeddings={"provider": "none"})) as mem:
        summary = mem.import_from(json.dumps({"users": [alice]}, ensure_ascii=False))
        assert (summary.kind, summary.imported, summary.messages_imported) == ("zep", 7, 6), summary
        mine = mem.for_agent("alice")
        contents = {m.content for m in mine.list(limit=50)}
        assert {"  " + LONG, LONG + "\n"} <= contents
        said = mine.history.all("zep:career-2025-06")
        assert said[0].content == LONG * 3
        assert (said[1].role.value, said[1].content, dict(said[1].metadata)) == (
            "assistant", "Congratulations!", {"zep": {"uuid": "v2", "name": "Concierge"}})
        # One user object alone (its threads, edges or nodes) is read the same: already there.
        bob = data["users"][1]
        # zep-cloud 3.30's model_dump() writes every field of its types, null when unset.
        bob.update(dict.fromkeys(("created_at", "email", "first_name", "last_name", "metadata", "uuid_"), None))
        bob["threads"][0]["messages"][1].update(name=None, metadata=None, processed=None)
        bob["edges"][0].update(dict.fromkeys(("attributes", "episodes", "hyperedge_uuid", "relevance", "scope", "score",
                                              "source_node_labels", "source_node_name", "target_node_name"), None))
        bob["nodes"][0].update(dict.fromkeys(("attributes", "degree", "episodes", "episodes_truncated", "score"), None))
        assert mem.import_from(json.dumps({"users": [alice]}, ensure_ascii=False), "zep").skipped == 7
        alone = mem.import_from(json.dumps(bob))
        assert (alone.kind, alone.imported, alone.messages_imported) == ("zep", 2, 2), alone
        assert mem.list() == []


def test_an_outdated_fact_closes_at_expired_at_and_a_thread_is_in_time_order_under_its_key(tmp_path: Path) -> None:
    data = document()
    alice = data["users"][0]
    del alice["edges"][0]["invalid_at"]
    alice["threads"][0]["thread_id"] = "slack:C042 general"  # no key part: usable characters and a digest
    alice["threads"][0]["messages"].reverse()  # listed newest first: the thread is still in time order
    with Engram.from_settings(load_settings(home=tmp_path, embeddings={"provider": "none"})) as mem:
        summary = mem.import_from(json.dumps(data))
        mine = mem.for_agent("alice")
        [acme] = [m for m in mine.list(limit=50) if m.content.startswith("Alice works at Acme")]
        assert acme.valid_until == at("2025-06-03T18:20:11Z")
        digest = hashlib.sha256(b"slack:C042 general").hexdigest()[:8]
        assert mine.history.conversations() == [f"zep:slack-C042-general-{digest}", "zep:career-2025-06"][::-1]
        assert [m.content for m in mine.history.all(f"zep:slack-C042-general-{digest}")][::3] == [
            "Hi! I just moved to Lisbon and started at Acme Corp as a data engineer.", "Ha! Try Manteigaria in Chiado."]
        assert "users[0].threads[0] (slack:C042 general)" in " ".join(summary.warnings)


LISBON = "e7b2c4d6-2222-4ccc-8ddd-000000000003"
PORTO = {"uuid": "e7b2c4d6-2222-4ccc-8ddd-000000000005", "name": "LIVES_IN", "fact": "Alice lives in Porto.",
         "source_node_uuid": "9e1f0c3a-1111-4aaa-8bbb-000000000001", "target_node_name": "Porto",
         "created_at": "2025-09-02T10:00:00Z", "valid_at": "2025-09-01T00:00:00Z"}


def newer(path: Path, change: Any) -> Path:
    """A later dump of the fixture's users: ``change`` applied to it, written to ``path``."""
    data = document()
    change(data)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def lives_in(home: Path, when: str) -> list[str]:
    hits = as_json(home, "-a", "alice", "recall", "where does Alice live", "--as-of", when)["hits"]
    return [h["memory"]["content"] for h in hits if h["memory"]["tags"] == ["lives_in"]]


def as_imported(home: Path, agent: str) -> dict[str, dict[str, Any]]:
    """Each memory of ``agent`` by Zep's uuid, with what an import sets or a re-import may change."""
    fields = ("id", "key", "content", "tags", "metadata", "valid_from", "valid_until", "updated_at", "superseded_by")
    return {(m["metadata"]["zep"].get("edge") or m["metadata"]["zep"]["node"]): {f: m[f] for f in fields}
            for m in as_json(home, "-a", agent, "list", "--limit", "50")}


@pytest.mark.parametrize(("gained", "ends"), [
    ({"invalid_at": "2025-09-01T00:00:00Z", "expired_at": "2025-09-02T10:00:00Z"}, "2025-09-01T00:00:00Z"),
    ({"expired_at": "2025-09-02T10:00:00Z"}, "2025-09-02T10:00:00Z")])
def test_a_newer_dump_closes_a_fact_zep_invalidated_since(tmp_path: Path, gained: dict[str, str], ends: str) -> None:
    home = tmp_path / "home"
    as_json(home, "import", str(DUMP))
    before = {agent: as_imported(home, agent) for agent in ("alice", "bob")}
    assert lives_in(home, "2025-10-01") == ["Alice lives in Lisbon."]

    def moved(data: dict[str, Any]) -> None:  # Zep learned that Alice moved to Porto
        data["users"][0]["edges"][2].update(gained)
        data["users"][0]["edges"].append(PORTO)

    done = as_json(home, "import", str(newer(tmp_path / "zep-later.json", moved)))
    assert (done["imported"], done["updated"], done["skipped"]) == (1, 1, 8), done
    after = {agent: as_imported(home, agent) for agent in ("alice", "bob")}
    lisbon = after["alice"].pop(LISBON)
    was = before["alice"].pop(LISBON)
    assert (lisbon["id"], lisbon["key"], lisbon["content"], lisbon["valid_from"]) == (
        was["id"], was["key"], "Alice lives in Lisbon.", at("2025-01-10T09:01:12Z"))
    assert (lisbon["valid_until"], lisbon["superseded_by"]) == (at(ends), None)  # closed, not superseded
    assert lisbon["metadata"]["zep"] == {**was["metadata"]["zep"], **gained}
    assert after["alice"].pop(PORTO["uuid"])["valid_from"] == at("2025-09-01T00:00:00Z")
    assert after == before  # nothing else changed, bob's facts included
    # As of August Alice lived in Lisbon; as of October, in Porto.
    assert lives_in(home, "2025-08-01") == ["Alice lives in Lisbon."]
    assert lives_in(home, "2025-10-01") == ["Alice lives in Porto."]
    said = run(home, "import", str(tmp_path / "zep-later.json"))
    assert "imported 0 from zep, skipped 10 already present" in said, said  # the same dump again: nothing changed
    gained_more = newer(tmp_path / "zep-latest.json", lambda d: (moved(d), d["users"][0]["edges"][2].update(
        episodes=["c3a1e5f7-3333-4eee-8fff-000000000001", "c3a1e5f7-3333-4eee-8fff-000000000009"])))
    said = run(home, "import", str(gained_more))
    assert "imported 0 from zep, updated 1 changed in zep since, skipped 9 already present" in said, said


def test_a_newer_dump_brings_zeps_new_text_but_keeps_what_engram_changed(tmp_path: Path) -> None:
    with Engram.from_settings(load_settings(home=tmp_path, embeddings={"provider": "none"})) as mem:
        mem.import_from(DUMP)
        alice = mem.for_agent("alice")
        by_uuid = {(m.metadata["zep"].get("edge") or m.metadata["zep"]["node"]): m for m in alice.list(limit=50)}
        # Changed in engram since: a fact's text, and Globex's end (Zep still gives it none).
        likes = alice.update(by_uuid["e7b2c4d6-2222-4ccc-8ddd-000000000004"], content="Alice loves pastéis de nata.")
        globex = alice.update(by_uuid["e7b2c4d6-2222-4ccc-8ddd-000000000002"],
                              valid_until="2025-12-31T00:00:00Z").memory

        def rewritten(data: dict[str, Any]) -> None:  # Zep rewrote a fact and a summary in place
            alice_data = data["users"][0]
            alice_data["edges"][2]["fact"] = "Alice lives in Lisbon, in Alfama."
            alice_data["edges"][3]["fact"] = "Alice enjoys pastéis de nata from Manteigaria."
            alice_data["edges"][1]["episodes"].append("c3a1e5f7-3333-4eee-8fff-000000000003")
            alice_data["nodes"][3]["summary"] = "Lisbon is the city Alice moved to; she lives in Alfama."

        summary = mem.import_from(newer(tmp_path / "zep-later.json", rewritten).read_text(encoding="utf-8"))
        assert (summary.imported, summary.updated, summary.skipped) == (0, 3, 6), summary
        now = {(m.metadata["zep"].get("edge") or m.metadata["zep"]["node"]): m for m in alice.list(limit=50)}
        lisbon = now[LISBON]
        assert (lisbon.id, lisbon.content) == (by_uuid[LISBON].id, "Alice lives in Lisbon, in Alfama.")
        assert [v.content for v in alice.versions(lisbon)] == ["Alice lives in Lisbon."]
        assert now["9e1f0c3a-1111-4aaa-8bbb-000000000004"].content == (
            "Lisbon is the city Alice moved to; she lives in Alfama.")
        # engram's own edits stay: the text changed in engram (named in a warning), and an end Zep
        # does not give, though Zep changed that fact's episodes.
        assert now["e7b2c4d6-2222-4ccc-8ddd-000000000004"].content == likes.memory.content
        assert ("users[0].edges[3]: the source's new text not brought over: memory alice-enjoys-pasteis-de-nata's was "
                "changed in engram since it was imported, and is kept (engram versions alice-enjoys-pasteis-de-nata "
                "lists its earlier texts)") in summary.warnings, summary.warnings
        assert now["e7b2c4d6-2222-4ccc-8ddd-000000000002"].valid_until == globex.valid_until == at("2025-12-31")
        assert now["e7b2c4d6-2222-4ccc-8ddd-000000000002"].metadata["zep"]["episodes"] == [
            "c3a1e5f7-3333-4eee-8fff-000000000002", "c3a1e5f7-3333-4eee-8fff-000000000003"]
        assert alice.recall("Alfama").hits[0].memory.id == lisbon.id  # the new text is searchable


def lives(text: str) -> Any:
    """A later dump in which Zep rewrote Alice's fact of where she lives to ``text``."""
    return lambda data: data["users"][0]["edges"][2].update(fact=text)


HELD_BACK = ("users[0].edges[2]: the source's new text not brought over: memory alice-lives-lisbon's was changed "
             "in engram since it was imported, and is kept (engram versions alice-lives-lisbon lists its earlier "
             "texts)")


def test_every_later_rewrite_by_zep_follows_while_engram_has_not_changed_the_text(tmp_path: Path) -> None:
    # The first rewrite a re-import brings makes a version of the memory; that is no edit of engram's,
    # so Zep's next rewrite follows too, and a dump that changed nothing changes nothing.
    with Engram.from_settings(load_settings(home=tmp_path, embeddings={"provider": "none"})) as mem:
        mem.import_from(DUMP)
        alice = mem.for_agent("alice")
        for n, text in enumerate(("Alice lives in Lisbon, in Alfama.", "Alice lives in Lisbon, in Graça."), 2):
            summary = mem.import_from(newer(tmp_path / f"zep-v{n}.json", lives(text)))
            assert (summary.imported, summary.updated) == (0, 1)
            assert HELD_BACK not in summary.warnings, summary.warnings
            assert alice.get("alice-lives-lisbon").content == text
        assert [v.content for v in alice.versions("alice-lives-lisbon")] == [
            "Alice lives in Lisbon.", "Alice lives in Lisbon, in Alfama."]
        again = mem.import_from(tmp_path / "zep-v3.json")
        assert (again.updated, HELD_BACK in again.warnings) == (0, False)
        assert alice.recall("Graça").hits[0].memory.key == "alice-lives-lisbon"  # the newest text is searchable


def test_a_text_engram_changed_after_a_rewrite_was_brought_is_kept_from_the_next(tmp_path: Path) -> None:
    with Engram.from_settings(load_settings(home=tmp_path, embeddings={"provider": "none"})) as mem:
        mem.import_from(DUMP)
        alice = mem.for_agent("alice")
        v2 = newer(tmp_path / "zep-v2.json", lives("Alice lives in Lisbon, in Alfama."))
        assert mem.import_from(v2).updated == 1
        alice.update("alice-lives-lisbon", content="Alice lives in Alfama, near the castle.")
        # The dump the text came from, again: Zep changed nothing, so nothing is held back or said.
        same = mem.import_from(v2)
        assert (same.updated, HELD_BACK in same.warnings) == (0, False)
        v3 = mem.import_from(newer(tmp_path / "zep-v3.json", lives("Alice lives in Lisbon, in Graça.")))
        assert HELD_BACK in v3.warnings, v3.warnings
        held = alice.get("alice-lives-lisbon")
        assert held.content == "Alice lives in Alfama, near the castle."
        assert [v.content for v in alice.versions(held)] == ["Alice lives in Lisbon.", "Alice lives in Lisbon, in Alfama."]
        # Zep's later changes of the fact's record still arrive, the text still held back.
        v4 = mem.import_from(newer(tmp_path / "zep-v4.json", lambda d: (
            lives("Alice lives in Lisbon, in Graça.")(d), d["users"][0]["edges"][2].update(
                invalid_at="2025-09-01T00:00:00Z"))))
        assert (v4.updated, HELD_BACK in v4.warnings) == (1, True)
        held = alice.get(held.id)
        assert (held.content, held.valid_until) == ("Alice lives in Alfama, near the castle.", at("2025-09-01T00:00:00Z"))


def test_a_fact_superseded_in_engram_takes_the_end_zep_gives_it_later(tmp_path: Path) -> None:
    with Engram.from_settings(load_settings(home=tmp_path, embeddings={"provider": "none"})) as mem:
        mem.import_from(DUMP)
        alice = mem.for_agent("alice")
        porto = alice.remember("Alice lives in Porto.", valid_from="2025-09-03T00:00:00Z").memory
        lisbon = alice.supersede([m for m in alice.list(limit=50) if m.content == "Alice lives in Lisbon."][0], porto)
        assert lisbon.valid_until == at("2025-09-03T00:00:00Z")
        later = newer(tmp_path / "zep-later.json",
                      lambda d: d["users"][0]["edges"][2].update(invalid_at="2025-09-01T00:00:00Z"))
        assert mem.import_from(later).updated == 1
        now = alice.get(lisbon.id)
        assert (now.valid_until, now.superseded_by) == (at("2025-09-01T00:00:00Z"), porto.id)


def test_a_newer_end_before_a_start_set_in_engram_names_the_fact_and_changes_nothing(tmp_path: Path) -> None:
    with Engram.from_settings(load_settings(home=tmp_path, embeddings={"provider": "none"})) as mem:
        mem.import_from(DUMP)
        alice = mem.for_agent("alice")
        [likes] = [m for m in alice.list(limit=50) if m.tags == ("likes",)]
        alice.update(likes, valid_from="2025-08-01T00:00:00Z")
        later = newer(tmp_path / "zep-later.json", lambda d: (
            d["users"][0]["edges"][3].update(invalid_at="2025-07-01T00:00:00Z"),
            d["users"][0]["edges"][2].update(invalid_at="2025-09-01T00:00:00Z"),
            d["users"][0]["edges"].append(PORTO)))
        with pytest.raises(SnapshotError, match=r"^users\[0\]\.edges\[3\]\.invalid_at: ends before "
                                                r"the valid_from of memory alice-enjoys-pasteis-de-nata in engram"):
            mem.import_from(later)
        assert alice.get(likes.id).valid_until is None
        assert [m.valid_until for m in alice.list(limit=50) if m.tags == ("lives_in",)] == [None]


MALFORMED = [
    (lambda d: d["users"][0]["edges"][3].update(fact=""), 'users[0].edges[3].fact: got ""'),
    (lambda d: d["users"][0]["edges"][1].pop("uuid"), "users[0].edges[1].uuid: is missing"),
    (lambda d: d["users"][0]["edges"][0].update(valid_at="2025-07-01T00:00:00Z"),
     'users[0].edges[0].invalid_at: "2025-05-26T00:00:00Z" is before valid_at'),
    (lambda d: d["users"][0]["edges"][2].update(valid_at="last spring"), "users[0].edges[2].valid_at"),
    (lambda d: d["users"][0]["nodes"][1].update(summary=5), "users[0].nodes[1].summary: got 5 (a number)"),
    (lambda d: d["users"][0]["threads"][0]["messages"][1].update(role="robot"),
     'users[0].threads[0].messages[1].role: "robot" is not a Zep role type'),
    (lambda d: d["users"][0]["threads"][0]["messages"][3].pop("created_at"),
     "users[0].threads[0].messages[3].created_at: is missing"),
    # Refused as the history's append refuses it, before the import's first write: the users' facts
    # and nodes were stored (and, imported again, skipped) before the append refused the message.
    (lambda d: d["users"][1]["threads"][0]["messages"][0].update(created_at="3000-01-01T00:00:00Z"),
     "users[1].threads[0].messages[0].created_at: 3000-01-01T00:00:00+00:00 is later than now"),
    (lambda d: d["users"][1]["threads"][0].pop("thread_id"), "users[1].threads[0].thread_id: is missing"),
    # The SDK's model_dump() names a message's id uuid_: so is a bad one named (it was named .uuid).
    (lambda d: d["users"][1]["threads"][0]["messages"][1].update(uuid_=[5]),
     "users[1].threads[0].messages[1].uuid_: got a list (allowed: text)"),
    (lambda d: d["users"][0]["threads"][0]["messages"][1].update(uuid=[5]),
     "users[0].threads[0].messages[1].uuid: got a list (allowed: text)"),
    (lambda d: d["users"][1].update(user_id=None), "users[1].user_id: is missing"),
    (lambda d: d["users"][1]["edges"].append({**d["users"][0]["edges"][2], "fact": "Alice lives in Porto."}),
     'users[1].edges[1].uuid: "e7b2c4d6-2222-4ccc-8ddd-000000000003" repeats users[0].edges[2], which differs'),
    (lambda d: d["users"][0]["nodes"][0].update(summary="x" * 9000),
     "users[0].nodes[0].summary: the summary of 'Alice' is 9000 characters; the maximum is 8000"),
]


@pytest.mark.parametrize(("change", "named"), MALFORMED)
def test_a_malformed_dump_names_the_json_path_and_writes_nothing(tmp_path: Path, change: Any, named: str) -> None:
    data = document()
    change(data)
    path = tmp_path / "zep.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    home = tmp_path / "home"
    result = runner.invoke(app, ["--home", str(home), "import", str(path), "--from", "zep"])
    assert isinstance(result.exception, SnapshotError) and named in str(result.exception), result.exception
    for agent in ("alice", "bob"):
        assert as_json(home, "-a", agent, "list") == []
        assert as_json(home, "-a", agent, "history", "list") == []


def test_the_installed_command_names_the_place_and_exits_2(tmp_path: Path) -> None:
    data = document()
    data["users"][0]["threads"][0]["messages"][1]["role"] = "robot"
    path = tmp_path / "zep.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    done = subprocess.run([ENGRAM, "--home", str(tmp_path / "home"), "import", str(path)], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "ENGRAM_EMBEDDINGS__PROVIDER": "none"})
    assert done.returncode == 2, done.stderr
    said = " ".join(done.stderr.split())
    assert 'users[0].threads[0].messages[1].role: "robot" is not a Zep role type' in said, said
    assert "user, assistant, system, tool, function, norole" in said


def test_a_document_without_users_is_refused_naming_the_shape(tmp_path: Path) -> None:
    with Engram.from_settings(load_settings(home=tmp_path, embeddings={"provider": "none"})) as mem:
        with pytest.raises(SnapshotError, match=r"^document: no Zep user"):
            mem.import_from("{}", "zep")
        with pytest.raises(SnapshotError, match=r"^users: got an object"):
            mem.import_from('{"users": {"alice": {}}}', "zep")


def rewrites_two_facts_and_adds_porto(data: dict[str, Any]) -> None:
    edges = data["users"][0]["edges"]
    edges[2]["fact"] = "Alice lives in Lisbon, in Alfama."
    edges[3]["fact"] = "Alice enjoys pastéis de nata from Manteigaria."
    edges.append(PORTO)


def stored_state(mem: Engram) -> dict[str, Any]:
    """Every memory of alice's, its versions, and the audit trail: what a failed import must not change."""
    alice = mem.for_agent("alice")
    return {"memories": {m.id: m for m in alice.list(limit=50)},
            "versions": {m.id: alice.versions(m) for m in alice.list(limit=50)},
            "audit": [(e.action, e.memory_id) for e in alice.audit_trail(limit=1000)]}


def test_a_reimport_failing_part_way_changes_nothing_and_runs_whole_later(tmp_path: Path) -> None:
    settings = load_settings(home=tmp_path, embeddings={"provider": "none"})
    with Engram.from_settings(settings) as mem:
        mem.import_from(DUMP)
        before = stored_state(mem)
        later = newer(tmp_path / "zep-later.json", rewrites_two_facts_and_adds_porto)
        # The second fact's update fails in the database (its old text kept as a version is
        # refused), after the new fact and the first fact's update were written.
        with sqlite_insert_fails(settings.database_path(), "memory_versions", "Alice enjoys pastéis de nata."), \
                pytest.raises(StorageError, match="injected failure"):
            mem.import_from(later)
        assert stored_state(mem) == before
        summary = mem.import_from(later)
        assert (summary.imported, summary.updated) == (1, 2), summary
        alice = mem.for_agent("alice")
        assert alice.get("alice-lives-lisbon").content == "Alice lives in Lisbon, in Alfama."
        assert [v.content for v in alice.versions("alice-enjoys-pasteis-de-nata")] == ["Alice enjoys pastéis de nata."]
        assert {e.memory_key for e in alice.audit_trail(action="updated")} == {"alice-lives-lisbon",
                                                                             "alice-enjoys-pasteis-de-nata"}
