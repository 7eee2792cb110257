"""``engram import`` on files in the shape the source systems really write them, beyond the
canonical fixtures of ``test_import_cli``: mem0's TypeScript SDK (camelCase fields), mem0's graph
``get_all`` (relations with ``target``) and platform fields (``expiration_date``), an MCP memory
server file with a relation an older server left without its entity, its forks' dates and
observation objects. Through the CLI against a
real SQLite file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_in_process import cli_output

FIXTURES = Path(__file__).parent.parent / "fixtures" / "import"


def as_json(home: Path, *args: str) -> object:
    return json.loads(cli_output(home, "--json", *args))


def test_mem0_typescript_sdk_keeps_users_agents_runs_and_times(tmp_path: Path) -> None:
    """mem0's TypeScript SDK returns ``userId``, ``agentId``, ``runId``, ``createdAt``, ``updatedAt``, ``attributedTo``:
    the memories join sam's agent (the owner of both, as the mem0 facade names it) at their times, not
    the importing agent at now, the ids in Python's spelling at the top of the metadata."""
    home = tmp_path / "home"
    summary = as_json(home, "import", str(FIXTURES / "mem0-ts.json"))
    assert (summary["kind"], summary["imported"], sorted(summary["agents"])) == ("mem0", 2, ["sam"])
    [peanuts] = as_json(home, "--agent", "sam", "list", "--meta", "source=onboarding")
    assert peanuts["content"] == "Is allergic to peanuts"
    assert peanuts["created_at"] == pytest.approx(1740906927.412)  # 2025-03-02T09:15:27.412Z
    assert peanuts["updated_at"] == pytest.approx(1741111263.0)  # 2025-03-04T18:01:03.000Z
    assert peanuts["metadata"]["mem0"]["user_id"] == "sam" and peanuts["metadata"]["source"] == "onboarding"
    assert peanuts["metadata"]["mem0"]["attributed_to"] == "user"  # whom mem0 says it is about (``attributedTo``)
    [lesson] = as_json(home, "--agent", "sam", "list", "--meta", "agent_id=tutor", "--meta", "run_id=lesson-7")
    assert lesson["content"] == "Prefers answers in Portuguese — obrigado"
    assert lesson["scope"] == "agent:sam" and lesson["created_at"] == pytest.approx(1741172400.0)
    assert {k: lesson["metadata"][k] for k in ("user_id", "agent_id", "run_id")} == {
        "user_id": "sam", "agent_id": "tutor", "run_id": "lesson-7"}
    assert as_json(home, "list") == []


def test_mem0_graph_relations_with_target_and_platform_expiry(tmp_path: Path) -> None:
    """``get_all()`` with graph memory names a relation's far end ``target`` (``search()`` names it
    ``destination``); the platform's ``expiration_date`` (a UTC date, shown through that day) is the
    end of the memory's valid time, and ``immutable`` is kept with mem0's fields."""
    home = tmp_path / "home"
    summary = as_json(home, "import", str(FIXTURES / "mem0-graph.json"), "--from", "mem0")
    assert summary["imported"] == 2, summary
    # The relation's source is the user, whom no memory's text names: it links nothing, and says so.
    assert summary["warnings"] == [
        'relations[0] (priya works_at acme_corp): no memory names "priya"; relation not imported'], summary
    memories = {m["content"]: m for m in as_json(home, "--agent", "priya", "list")}
    job, trial = memories["Works at Acme Corp as a data engineer"], memories["Is on the Pro trial"]
    assert trial["valid_until"] == pytest.approx(1740787200.0)  # 2025-03-01T00:00:00Z: all of 02-28 UTC
    assert job["valid_until"] is None
    assert trial["metadata"]["mem0"]["expiration_date"] == "2025-02-28" and trial["metadata"]["mem0"]["immutable"] is True
    assert trial["metadata"]["plan"] == {"tier": "pro", "seats": 3} and trial["tags"] == ["misc"]


def test_mem0_platform_fields_are_kept_and_exported_back(tmp_path: Path) -> None:
    """The platform's ``get_all`` (v2: ``count``/``next``/``results``) gives each memory its
    ``owner`` and ``organization`` (the mem0 account holding it), ``app_id`` and
    ``structured_attributes`` (its creation time broken down): all kept in ``metadata["mem0"]``
    and given back by ``export --format mem0``; the owner is no engram agent (``user_id`` is)."""
    home = tmp_path / "home"
    source = json.loads((FIXTURES / "mem0-platform.json").read_text())["results"]
    summary = as_json(home, "import", str(FIXTURES / "mem0-platform.json"))
    assert (summary["kind"], summary["imported"], summary["agents"]) == ("mem0", 2, ["alice"]), summary
    assert as_json(home, "--agent", "dana-ops", "list") == []
    memories = {m["content"]: m for m in as_json(home, "--agent", "alice", "list")}
    balance, physio = memories[source[0]["memory"]], memories[source[1]["memory"]]
    assert balance["metadata"]["mem0"]["structured_attributes"] == source[0]["structured_attributes"]
    assert {k: balance["metadata"]["mem0"][k] for k in ("owner", "organization", "app_id")} == {
        "owner": "dana-ops", "organization": "acme-health", "app_id": "wellness-coach"}
    assert physio["metadata"]["source"] == "intake-form" and physio["tags"] == ["health", "user_preferences"]
    assert physio["valid_until"] == pytest.approx(1775001600.0)  # 2026-04-01T00:00:00Z: all of 03-31 UTC
    out = tmp_path / "back.json"
    cli_output(home, "--agent", "alice", "export", str(out), "--format", "mem0")
    back = {i["id"]: i for i in json.loads(out.read_text())["results"]}
    for item in source:
        fields = ("owner", "organization", "app_id", "structured_attributes", "immutable", "expiration_date")
        assert {k: back[item["id"]].get(k) for k in fields} == {k: item[k] for k in fields}, back[item["id"]]


def test_mem0_relation_target_links_the_memories_naming_its_ends(tmp_path: Path) -> None:
    home = tmp_path / "home"
    export = {"results": [
        {"id": "m1", "memory": "Priya rides a bike to work", "user_id": "priya"},
        {"id": "m2", "memory": "The bike is a Brompton", "user_id": "priya"},
        {"id": "m3", "memory": "Brompton folds small", "user_id": "priya"}],
        "relations": [{"source": "priya", "relationship": "owns", "target": "brompton"}]}
    source = tmp_path / "mem0.json"
    source.write_text(json.dumps(export))
    assert as_json(home, "import", str(source))["imported"] == 3
    by_content = {m["content"]: m["key"] for m in as_json(home, "--agent", "priya", "list")}
    neighbours = as_json(home, "--agent", "priya", "neighbours", by_content["Priya rides a bike to work"])
    assert sorted(m["content"] for m in neighbours) == ["Brompton folds small", "The bike is a Brompton"]


def test_mcp_memory_relation_without_its_entity_is_reported_not_fatal(tmp_path: Path) -> None:
    """An older memory server wrote relations whose ends no entity defines (and no newline at the
    end): the entities and the other relations are imported, that relation named in a warning."""
    home = tmp_path / "home"
    summary = as_json(home, "import", str(FIXTURES / "mcp-memory-dangling.jsonl"))
    assert (summary["kind"], summary["imported"]) == ("mcp-memory", 2), summary
    assert any("line 4" in w and "Project Kestrel" in w and "not imported" in w for w in summary["warnings"])
    dana = as_json(home, "get", "dana-ivers")
    assert dana["metadata"]["relations"] == [{"type": "leads", "to": "Lisbon office"}]
    assert [m["key"] for m in as_json(home, "neighbours", "dana-ivers")] == ["lisbon-office"]


def test_mcp_memory_fork_dates_and_versions_are_kept(tmp_path: Path) -> None:
    """Forks of the memory server (``mcp-knowledge-graph``) write ``createdAt``, ``updatedAt`` and
    ``version`` on entity and relation lines: an entity's memory is created and updated at its
    times, its version kept in ``metadata["mcp_memory"]``; a relation's three kept in its entry."""
    home = tmp_path / "home"
    summary = as_json(home, "import", str(FIXTURES / "mcp-memory-fork.jsonl"))
    assert (summary["kind"], summary["imported"], summary["warnings"]) == ("mcp-memory", 2, []), summary
    marta, billing = as_json(home, "get", "marta-ruiz"), as_json(home, "get", "billing-service")
    assert (marta["created_at"], marta["updated_at"]) == (pytest.approx(1743581649.512), pytest.approx(1747672831.007))
    assert marta["metadata"]["mcp_memory"] == {"name": "Marta Ruiz", "version": 3}
    assert marta["metadata"]["relations"] == [{"type": "maintains", "to": "Billing Service", "version": 1,
                                               "created_at": "2025-04-02T08:15:44.230Z",
                                               "updated_at": "2025-04-02T08:15:44.230Z"}]
    # Only createdAt (the fork's first versions): updated when created.
    assert billing["created_at"] == billing["updated_at"] == pytest.approx(1743581649.512)
    assert billing["metadata"]["mcp_memory"]["version"] == 1


def test_mcp_memory_fork_reimport_finds_what_an_import_without_its_dates_stored(tmp_path: Path) -> None:
    """The memory's id is the entity's name's, dates or not: the fork file imported again finds the
    memories an import that did not read its dates (engram before, or the lines without them) stored."""
    home = tmp_path / "home"
    lines = [json.loads(line) for line in (FIXTURES / "mcp-memory-fork.jsonl").read_text().splitlines()]
    plain = tmp_path / "memory.jsonl"
    plain.write_text("".join(json.dumps({k: v for k, v in line.items() if k not in ("createdAt", "updatedAt", "version")})
                             + "\n" for line in lines))
    assert as_json(home, "import", str(plain))["imported"] == 2
    again = as_json(home, "import", str(FIXTURES / "mcp-memory-fork.jsonl"))
    assert (again["imported"], again["skipped"]) == (0, 2), again
    assert as_json(home, "count") == {"count": 2}


def test_mcp_memory_temporal_fork_observation_objects_keep_their_times_and_durability(tmp_path: Path) -> None:
    """``mcp-knowledge-graph``'s temporal server writes each observation it adds as ``{"content",
    "timestamp", "durability"}`` (its Python server: a local time without a zone, read as UTC) and
    leaves an entity it just created with text observations: each observation's text is a line of
    the memory, the memory created at its earliest observation and updated at its latest, and each
    object kept whole, in order, in ``metadata["mcp_memory"]["observations"]``."""
    home = tmp_path / "home"
    source = [json.loads(line) for line in (FIXTURES / "mcp-memory-temporal.jsonl").read_text().splitlines()]
    summary = as_json(home, "import", str(FIXTURES / "mcp-memory-temporal.jsonl"))
    assert (summary["kind"], summary["imported"], summary["warnings"]) == ("mcp-memory", 2, []), summary
    ines, acme = as_json(home, "get", "ines-duarte"), as_json(home, "get", "acme-corp")
    assert ines["content"] == ("Ines Duarte (person)\n- Born in Porto\n- Works at Acme Corp as a field engineer\n"
                               "- Training for the Lisbon half marathon\n- Drinks her bica at Café Tati")
    assert ines["created_at"] == pytest.approx(1748941964.318207)  # 2025-06-03T09:12:44.318207
    assert ines["updated_at"] == pytest.approx(1754120515.871020)  # 2025-08-02T07:41:55.871020
    assert ines["metadata"]["mcp_memory"]["observations"] == source[0]["observations"]
    assert [o["durability"] for o in ines["metadata"]["mcp_memory"]["observations"]] == [
        "permanent", "long-term", "short-term", "temporary"]
    assert ines["metadata"]["relations"] == [{"type": "works_at", "to": "Acme Corp"}]
    # Text observations only: no times of the file's, nothing more kept.
    assert acme["content"] == "Acme Corp (organization)\n- Makes industrial sensors\n- Opened a Lisbon office in 2024"
    assert acme["metadata"]["mcp_memory"] == {"name": "Acme Corp"}
    assert [m["key"] for m in as_json(home, "neighbours", "ines-duarte")] == ["acme-corp"]


def test_mcp_memory_temporal_fork_reimport_finds_what_its_text_observations_stored(tmp_path: Path) -> None:
    """The memory's id is the entity's name's: the file a reference server wrote before the fork
    turned its observations into objects, and the fork's file after, import into the same memories."""
    home = tmp_path / "home"
    lines = [json.loads(line) for line in (FIXTURES / "mcp-memory-temporal.jsonl").read_text().splitlines()]
    plain = tmp_path / "memory.jsonl"
    plain.write_text("".join(json.dumps({**line, "observations": [o["content"] if isinstance(o, dict) else o
                                                                  for o in line["observations"]]}
                                        if "observations" in line else line) + "\n" for line in lines))
    assert as_json(home, "import", str(plain))["imported"] == 2
    again = as_json(home, "import", str(FIXTURES / "mcp-memory-temporal.jsonl"))
    assert (again["imported"], again["skipped"]) == (0, 2), again
    assert as_json(home, "count") == {"count": 2}


def test_letta_code_agent_file_blocks_keep_their_tags(tmp_path: Path) -> None:
    """A Letta Code agent (``letta_v1_agent``) names its blocks by path (``system/human/family``)
    and newer servers give a block ``tags``: each block is one memory tagged with its label and
    its own tags; the user's and assistant's messages arrive at their times (one without a zone
    read as UTC), the reasoning part kept beside the text."""
    home = tmp_path / "home"
    summary = as_json(home, "import", str(FIXTURES / "letta-code.af"))
    assert (summary["kind"], summary["imported"], summary["messages_imported"]) == ("letta", 2, 2), summary
    blocks = {m["key"]: m for m in as_json(home, "--agent", "LettaBot", "list")}
    assert blocks["letta-system-persona-soul"]["tags"] == ["system/persona/soul", "core"]
    assert blocks["letta-system-human-family"]["tags"] == ["system/human/family"]
    assert blocks["letta-system-human-family"]["content"] == "Has a dog named Miso."
    shown = as_json(home, "--agent", "LettaBot", "history", "show", "letta:LettaBot")
    assert [(m["role"], m["content"], m["created_at"]) for m in shown["messages"]] == [
        ("user", "<system-reminder>x</system-reminder>\nHi, I'm Ana from Porto 👋", pytest.approx(1772495880.000001)),
        ("assistant", "Olá Ana!", pytest.approx(1772495885.5))]
    assert shown["messages"][1]["metadata"]["letta"]["reasoning"] == ["Greet her."]


def test_chatgpt_custom_instructions_are_core_memories_once_each(tmp_path: Path) -> None:
    """ChatGPT puts the custom instructions, hidden, at the start of every conversation made while
    they were set (``user_editable_context``), the person's own words in
    ``metadata.user_context_message_data``: each distinct text is one core memory, byte for byte,
    dated by the earliest conversation holding it (the export lists the newest first); a change of
    the text is a memory of its own; ChatGPT's prompt around the words is not kept."""
    home = tmp_path / "home"
    source = FIXTURES / "chatgpt-custom-instructions.json"
    summary = as_json(home, "import", str(source))
    assert (summary["kind"], summary["imported"], summary["messages_imported"]) == ("chatgpt", 3, 3), summary
    assert not any("hidden messages" in w for w in summary["warnings"]), summary["warnings"]
    memories = {m["content"]: m for m in as_json(home, "list")}
    about = memories["Preferred name: Inês\nRole: Backend engineer\nOther Information: I live in Porto and cycle to work 🚲\n"]
    rules = memories["Be concise. Use metric units.  "]
    before = memories["I live in Lisbon."]
    assert (about["category"], about["tags"]) == ("core", ["chatgpt", "custom-instructions", "about-me"])
    assert rules["tags"] == ["chatgpt", "custom-instructions", "how-to-respond"]
    assert about["created_at"] == pytest.approx(1742000000.25) and before["created_at"] == pytest.approx(1741000000.0)
    assert about["metadata"]["chatgpt"] == {"custom_instructions": "about_user_message",
                                            "conversation": "67f0a000-0000-8000-0000-000000000002"}
    again = as_json(home, "import", str(source))
    assert (again["imported"], again["skipped"], again["messages_imported"]) == (0, 3, 0), again


def test_a_chat_export_of_one_conversation_says_so_in_the_singular(tmp_path: Path) -> None:
    export = json.loads((FIXTURES / "chatgpt-custom-instructions.json").read_text(encoding="utf-8"))[:1]
    export[0]["mapping"]["67f0a000-0000-8000-0000-000000000003-ctx"]["message"]["metadata"].pop("user_context_message_data")
    source = tmp_path / "conversations.json"
    source.write_text(json.dumps(export), encoding="utf-8")
    summary = as_json(tmp_path / "home", "import", str(source))
    assert summary["warnings"][0].startswith("1 conversation read; not imported: hidden messages (1)"), summary["warnings"]


@pytest.mark.parametrize("export", [{"results": []}, {"count": 0, "next": None, "previous": None, "results": []},
                                    {"results": [], "relations": []}])
def test_an_empty_mem0_export_imports_nothing_and_names_mem0(tmp_path: Path, export: dict[str, object]) -> None:
    """``get_all`` of a user without memories (OSS, the platform's page, graph memory) is mem0's
    output: it imports nothing, rather than being refused as a malformed engram snapshot."""
    home, source = tmp_path / "home", tmp_path / "mem0.json"
    source.write_text(json.dumps(export), encoding="utf-8")
    summary = as_json(home, "import", str(source))
    assert (summary["kind"], summary["imported"]) == ("mem0", 0), summary
    assert as_json(home, "list") == []


def test_claude_artifacts_and_tool_blocks_left_out_of_a_reply_are_counted(tmp_path: Path) -> None:
    """A Claude.ai reply holding an artifact (a ``tool_use`` named ``artifacts``: the code shown
    beside the reply), a web search and its result and thinking keeps its text blocks; each block
    left out is counted in the warning, not dropped without a word."""
    home, source = tmp_path / "home", tmp_path / "conversations.json"
    reply = [{"type": "thinking", "thinking": "They want a script."},
             {"type": "text", "text": "Here is the script:"},
             {"type": "tool_use", "name": "artifacts", "input": {"id": "backup", "type": "application/vnd.ant.code",
                                                                 "command": "create", "content": "rsync -a src/ dst/\n"}},
             {"type": "tool_use", "name": "web_search", "input": {"query": "rsync flags"}},
             {"type": "tool_result", "name": "web_search", "content": [{"type": "text", "text": "-a: archive"}]},
             {"type": "text", "text": "Run it nightly."}]
    export = [{"uuid": "conv-1", "name": "Backups", "created_at": "2025-02-01T09:00:00.000000Z", "chat_messages": [
        {"uuid": "m1", "sender": "human", "text": "", "created_at": "2025-02-01T09:00:00.000000Z",
         "content": [{"type": "text", "text": "Write me a backup script"}], "attachments": [], "files": []},
        {"uuid": "m2", "sender": "assistant", "text": "", "created_at": "2025-02-01T09:00:09.000000Z",
         "content": reply, "attachments": [], "files": []}]}]
    source.write_text(json.dumps(export), encoding="utf-8")
    summary = as_json(home, "import", str(source))
    assert (summary["kind"], summary["messages_imported"]) == ("claude", 2), summary
    shown = as_json(home, "history", "show", "claude:conv-1")
    assert [m["content"] for m in shown["messages"]] == ["Write me a backup script", "Here is the script:\n\nRun it nightly."]
    warning = "\n".join(summary["warnings"])
    for counted in ("artifacts beside a message's text (1): documents and code Claude.ai showed beside its reply",
                    "tool_use blocks beside a message's text (1)", "tool_result blocks beside a message's text (1)",
                    "thinking blocks beside a message's text (1)"):
        assert counted in warning, warning
