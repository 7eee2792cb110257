"""``engram import --from KIND`` on fixtures written from each source's public format, through the
CLI against a real SQLite file: counts, a recall of an imported fact, the links of imported
relations, what the metadata keeps, and that a second run imports nothing."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engram.errors import SnapshotError, ValidationError
from engram.interfaces.cli.app import app

from .cli_runs import as_json, run, runner

ENGRAM = str(Path(sys.executable).with_name("engram"))
FIXTURES = Path(__file__).parent.parent / "fixtures" / "import"


def recall_keys(home: Path, query: str, *agent: str) -> list[str]:
    hits = as_json(home, *agent, "recall", query, "--limit", "3")["hits"]
    return [h["memory"]["key"] for h in hits]


def neighbour_keys(home: Path, key: str, *agent: str) -> set[str]:
    return {m["key"] for m in as_json(home, *agent, "neighbours", key)}


def import_twice(home: Path, name: str, kind: str | None, expected: int) -> dict:
    args = ["import", str(FIXTURES / name), *(["--from", kind] if kind else [])]
    first = as_json(home, *args)
    assert first["kind"] == (kind or first["kind"]) and first["imported"] == expected, first
    again = as_json(home, *args)
    assert (again["imported"], again["skipped"]) == (0, expected), again
    return first


@pytest.mark.parametrize("kind", ["mem0", None])
def test_mem0_users_agents_runs_times_and_ids(tmp_path: Path, kind: str | None) -> None:
    home = tmp_path / "home"
    summary = import_twice(home, "mem0.json", kind, 3)
    assert summary["kind"] == "mem0"
    assert recall_keys(home, "where is the trip to Paris", "--agent", "alex")[0] == "travelling-paris-june"
    paris = as_json(home, "--agent", "alex", "get", "travelling-paris-june")
    # Beside mem0's fields, the SHA-256 of the text the import brought (a newer export's text follows
    # while the memory still holds it) and the categories it brought as tags (a newer export's
    # replace those, a tag added in engram stays): importers.apply._changes.
    assert paris["metadata"]["mem0"] == {"id": "f38b689d-6b24-45b7-bced-17fbb4d8bac7",
                                         "hash": "62bc074f56d1f909f1b4c2b639f56f6a", "user_id": "alex",
                                         "imported_text_sha256": hashlib.sha256(paris["content"].encode()).hexdigest(),
                                         "imported_tags": ["travel"], "imported_keys": ["source", "user_id"]}
    assert paris["metadata"]["source"] == "chat" and paris["tags"] == ["travel"] and paris["source"] == "mem0"
    assert paris["created_at"] == pytest.approx(1708930620.108347)  # 2024-02-25T23:57:00.108347-07:00
    assert paris["updated_at"] == pytest.approx(1721977020.108367)  # 2024-07-25T23:57:00.108367-07:00
    # The graph relation (paris -> vegetarian restaurants) links the memories naming its ends.
    assert neighbour_keys(home, "travelling-paris-june", "--agent", "alex") == {"prefers-vegetarian-restaurants"}
    # The owner (user_id, else agent_id, else run_id) names the engram agent, as the mem0 facade names
    # it; the ids sit at the top of the metadata, where they narrow a list as mem0's filters do (and
    # the facade's reads); nothing of alex's leaks to "default", nor to an agent named after ops-bot.
    ops = as_json(home, "--agent", "alex", "list", "--meta", "agent_id=ops-bot", "--meta", "run_id=run-42")
    assert [(m["content"], m["scope"], m["metadata"]["team"]) for m in ops] == [
        ("Deploys the billing service every Tuesday", "agent:alex", "payments")]
    assert len(as_json(home, "--agent", "alex", "list")) == 3
    assert as_json(home, "list") == [] and as_json(home, "-a", "ops-bot", "list") == []
    assert as_json(home, "-a", "agent:ops-bot", "list") == []


def test_mcp_memory_entities_and_relations(tmp_path: Path) -> None:
    home = tmp_path / "home"
    import_twice(home, "mcp-memory.jsonl", None, 3)
    assert recall_keys(home, "who speaks Spanish")[0] == "john-smith"
    john = as_json(home, "get", "john-smith")
    assert john["content"] == "John_Smith (person)\n- Speaks fluent Spanish\n- Graduated in 2019"
    assert john["related_entity"] == "John_Smith" and john["tags"] == ["person"]
    assert john["metadata"]["relations"] == [{"type": "works_at", "to": "Anthropic"},
                                             {"type": "based_in", "to": "Lisbon_Office"}]
    assert neighbour_keys(home, "john-smith") == {"anthropic", "lisbon-office"}
    assert neighbour_keys(home, "anthropic") == {"john-smith"}


def test_mcp_memory_service_export(tmp_path: Path) -> None:
    home = tmp_path / "home"
    import_twice(home, "mcp-memory-service.json", None, 2)
    key = recall_keys(home, "when does the staging database password rotate")[0]
    memory = as_json(home, "get", key)
    assert memory["tags"] == ["ops", "database"] and memory["type"] == "note"
    assert memory["created_at"] == 1736937000.5 and memory["metadata"]["project"] == "atlas"
    assert memory["metadata"]["mcp_memory_service"]["source_machine"] == "laptop-1"
    listed = as_json(home, "list", "--tag", "decision")
    assert [(m["type"], m["tags"]) for m in listed] == [("decision", ["architecture", "decision"])]
    assert listed[0]["created_at"] == 1736499600.0  # from created_at_iso


def test_an_mcp_memory_service_memorys_own_provenance_key_is_kept(tmp_path: Path) -> None:
    # The service's metadata is the user's: its own "mcp_memory_service" entry is kept inside the
    # one engram writes there (as "own"), and named in a warning, never overwritten.
    export = json.loads((FIXTURES / "mcp-memory-service.json").read_text(encoding="utf-8"))
    own = {"synced_from": "desktop", "note": "r\u00e9sum\u00e9 \u2603 "}
    export["memories"][0]["metadata"] = {"project": "atlas", "mcp_memory_service": own}
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export, ensure_ascii=False), encoding="utf-8")
    summary = as_json(tmp_path / "home", "import", str(path))
    assert summary["imported"] == 2 and summary["warnings"] == [
        "memories[0].metadata.mcp_memory_service: kept as metadata.mcp_memory_service.own (metadata.mcp_memory_service "
        "holds where the record came from in mcp_memory_service)"], summary
    [memory] = as_json(tmp_path / "home", "list", "--meta", "project=atlas")
    assert memory["metadata"]["mcp_memory_service"] == {
        "content_hash": export["memories"][0]["content_hash"], "memory_type": "note", "source_machine": "laptop-1",
        "own": own, "imported_tags": export["memories"][0]["tags"],  # what the import brought (apply.with_imported)
        "imported_keys": sorted(k for k in memory["metadata"] if k != "mcp_memory_service"),
        "imported_text_sha256": hashlib.sha256(memory["content"].encode()).hexdigest()}
    # One without such an entry has engram's alone, as before.
    [other] = as_json(tmp_path / "home", "list", "--tag", "decision")
    assert "own" not in other["metadata"]["mcp_memory_service"]


def test_openclaw_workspace(tmp_path: Path) -> None:
    home = tmp_path / "home"
    import_twice(home, "openclaw", None, 6)
    assert "typescript" in recall_keys(home, "TypeScript or JavaScript for new projects")[0]
    core = as_json(home, "list", "--category", "core")
    assert {m["content"] for m in core} >= {
        "The team picked PostgreSQL 16 for the orders service\nafter the load test in March."}
    assert all(m["metadata"]["openclaw"]["file"] == "MEMORY.md" for m in core) and len(core) == 3
    daily = as_json(home, "list", "--tag", "daily")
    standup = [m for m in daily if m["content"].startswith("Standup")][0]
    assert standup["created_at"] == 1772496000.0  # 2026-03-03, from memory/2026-03-03-standup.md
    assert {m["type"] for m in daily} == {"experience"} and len(daily) == 3


def test_basic_memory_notes_observations_relations(tmp_path: Path) -> None:
    home = tmp_path / "home"
    import_twice(home, "basic-memory", "basic-memory", 6)
    assert recall_keys(home, "Ethiopian beans citrus")[0].startswith("ethiopian-beans")
    note = as_json(home, "get", "coffee-brewing-methods")
    assert note["tags"] == ["coffee", "brewing"] and note["related_entity"] == "Coffee Brewing Methods"
    assert note["metadata"]["basic_memory"]["unresolved_links"] == ["A Note Nobody Wrote"]
    assert {"type": "contrasts_with", "to": "Tea Brewing Methods"} in note["metadata"]["relations"]
    linked = neighbour_keys(home, "coffee-brewing-methods")
    assert {"coffee-bean-origins", "tea-brewing-methods"} <= linked
    observation = as_json(home, "list", "--tag", "method")[0]
    assert observation["content"] == "Pour over provides more flavor clarity than French press"
    assert observation["tags"] == ["method", "brewing"] and observation["type"] == "method"
    assert neighbour_keys(home, observation["key"]) == {"coffee-brewing-methods"}
    context = as_json(home, "list", "--tag", "technique")[0]["metadata"]["basic_memory"]["context"]
    assert context == "personal experience"


def test_clawless_history_and_operator_memory(tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = as_json(home, "import", str(FIXTURES / "clawless"))
    assert (first["kind"], first["messages_imported"], first["operator_notes"]) == ("clawless", 6, "added")
    again = as_json(home, "import", str(FIXTURES / "clawless"))
    assert (again["messages_imported"], again["messages_skipped"], again["operator_notes"]) == (0, 6, "present")
    shown = as_json(home, "history", "show", "telegram:12345")
    contents = [m["content"] for m in shown["messages"]]
    assert contents[:2] == ["What time is the dentist appointment?",
                            "Your dentist appointment is Thursday at 3pm with Dr. Okafor."]
    assert len(contents) == 4 and shown["messages"][0]["created_at"] == 1770711300.0
    notes = (home / "MEMORY.md").read_text()
    assert notes.count("Never schedule anything before 9am.") == 1


MALFORMED = [
    ("mem0.json", '{"results": [{"id": "a", "memory": "fine"}, {"id": "b", "memory": ""}]}', "results[1].memory"),
    # The platform's fields kept whole: of another sort than mem0 writes, named (not kept as they are).
    ("mem0.json", '{"results": [{"id": "a", "memory": "fine", "structured_attributes": "saturday"}]}',
     "results[0].structured_attributes: got text"),
    ("mem0.json", '{"results": [{"id": "a", "memory": "fine", "owner": {"name": "dana"}}]}', "results[0].owner: got an object"),
    # A blank owner id, which the mem0 facade refuses: it was read as no id, the item imported into the
    # importing agent, where the facade could never find it by the id it names.
    ("mem0.json", '{"results": [{"id": "a", "memory": "fine", "user_id": "alice"}, {"id": "b", "memory": "ok", "user_id": " "}]}',
     'results[1].user_id: " " is blank (allowed: user_id: an id with a character other than whitespace, or none)'),
    ("mem0.json", '{"results": [{"id": "a", "memory": "fine", "agentId": "\\t"}]}', 'results[0].agentId: "\\t" is blank'),
    ("mem0.json", '{"results": [{"id": "a", "memory": "fine", "user_id": "", "run_id": "   "}]}', "results[0].run_id: "),
    ("memory.jsonl", '{"type":"entity","name":"A","entityType":"x","observations":["ok"]}\n{"type":"entity",\n',
     "line 2"),
    ("memory.jsonl", '{"type":"entity","name":"A","entityType":"x","observations":["ok"]}\n'
     '{"type":"relation","from":"A","to":"","relationType":"knows"}\n', "line 2.to"),
    # A fork's dates and version (mcp-knowledge-graph): one that is not, named by the line and the file's field.
    ("memory.jsonl", '{"type":"entity","name":"A","entityType":"x","observations":["ok"],"createdAt":"2025-04-02T08:14:09Z"}\n'
     '{"type":"entity","name":"B","entityType":"x","observations":["ok"],"createdAt":"last week","version":1}\n',
     "line 2.createdAt: \"last week\" is not a time"),
    ("memory.jsonl", '{"type":"entity","name":"A","entityType":"x","observations":["ok"]}\n'
     '{"type":"relation","from":"A","to":"A","relationType":"knows","version":"v1"}\n', 'line 2.version: got "v1"'),
    # The temporal fork's observation objects: one without its text, of another sort, or with a time or
    # durability that is none, named by the line, the observation and its field.
    ("memory.jsonl", '{"type":"entity","name":"A","entityType":"x","observations":["ok"]}\n'
     '{"type":"entity","name":"B","entityType":"x","observations":["ok",{"timestamp":"2025-06-03T09:12:44","durability":"permanent"}]}\n',
     "line 2.observations[1].content: is missing"),
    ("memory.jsonl", '{"type":"entity","name":"A","entityType":"x","observations":[{"content":["ok"]}]}\n',
     "line 1.observations[0].content: got a list"),
    ("memory.jsonl", '{"type":"entity","name":"A","entityType":"x","observations":["ok",7]}\n', "line 1.observations[1]: got 7"),
    ("memory.jsonl", '{"type":"entity","name":"A","entityType":"x","observations":[{"content":"ok","durability":"forever"}]}\n',
     'line 1.observations[0].durability: got "forever" (allowed: permanent, long-term, short-term, temporary)'),
    ("memory.jsonl", '{"type":"entity","name":"A","entityType":"x","observations":[{"content":"ok","timestamp":"soon"}]}\n',
     'line 1.observations[0].timestamp: "soon" is not a time'),
    ("export.json", '{"export_metadata": {}, "memories": [{"content": "ok"}, {"content": "x", "created_at": "soon"}]}',
     "memories[1].created_at"),
    ("conversation-history.jsonl", '{"userMessage":"hi","botResponse":"hello","chatId":"1","timestamp":1}\n'
     '{"userMessage":"hi","chatId":"1","timestamp":2}\n', "line 2.botResponse"),
]


@pytest.mark.parametrize(("name", "text", "named"), MALFORMED)
def test_a_malformed_record_imports_nothing_and_is_named(tmp_path: Path, name: str, text: str, named: str) -> None:
    home = tmp_path / "home"
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    result = runner.invoke(app, ["--home", str(home), "import", str(path)])
    assert isinstance(result.exception, SnapshotError) and named in str(result.exception), result.exception
    assert as_json(home, "count") == {"count": 0}


def test_a_malformed_note_in_a_folder_imports_none_of_the_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "good.md").write_text("---\ntitle: Good\npermalink: good\n---\n- [fact] fine #ok\n", encoding="utf-8")
    (vault / "bad.md").write_text("---\ntitle: [unclosed\n---\nbody\n", encoding="utf-8")
    # The installed command: exit code 2 and the file and line on stderr.
    done = subprocess.run([ENGRAM, "--home", str(home), "import", str(vault), "--from", "basic-memory"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "bad.md line 2: malformed YAML front matter" in done.stderr, done.stderr
    assert as_json(home, "count") == {"count": 0}


def test_a_taken_key_gets_a_suffix_instead_of_being_dropped(tmp_path: Path) -> None:
    home = tmp_path / "home"
    run(home, "remember", "Unrelated memory of mine", "--key", "john-smith")
    as_json(home, "import", str(FIXTURES / "mcp-memory.jsonl"))
    assert as_json(home, "get", "john-smith")["content"] == "Unrelated memory of mine"
    assert as_json(home, "get", "john-smith-2")["related_entity"] == "John_Smith"


def test_the_import_names_the_agents_it_filled(tmp_path: Path) -> None:
    # The source's users became engram agents the importing one does not see: "imported 3" and an
    # empty `engram list` left the user looking for them.
    home = tmp_path / "home"
    out = run(home, "import", str(FIXTURES / "mem0.json"))
    assert "imported 3 from mem0" in out
    assert "into agent alex (engram -a alex list; --into-agent keeps all in this one)" in out
    assert as_json(home, "import", str(FIXTURES / "mem0.json"))["agents"] == ["alex"]
    kept = run(tmp_path / "other", "-a", "alex", "import", str(FIXTURES / "mem0.json"), "--into-agent")
    assert "into agent" not in kept
    into = as_json(tmp_path / "other", "-a", "alex", "import", str(FIXTURES / "mem0.json"), "--into-agent")
    assert (into["agents"], into["sessions"]) == (["alex"], [])  # ops-bot's run too joins alex, in no session


def test_mem0_runs_are_their_owners_memories_narrowed_by_run_id(tmp_path: Path) -> None:
    # mem0's runs are no engram sessions: mem0 reads a run's memories with its owner's
    # (get_all(agent_id=...) returns every run's), and so does the mem0 facade, which keeps the run_id
    # in the metadata. The import does the same (it put each run in a session the facade never read):
    # an agent's runs are in "agent:" and its id, each narrowed by its run_id, and no session is named.
    many = tmp_path / "runs.json"
    many.write_text(json.dumps({"results": [
        {"id": f"m{n}", "memory": f"Step {n} of the rollout", "agent_id": "ops-bot", "run_id": f"run-{n}"}
        for n in range(1, 5)] + [{"id": "z", "memory": "Zoe likes green tea", "user_id": "zoe"}]}), encoding="utf-8")
    out = run(tmp_path / "many", "import", str(many))
    assert "into agents agent:ops-bot, zoe (engram -a agent:ops-bot list; --into-agent keeps all in this one)" in out, out
    assert "session" not in out, out
    summary = as_json(tmp_path / "many", "import", str(many))
    assert (summary["agents"], summary["listed_agents"], summary["sessions"]) == (["agent:ops-bot", "zoe"],) * 2 + ([],)
    assert len(as_json(tmp_path / "many", "-a", "agent:ops-bot", "list")) == 4
    assert [m["content"] for m in as_json(tmp_path / "many", "-a", "agent:ops-bot", "list", "--meta", "run_id=run-1")] \
        == ["Step 1 of the rollout"]
    assert [m["content"] for m in as_json(tmp_path / "many", "-a", "zoe", "list")] == ["Zoe likes green tea"]


def test_into_agent_and_unknown_kind(tmp_path: Path) -> None:
    home = tmp_path / "home"
    as_json(home, "import", str(FIXTURES / "mem0.json"), "--into-agent")
    assert as_json(home, "count") == {"count": 3}
    result = runner.invoke(app, ["--home", str(home), "import", str(FIXTURES / "mem0.json"), "--from", "nosuchsystem"])
    assert isinstance(result.exception, ValidationError)
    assert result.exception.field == "--from"  # the option as typed
    assert "nosuchsystem" in str(result.exception) and "mcp-memory" in str(result.exception)


def test_history_trimmed_to_its_cap_is_not_refilled_by_a_second_import(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("ENGRAM_HISTORY__MAX_HISTORY_LEN", "2")
    history = FIXTURES / "clawless" / "conversation-history.jsonl"
    first = as_json(home, "import", str(history))
    # Only what the conversation keeps counts as added; the rest is named.
    assert first["messages_imported"] == 4, first  # of 6: two conversations, each kept to its last 2
    assert first["warnings"] == ["telegram:12345: 2 older messages not kept: a conversation holds at most "
                                 "history.max_history_len (2) messages"]
    again = as_json(home, "import", str(history))
    assert (again["messages_imported"], again["messages_skipped"]) == (0, 6)
    kept = [m["content"] for m in as_json(home, "history", "show", "telegram:12345")["messages"]]
    assert kept == ["Remind me what we decided about the garage",
                    "You decided to repaint the garage door green in April."]


def test_one_message_trimmed_to_the_cap_is_counted_in_the_singular(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("ENGRAM_HISTORY__MAX_HISTORY_LEN", "3")
    first = as_json(home, "import", str(FIXTURES / "clawless" / "conversation-history.jsonl"))
    assert first["messages_imported"] == 5, first  # of 6: telegram:12345's 4 kept to its last 3
    assert first["warnings"] == ["telegram:12345: 1 older message not kept: a conversation holds at most "
                                 "history.max_history_len (3) messages"]


def test_a_jsonl_history_names_its_own_bound_for_what_an_import_does_not_keep(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # The jsonl backend keeps Clawless's bound (history.max_entries exchanges per agent), not
    # max_history_len messages: the warning named max_history_len, which had dropped nothing.
    home = tmp_path / "home"
    monkeypatch.setenv("ENGRAM_HISTORY__BACKEND", "jsonl")
    monkeypatch.setenv("ENGRAM_HISTORY__MAX_ENTRIES", "1")
    first = as_json(home, "import", str(FIXTURES / "clawless" / "conversation-history.jsonl"))
    # telegram:12345's two exchanges keep the newer (then slack's one exchange takes the agent's only line).
    assert first["warnings"] == ["telegram:12345: 2 older messages not kept: a jsonl history keeps at most "
                                 "history.max_entries exchanges per agent"], first
    assert len((home / "conversation-history.jsonl").read_text().splitlines()) == 1


def test_a_path_that_does_not_exist_is_named_as_missing(tmp_path: Path) -> None:
    # Not "cannot read ... (allowed: a readable UTF-8 file)": the path may be a folder's, which is allowed too.
    home = tmp_path / "home"
    for source in (tmp_path / "no-such-workspace", tmp_path / "no-such-export.json"):
        result = runner.invoke(app, ["--home", str(home), "import", str(source)])
        assert isinstance(result.exception, ValidationError), result.exception
        assert str(result.exception) == (f'path: "{source}" does not exist (allowed: a path to a file, folder or '
                                         "export ZIP to import, or - for standard input)")
    assert as_json(home, "count") == {"count": 0}


def test_json_text_given_for_the_path_is_refused_as_not_a_path_without_echoing_it(tmp_path: Path) -> None:
    # Review: `engram import '<long JSON>'` ended in "internal error: OSError: [Errno 36] File name too
    # long: '<the whole JSON>'" (exit 1); a short one in "path: {...} does not exist", uncut, no hint of -.
    home = tmp_path / "home"
    long = json.dumps({"memories": [{"key": f"k{n}", "content": "x" * 50} for n in range(200)]})
    for given in (long, '{"memories": [{"key": "tea", "content": "The user prefers tea"}]}'):
        for kind in ((), ("--from", "snapshot"), ("--from", "folder")):
            result = subprocess.run([ENGRAM, "--home", str(home), "import", given, *kind], capture_output=True,
                                    text=True, timeout=120)
            assert result.returncode == 2 and result.stdout == "", result.stderr
            assert result.stderr.startswith("error: path: takes a file or folder path, not the JSON itself: "), result.stderr
            assert "or - to read the document from standard input" in result.stderr
            assert len(result.stderr) < 400 and "Errno" not in result.stderr and "internal error" not in result.stderr
    # A long name that is no JSON: the file system's reason, the name cut.
    result = subprocess.run([ENGRAM, "--home", str(home), "import", str(tmp_path / ("m" * 300))], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 2 and "error: path: " in result.stderr and "File name too long" in result.stderr
    assert "m" * 250 not in result.stderr and "Errno" not in result.stderr
    assert as_json(home, "count") == {"count": 0}


def test_basic_memory_notes_without_dates_are_dated_by_their_files(tmp_path: Path) -> None:
    """basic-memory writes no dates in a note's front matter (it dates a note by its file): such a
    note and its observations get the file's modification time, not the moment of the import, and
    an edit of the note afterwards (which moves that time) still finds what the first import stored."""
    folder = tmp_path / "vault"
    shutil.copytree(FIXTURES / "basic-memory", folder)
    origins = folder / "projects" / "coffee-bean-origins.md"
    written = 1709632800.0  # 2024-03-05 10:00 UTC
    for path in folder.rglob("*.md"):
        os.utime(path, (written, written))
    edited = 1740000000.0  # 2025-02-19, after the created: its front matter gives (2025-02-01 09:00)
    os.utime(folder / "coffee-brewing-methods.md", (edited, edited))
    home = tmp_path / "home"
    assert as_json(home, "import", str(folder))["imported"] == 6
    note = as_json(home, "get", "coffee-bean-origins")
    assert (note["created_at"], note["updated_at"]) == (written, written)
    fact = as_json(home, "list", "--tag", "fact")[0]
    assert fact["content"] == "Ethiopian beans have bright citrus notes" and fact["created_at"] == written
    # A date its front matter gives is kept; the file's time is the note's last change.
    brewing = as_json(home, "get", "coffee-brewing-methods")
    assert (brewing["created_at"], brewing["updated_at"]) == (1738400400.0, edited)

    origins.write_text(origins.read_text(encoding="utf-8") + "- [fact] Kenyan beans taste of blackcurrant\n",
                       encoding="utf-8")
    os.utime(origins, (written + 86400, written + 86400))
    again = as_json(home, "import", str(folder))
    assert (again["imported"], again["skipped"]) == (1, 6), again
    facts = as_json(home, "list", "--tag", "fact")
    assert sorted(m["created_at"] for m in facts) == [written, written + 86400]
    assert len(as_json(home, "list", "--limit", "50")) == 7  # no second copy of the edited note


@pytest.mark.parametrize("made", ["engram", "ptrclaw", "ptrclaw-legacy"])
def test_a_snapshot_or_ptrclaw_file_is_summarised_from_its_kind_as_every_kind_is(tmp_path: Path, made: str) -> None:
    """``engram import`` of a snapshot said ``imported 2, skipped 0 already present``, where every
    other kind says which it read (``imported 3 from mem0, ...``): a snapshot, engram's or PtrClaw's
    memory file (``--from snapshot`` reads both), says ``from snapshot``."""
    entries = [{"id": "1", "key": "tea", "content": "The user prefers green tea", "category": "core", "timestamp": 5},
               {"id": "2", "key": "home", "content": "The user lives in Lisbon", "category": "knowledge", "timestamp": 6}]
    path = tmp_path / "memory.json"
    if made == "engram":
        source = tmp_path / "source"
        for entry in entries:
            run(source, "remember", entry["content"], "--key", entry["key"])
        run(source, "export", str(path))
    else:
        path.write_text(json.dumps({"entries": entries, "embeddings": {}} if made == "ptrclaw" else entries))
    home = tmp_path / "home"
    assert "imported 2 from snapshot, skipped 0 already present" in run(home, "import", str(path))
    assert "imported 0 from snapshot, skipped 2 already present" in run(home, "import", str(path), "--from", "snapshot")
    assert sorted(m["key"] for m in as_json(home, "list")) == ["home", "tea"]
