"""``engram export --format mem0|basic-memory`` writes what mem0 and basic-memory read, and what
``engram import`` reads back: contents, tags, times and links survive the round trip, engram's own
fields (key, category, type, importance) too, and an export imported back into its own store is
already present."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from engram.errors import SnapshotError
from engram.interfaces.cli.app import app
from tests.importers.test_import_cli import FIXTURES, as_json, run


def _seed(home: Path) -> dict:
    run(home, "remember", "The user prefers Python for scripting", "--key", "prefers-python", "--tags", "prefs,lang")
    run(home, "remember", "The project pins Python 3.12", "--key", "python-version", "--link", "prefers-python")
    return {m["key"]: m for m in as_json(home, "list")}


def test_mem0_export_is_mem0_shaped_and_imports_back(tmp_path: Path) -> None:
    source = _seed(tmp_path / "a")
    out = tmp_path / "mem0.json"
    run(tmp_path / "a", "export", str(out), "--format", "mem0")
    document = json.loads(out.read_text())
    item = next(i for i in document["results"] if i["memory"] == "The user prefers Python for scripting")
    assert item["hash"] == hashlib.md5(b"The user prefers Python for scripting").hexdigest()  # mem0's hash
    assert item["categories"] == ["prefs", "lang"] and item["user_id"] == "default"
    assert item["engram"]["key"] == "prefers-python" and item["created_at"].endswith("+00:00")
    assert item["metadata"] == {}  # the memory's own: engram's fields sit beside it, in "engram"
    summary = as_json(tmp_path / "b", "import", str(out))
    assert (summary["kind"], summary["imported"]) == ("mem0", 2)
    back = {m["content"]: m for m in as_json(tmp_path / "b", "list")}
    original = source["prefers-python"]
    copy = back[original["content"]]
    assert copy["tags"] == original["tags"]
    assert copy["created_at"] == pytest.approx(original["created_at"], abs=1e-5)  # ISO keeps microseconds


def test_basic_memory_export_is_notes_and_imports_back_with_links(tmp_path: Path) -> None:
    _seed(tmp_path / "a")
    vault = tmp_path / "vault"
    run(tmp_path / "a", "export", str(vault), "--format", "basic-memory")
    note = (vault / "python-version.md").read_text()
    front = yaml.safe_load(note.split("---")[1])
    assert front["permalink"] == "python-version" and front["title"] == "python-version"
    assert "- links_to [[prefers-python]]" in note and "The project pins Python 3.12" in note
    summary = as_json(tmp_path / "c", "import", str(vault))
    assert (summary["kind"], summary["imported"]) == ("basic-memory", 2)
    assert {m["key"] for m in as_json(tmp_path / "c", "neighbours", "python-version")} == {"prefers-python"}
    assert as_json(tmp_path / "c", "get", "prefers-python")["tags"] == ["prefs", "lang"]


def _seed_fields(home: Path) -> None:
    run(home, "remember", "The user prefers Python for scripting", "--key", "prefers-python", "--category", "core",
        "--importance", "0.9", "--tags", "prefs")
    run(home, "remember", "The project pins Python 3.12", "--key", "python-version", "--type", "decision",
        "--link", "prefers-python")


def _fields(home: Path) -> dict[str, tuple]:
    listed = as_json(home, "list")
    keys = {m["id"]: m["key"] for m in listed}
    return {m["key"]: (m["content"], m["category"], m["type"], m["importance"], sorted(keys[i] for i in m["links"]))
            for m in listed}


def test_mem0_export_restores_engrams_own_fields_in_an_empty_home(tmp_path: Path) -> None:
    _seed_fields(tmp_path / "a")
    out = tmp_path / "mem0.json"
    run(tmp_path / "a", "export", str(out), "--format", "mem0")
    as_json(tmp_path / "b", "import", str(out))
    assert _fields(tmp_path / "b") == _fields(tmp_path / "a")
    assert "engram" not in as_json(tmp_path / "b", "get", "prefers-python")["metadata"]


@pytest.mark.parametrize("fmt", ["mem0", "basic-memory"])
def test_an_export_imported_back_into_the_same_store_is_already_present(tmp_path: Path, fmt: str) -> None:
    home = tmp_path / "a"
    _seed_fields(home)
    out = tmp_path / ("mem0.json" if fmt == "mem0" else "vault")
    run(home, "export", str(out), "--format", fmt)
    summary = as_json(home, "import", str(out))
    assert (summary["imported"], summary["skipped"]) == (0, 2), summary
    assert as_json(home, "count") == {"count": 2}
    # Another agent holds none of those ids: it gets its own copy, engram's fields restored.
    other = as_json(home, "--agent", "other", "import", str(out), "--into-agent")
    assert (other["imported"], other["skipped"]) == (2, 0)
    assert as_json(home, "--agent", "other", "get", "prefers-python")["category"] == "core"


def test_a_malformed_engram_field_in_a_mem0_document_is_named(tmp_path: Path) -> None:
    path = tmp_path / "mem0.json"
    path.write_text(json.dumps({"results": [{"id": "a", "memory": "x", "engram": {"importance": "high"}}]}),
                    encoding="utf-8")
    result = CliRunner().invoke(app, ["--home", str(tmp_path / "h"), "import", str(path)])
    assert str(result.exception).startswith('results[0].engram.importance: got "high"'), result.exception


def test_an_unknown_export_format_names_every_format_export_writes(tmp_path: Path) -> None:
    # The refusal listed only the snapshot and the memory folder's formats: mem0 and basic-memory
    # are formats of the same command, and a user who mistyped one was told they do not exist.
    result = CliRunner().invoke(app, ["--home", str(tmp_path / "h"), "export", str(tmp_path / "out"), "--format", "mem"])
    assert getattr(result.exception, "field", None) == "--format", result.output
    assert str(result.exception) == ('--format: unknown format "mem" (allowed: snapshot, mem0, markdown, yaml, json, '
                                     "basic-memory)"), result.exception
    assert not (tmp_path / "out").exists()
    # The CLI spells the other systems' formats itself (``--help`` does not import the exporters): in step.
    from engram import exporters
    from engram.interfaces.cli.memory import OTHER_SYSTEMS

    assert set(OTHER_SYSTEMS) == set(exporters.FORMATS)


def test_mem0_metadata_comes_back_from_engram_as_mem0_had_it(tmp_path: Path) -> None:
    # A mem0 item's metadata is the user's own JSON, a "mem0" entry included: the import keeps it
    # beside where engram records the item came from (with a warning), and the export gives every
    # item's metadata back unchanged, strings to the last code point.
    source = FIXTURES / "mem0-own-metadata.json"
    original = json.loads(source.read_text(encoding="utf-8"))["results"]
    home = tmp_path / "home"
    summary = as_json(home, "import", str(source))
    assert summary["imported"] == 4, summary
    assert [w for w in summary["warnings"] if "metadata.mem0" in w] == [
        f"results[{i}].metadata.mem0: kept as metadata.mem0.own (metadata.mem0 holds where the record came from "
        "in mem0)" for i in (0, 1)]
    stored = as_json(home, "--agent", "alex", "list", "--meta", "source=chat")[0]["metadata"]
    assert stored == {"source": "chat", "user_id": "alex", "mem0": {  # mem0's ids at the top, as the facade keeps them
        "id": original[0]["id"], "hash": original[0]["hash"], "user_id": "alex", "own": original[0]["metadata"]["mem0"],
        "imported_text_sha256": hashlib.sha256(original[0]["memory"].encode()).hexdigest(),
        "imported_tags": original[0]["categories"], "imported_keys": ["source", "user_id"]}}
    out = tmp_path / "mem0.json"
    run(home, "--agent", "alex", "export", str(out), "--format", "mem0")
    exported = {item["memory"]: item for item in json.loads(out.read_text(encoding="utf-8"))["results"]}
    for item in original:
        back = exported[item["memory"]]
        assert (back["id"], back["user_id"]) == (item["id"], item["user_id"])
        assert back["metadata"] == (item["metadata"] or {})
    assert exported["Orders a flat white every morning"]["metadata"]["mem0"]["note"] == "cafe\u0301 \u2615  "


def _exact(value: object) -> str:
    """A JSON value as text, its keys in their order: equal texts are the same value byte for byte."""
    return json.dumps(value, ensure_ascii=False)


def test_a_mem0_items_own_engram_metadata_comes_back_byte_for_byte(tmp_path: Path) -> None:
    # In a mem0 document, "metadata" is the user's: an "engram" entry there is the user's own value
    # (text, null, a list, a dict holding "own", even one shaped like engram's fields) and comes back
    # unchanged, never read as engram's fields nor replaced by them.
    source = FIXTURES / "mem0-own-engram.json"
    original = json.loads(source.read_text(encoding="utf-8"))["results"]
    home = tmp_path / "home"
    summary = as_json(home, "import", str(source))
    assert (summary["imported"], summary["skipped"]) == (6, 0), summary
    held = as_json(home, "--agent", "alex", "list", "--meta", "topic=habits")[0]
    assert _exact(held["metadata"]["engram"]) == _exact(original[1]["metadata"]["engram"])  # kept, as it was
    shaped = next(m for m in as_json(home, "--agent", "alex", "list") if m["content"] == original[0]["memory"])
    assert (shaped["key"], shaped["category"], shaped["type"], shaped["importance"]) != ("work-hours", "core",
                                                                                           "decision", 0.9)
    out = tmp_path / "mem0.json"
    run(home, "--agent", "alex", "export", str(out), "--format", "mem0")
    exported = {item["memory"]: item for item in json.loads(out.read_text(encoding="utf-8"))["results"]}
    for item in original:
        assert _exact(exported[item["memory"]]["metadata"]) == _exact(item["metadata"]), item["memory"]


def test_an_engram_memorys_own_engram_metadata_survives_export_and_import(tmp_path: Path) -> None:
    # engram -> mem0 -> engram: a memory whose metadata holds "engram" of its own keeps it, byte for
    # byte, and engram's fields (key, category, type, importance, links) still come back with it.
    own = {"links": ["not-an-id"], "key": "theirs", "note": "na\u00efve \u2028", "category": "bogus"}
    home = tmp_path / "a"
    run(home, "remember", "The user prefers Python for scripting", "--key", "prefers-python", "--category", "core",
        "--importance", "0.9", "--metadata", json.dumps({"engram": own, "team": "data"}))
    run(home, "remember", "The project pins Python 3.12", "--key", "python-version", "--type", "decision",
        "--link", "prefers-python", "--metadata", json.dumps({"engram": "v1"}))
    out = tmp_path / "mem0.json"
    run(home, "export", str(out), "--format", "mem0")
    item = next(i for i in json.loads(out.read_text())["results"] if i["memory"].startswith("The user prefers"))
    assert _exact(item["metadata"]) == _exact({"engram": own, "team": "data"})
    as_json(tmp_path / "b", "import", str(out))
    assert _fields(tmp_path / "b") == _fields(home)
    copy = as_json(tmp_path / "b", "get", "prefers-python")["metadata"]  # beside it: where it came from, "mem0"
    assert (_exact(copy["engram"]), copy["team"]) == (_exact(own), "data")
    assert as_json(tmp_path / "b", "get", "python-version")["metadata"]["engram"] == "v1"
    # Imported back into its own store, each is the memory it was exported from.
    assert as_json(home, "import", str(out))["skipped"] == 2


def test_an_items_own_engram_id_does_not_make_it_a_held_memory(tmp_path: Path) -> None:
    # An "id" inside a mem0 item's metadata.engram is the user's data: an item whose metadata names
    # a memory the agent holds is still imported (it was skipped as that memory, and lost).
    home = tmp_path / "home"
    held = as_json(home, "--agent", "alex", "remember", "Some held fact", "--key", "held")
    path = tmp_path / "mem0.json"
    path.write_text(json.dumps({"results": [{"id": "m1", "memory": "A different fact", "user_id": "alex",
                                             "metadata": {"engram": {"id": held["memory"]["id"], "key": "held"}}}]}))
    summary = as_json(home, "import", str(path))
    assert (summary["imported"], summary["skipped"]) == (1, 0), summary
    assert as_json(home, "--agent", "alex", "get", "held")["content"] == "Some held fact"


def test_a_mem0_facade_memory_exports_its_ids_where_mem0_has_them_and_comes_back_the_same(tmp_path: Path) -> None:
    # The mem0 facade keeps a memory's user_id/agent_id/run_id, actor_id and role at the top of its
    # metadata, to filter on; mem0's item has them as fields of its own, never in its metadata. The
    # export put them in the item's metadata (and an agent's memory under user_id "agent:coach", its
    # agent_id and run_id nowhere else): engram import kept them as the user's metadata, and the
    # facade's import refused the export (ids in metadata). Now the item is the one the facade gives,
    # and either door brings back the metadata the memory was given.
    from engram.compat.mem0 import Memory, mem0_fields
    from engram.engine import Engram

    home = tmp_path / "a"
    m = Memory(Engram.from_settings(home=home))
    m.add("I love sushi", user_id="alice", metadata={"topic": "food", "rank": [1, 2]}, infer=False)
    m.add([{"role": "user", "content": "Call me Bob", "name": "bob"}], user_id="alice", infer=False)
    m.add("Plan the trip", agent_id="coach", run_id="r1", metadata={"k": 1}, infer=False)
    given = {**{r["id"]: r for r in m.get_all(user_id="alice")["results"]},
             **{r["id"]: r for r in m.get_all(agent_id="coach")["results"]}}
    m.close()
    exported = {}
    for agent in ("alice", "agent:coach"):
        out = tmp_path / f"{agent.replace(':', '-')}.json"
        run(home, "--agent", agent, "export", str(out), "--format", "mem0")
        exported[agent] = out
        for item in json.loads(out.read_text())["results"]:
            mine = given[item["id"]]
            assert item["metadata"] == (mine["metadata"] or {}), item
            names = ("user_id", "agent_id", "run_id", "actor_id", "role")
            assert {k: item.get(k) for k in names} == {k: mine.get(k) for k in names}, item
    assert {given[i]["memory"]: {k: v for k, v in given[i].items() if k in ("user_id", "agent_id", "run_id", "actor_id")}
            for i in given} == {"I love sushi": {"user_id": "alice"}, "Call me Bob": {"user_id": "alice", "actor_id": "bob"},
                                "Plan the trip": {"agent_id": "coach", "run_id": "r1"}}
    by_text = {r["memory"]: r for r in given.values()}
    # engram import into a fresh home: each memory's metadata is the one it was given (mem0's
    # fields kept in engram's entry, metadata["mem0"], as for any mem0 item).
    for out in exported.values():
        as_json(tmp_path / "b", "import", str(out))
    b = Engram.from_settings(home=tmp_path / "b")
    # (engram import's places are the facade's: the user's agent, agent: and the agent_id's, ids at the top)
    imported = {mm.content: mm for agent in ("alice", "agent:coach") for mm in b.for_agent(agent).list()}
    assert {text: mem0_fields(mm)[1] for text, mm in imported.items()} == {
        text: r["metadata"] or {} for text, r in by_text.items()}
    assert imported["Call me Bob"].metadata["mem0"] | {"id": None, "hash": None} == {
        "id": None, "hash": None, "user_id": "alice", "actor_id": "bob", "role": "user"}
    # and the facade on that home gives what it gave before the export, but for the new memories' ids.
    facade = Memory(b)
    again = [*facade.get_all(user_id="alice")["results"], *facade.get_all(agent_id="coach")["results"]]
    facade.close()
    assert {r["memory"]: {k: v for k, v in r.items() if k != "id"} for r in again} == {
        text: {k: v for k, v in r.items() if k != "id"} for text, r in by_text.items()}
    # The facade's own import into a fresh home: the same results, but for the new memories' ids.
    c = Memory(Engram.from_settings(home=tmp_path / "c"))
    for out in exported.values():
        assert c.import_mem0(out.read_text())["imported"] == 1 + (out == exported["alice"])
    back = [*c.get_all(user_id="alice")["results"], *c.get_all(agent_id="coach")["results"]]
    c.close()
    assert {r["memory"]: {k: v for k, v in r.items() if k != "id"} for r in back} == {
        text: {k: v for k, v in r.items() if k != "id"} for text, r in by_text.items()}


def test_mem0_export_keeps_engrams_related_entity_search_context_and_source(tmp_path: Path) -> None:
    # engram's own fields mem0 has none for travel in the item's "engram" entry, beside key and
    # category: they were left out, and an import of the export lost them.
    run(tmp_path / "a", "remember", "Alice likes green tea", "--key", "tea", "--entity", "Alice", "--source", "chat",
        "--search-context", "drinks she orders at the cafe")
    out, again = tmp_path / "mem0.json", tmp_path / "again.json"
    run(tmp_path / "a", "export", str(out), "--format", "mem0")
    [item] = json.loads(out.read_text())["results"]
    assert "related_entity" not in item and "source" not in item and item["metadata"] == {}  # no mem0 field made up
    as_json(tmp_path / "b", "import", str(out))
    copy = as_json(tmp_path / "b", "get", "tea")
    assert (copy["related_entity"], copy["search_context"]) == ("Alice", "drinks she orders at the cafe")
    assert copy["source"] == "mem0" and copy["metadata"]["mem0"]["engram_source"] == "chat"
    assert [m["key"] for m in as_json(tmp_path / "b", "list", "--entity", "alice")] == ["tea"]
    run(tmp_path / "b", "export", str(again), "--format", "mem0")  # and given back by the next export
    [back] = json.loads(again.read_text())["results"]
    assert {k: back["engram"][k] for k in ("related_entity", "search_context", "source")} == {
        "related_entity": "Alice", "search_context": "drinks she orders at the cafe", "source": "chat"}
    assert back["metadata"] == {}


def test_a_newer_mem0_item_brings_the_related_entity_and_search_context_its_engram_entry_carries(tmp_path: Path) -> None:
    # An item whose engram entry names no engram memory (no id: a tool writing the entry, or an export
    # with the id taken out) is mem0's record, refreshed when newer: its tags and metadata were brought,
    # the related entity and search context the entry carries were not. One it leaves out stays.
    run(tmp_path / "a", "remember", "Alice likes green tea", "--key", "tea", "--entity", "Alice",
        "--search-context", "drinks at the cafe")
    out = tmp_path / "mem0.json"
    run(tmp_path / "a", "export", str(out), "--format", "mem0")
    document = json.loads(out.read_text())
    [item] = document["results"]
    del item["engram"]["id"]
    item["id"], item["created_at"], item["updated_at"] = "m-1", "2024-01-10T09:00:00+00:00", "2024-01-10T09:00:00+00:00"
    out.write_text(json.dumps(document))
    as_json(tmp_path / "b", "import", str(out))
    item["updated_at"] = "2024-06-02T12:00:00+00:00"
    item["engram"] |= {"related_entity": "Bob", "search_context": "drinks at home"}
    item["metadata"] = {"mood": "calm"}
    out.write_text(json.dumps(document))
    assert as_json(tmp_path / "b", "import", str(out))["updated"] == 1
    copy = as_json(tmp_path / "b", "get", "tea")
    assert (copy["related_entity"], copy["search_context"], copy["metadata"]["mood"]) == ("Bob", "drinks at home", "calm")
    # Newer again (than the refresh, stamped with engram's clock), the entry without either, the
    # metadata changed: both stay as they are in engram.
    item["updated_at"] = datetime.fromtimestamp(copy["updated_at"] + 60, UTC).isoformat()
    del item["engram"]["related_entity"], item["engram"]["search_context"]
    item["metadata"] = {"mood": "bright"}
    out.write_text(json.dumps(document))
    assert as_json(tmp_path / "b", "import", str(out))["updated"] == 1
    copy = as_json(tmp_path / "b", "get", "tea")
    assert (copy["related_entity"], copy["search_context"], copy["metadata"]["mood"]) == ("Bob", "drinks at home", "bright")


def test_a_mem0_export_entrys_related_entity_past_its_bound_is_named(tmp_path: Path) -> None:
    run(tmp_path / "a", "remember", "Alice likes green tea", "--key", "tea")
    out = tmp_path / "mem0.json"
    run(tmp_path / "a", "export", str(out), "--format", "mem0")
    document = json.loads(out.read_text())
    document["results"][0]["engram"]["related_entity"] = "A" * 201
    out.write_text(json.dumps(document))
    result = CliRunner().invoke(app, ["--home", str(tmp_path / "b"), "import", str(out)])
    assert isinstance(result.exception, SnapshotError), result.output
    assert "results[0].engram.related_entity: is longer than 200 characters" in str(result.exception)
    assert as_json(tmp_path / "b", "count") == {"count": 0}


def test_basic_memory_export_keeps_engrams_related_entity_search_context_and_source(tmp_path: Path) -> None:
    # basic-memory has no such fields: the note carries them as front-matter keys engram owns (basic-memory
    # keeps a key it does not know as the note's metadata). They were left out, and the import made the
    # note's title (the memory's key) its entity.
    context = 'drinks "she" orders\nat the cafe'
    run(tmp_path / "a", "remember", "Alice likes green tea", "--key", "tea", "--entity", "Alice", "--source", "chat",
        "--search-context", context)
    run(tmp_path / "a", "remember", "The kettle is electric", "--key", "kettle")
    vault, again = tmp_path / "vault", tmp_path / "again"
    run(tmp_path / "a", "export", str(vault), "--format", "basic-memory")
    front = yaml.safe_load((vault / "tea.md").read_text().split("---")[1])  # as basic-memory's YAML reads it
    assert (front["engram_related_entity"], front["engram_search_context"], front["engram_source"]) == (
        "Alice", context, "chat")
    assert front["title"] == "tea" and "source" not in front  # basic-memory's own keys as they were
    kettle = yaml.safe_load((vault / "kettle.md").read_text().split("---")[1])
    assert not {"engram_related_entity", "engram_search_context"} & set(kettle)  # none made up
    as_json(tmp_path / "b", "import", str(vault))
    copy = as_json(tmp_path / "b", "get", "tea")
    assert (copy["related_entity"], copy["search_context"]) == ("Alice", context)
    assert copy["source"] == "basic-memory" and copy["metadata"]["basic_memory"]["engram_source"] == "chat"
    assert [m["key"] for m in as_json(tmp_path / "b", "list", "--entity", "alice")] == ["tea"]
    assert as_json(tmp_path / "b", "get", "kettle")["related_entity"] is None  # not the note's title
    run(tmp_path / "b", "export", str(again), "--format", "basic-memory")  # and given back by the next export
    assert [line for line in (again / "tea.md").read_text().splitlines() if line.startswith("engram_")][1:] == [
        line for line in (vault / "tea.md").read_text().splitlines() if line.startswith("engram_")][1:]


def test_a_notes_engram_related_entity_past_its_bound_is_named(tmp_path: Path) -> None:
    run(tmp_path / "a", "remember", "Alice likes green tea", "--key", "tea", "--entity", "Alice")
    vault = tmp_path / "vault"
    run(tmp_path / "a", "export", str(vault), "--format", "basic-memory")
    note = vault / "tea.md"
    note.write_text(note.read_text().replace('engram_related_entity: "Alice"', f'engram_related_entity: "{"A" * 201}"'))
    result = CliRunner().invoke(app, ["--home", str(tmp_path / "b"), "import", str(vault)])
    assert isinstance(result.exception, SnapshotError), result.output
    assert "tea.md front matter engram_related_entity: is longer than 200 characters" in str(result.exception)
    assert as_json(tmp_path / "b", "count") == {"count": 0}
