"""Letta's Agent File (``.af``) through every door that imports: the installed ``engram import``
command and ``Engram.import_from`` on a real SQLite home. Fixtures are Letta's own example agent
(letta-ai/agent-file's ``memgpt_agent``) reduced by hand, in the current shape (``agents`` /
``blocks`` lists) and the first one (Letta 0.6: ``core_memory`` and ``messages`` at the top).
Checked: blocks arrive as core memories byte for byte, the conversation joins the Letta agent's
history in order with its tool calls, a second run imports nothing, agents stay apart, and a
malformed file names its JSON path and writes nothing. A MemGPT-style agent's packed conversation
arrives unpacked (plain user and reply texts, events reported, what Letta stored kept in metadata)
and is recalled by its exchanges."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from engram.config import load_settings
from engram.engine import Engram
from engram.errors import SnapshotError
from engram.importers.base import agent_name
from tests.importers.test_import_cli import ENGRAM, FIXTURES

AGENT_FILE = FIXTURES / "letta.af"
FIRST_SHAPE = FIXTURES / "letta-0.6.af"
# Letta 0.6.47's export of the classic memgpt_agent (agent-file's memgpt_agent/agent2.af: its boot
# sequence and login event), reduced, with a conversation packed as Letta packs it: user messages
# and events as JSON, replies through send_message, a memory edit asking for a heartbeat.
MEMGPT = FIXTURES / "letta-memgpt.af"


def engram(home: Path, *args: str, code: int = 0, embeddings: str = "none", **env: str) -> Any:
    done = subprocess.run([ENGRAM, "--home", str(home), "--json", *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "ENGRAM_EMBEDDINGS__PROVIDER": embeddings, **env})
    assert done.returncode == code, done.stderr
    return json.loads(done.stdout) if code == 0 else done.stderr


def blocks_of(path: Path) -> dict[str, str]:
    document = json.loads(path.read_text(encoding="utf-8"))
    found = document["blocks"] if "blocks" in document else document["core_memory"]
    return {b["label"]: b["value"] for b in found}


@pytest.mark.parametrize("kind", [None, "letta"])
def test_an_agent_file_becomes_the_agents_core_memories_and_history(tmp_path: Path, kind: str | None) -> None:
    home = tmp_path / "home"
    args = ["import", str(AGENT_FILE), *(["--from", kind] if kind else [])]
    first = engram(home, *args)
    assert (first["kind"], first["imported"], first["messages_imported"]) == ("letta", 2, 4), first
    # The compiled system message, the system prompt, tools and model settings are named as left out.
    assert any("system messages (1)" in w for w in first["warnings"]), first["warnings"]
    assert any("system prompt, 1 tool, llm_config not imported" in w for w in first["warnings"]), first["warnings"]
    again = engram(home, *args)
    assert (again["imported"], again["skipped"], again["messages_imported"], again["messages_skipped"]) == (0, 2, 0, 4)
    # The Letta agent's name is the engram agent: nothing joins the importing one.
    assert engram(home, "list") == [] and engram(home, "history", "list") == []
    memories = {m["key"]: m for m in engram(home, "-a", "memgpt_agent", "list")}
    assert set(memories) == {"letta-human", "letta-persona"}
    human = memories["letta-human"]
    assert human["content"] == blocks_of(AGENT_FILE)["human"]  # byte for byte, leading newline included
    assert (human["category"], human["tags"], human["source"], human["scope"]) == (
        "core", ["human"], "letta", "agent:memgpt_agent")
    assert human["metadata"]["letta"] == {
        "agent": "memgpt_agent", "label": "human", "block": "block-0", "limit": 20000,
        "description": "The human block: Stores key details about the person you are conversing with, allowing for "
                       "more personalized and friend-like conversation."}
    shown = engram(home, "-a", "memgpt_agent", "history", "show", "letta:memgpt_agent")["messages"]
    assert [m["role"] for m in shown] == ["user", "assistant", "tool", "assistant"]
    assert shown[0]["content"] == "Hi Sam! I went sailing on the Bay again — Sundays are my sailing days. 🌊"
    assert shown[0]["created_at"] == pytest.approx(1761951430.12)  # 2025-10-31T22:57:10.12+00:00
    assert shown[1]["tool_calls"] == [{"id": "call_Q7pA9", "name": "core_memory_append",
                                       "arguments": '{"label": "human", "content": "Sails on the Bay on Sundays"}'}]
    assert shown[2]["tool_call_id"] == "call_Q7pA9" and shown[2]["metadata"]["letta"]["name"] == "core_memory_append"
    assert shown[3]["metadata"] == {"letta": {"id": "message-4"}}


def test_the_first_agent_file_shape_with_its_blocks_inline(tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = engram(home, "import", str(FIRST_SHAPE))
    assert (first["kind"], first["imported"], first["messages_imported"]) == ("letta", 2, 2), first
    human = engram(home, "-a", "memgpt_agent", "get", "letta-human")
    assert human["content"] == "First name: Ana Lucía\nLanguage: español\n"
    assert (human["created_at"], human["updated_at"]) == (1743479239.0, 1743479282.0)  # 03:47:19 and 03:48:02 UTC
    assert human["metadata"]["letta"] == {"agent": "memgpt_agent", "label": "human", "limit": 5000}
    shown = engram(home, "-a", "memgpt_agent", "history", "show", "letta:memgpt_agent")["messages"]
    # MemGPT's packed user message and its send_message reply arrive unpacked (see the MemGPT tests below).
    assert [(m["role"], m["content"]) for m in shown] == [
        ("user", "hola, soy Ana"), ("assistant", "Hola Ana, ¡bienvenida! ¿En qué te ayudo hoy?")]
    assert engram(home, "import", str(FIRST_SHAPE))["skipped"] == 2


def test_into_agent_and_each_agent_its_own_copy(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for agent in ("alice", "bob"):
        done = engram(home, "-a", agent, "import", str(AGENT_FILE), "--into-agent")
        assert (done["imported"], done["messages_imported"]) == (2, 4), done
    assert engram(home, "-a", "alice", "import", str(AGENT_FILE), "--into-agent")["skipped"] == 2
    for agent in ("alice", "bob"):
        assert {m["scope"] for m in engram(home, "-a", agent, "list")} == {f"agent:{agent}"}
        assert len(engram(home, "-a", agent, "history", "show", "letta:memgpt_agent")["messages"]) == 4
    assert engram(home, "-a", "memgpt_agent", "list") == []


LONG = ("Ünïcödé 🧠 — 漢字テキスト, RTL עברית, e\u0301 combining, tab\tand CRLF\r\n" * 120)[:7990] + "  \n"


def test_library_import_round_trips_contents_byte_for_byte(tmp_path: Path) -> None:
    document = json.loads(AGENT_FILE.read_text(encoding="utf-8"))
    document["blocks"][0]["value"] = LONG
    document["agents"][0]["messages"][1]["content"][0]["text"] = LONG * 3
    document["agents"][0]["name"] = "Sam the Agent"  # not an engram name: usable characters plus a digest
    text = json.dumps(document, ensure_ascii=False)
    settings = load_settings(home=tmp_path, embeddings={"provider": "none"})
    with Engram.from_settings(settings) as mem:
        # Some exports hold the document once more as a JSON string: read the same.
        summary = mem.import_from(json.dumps(text))
        assert (summary.kind, summary.imported, summary.messages_imported) == ("letta", 2, 4), summary
        assert mem.import_from(text, "letta").skipped == 2
        agent = agent_name("Sam the Agent", "name")
        assert agent is not None and agent.startswith("Sam-the-Agent-")
        sam = mem.for_agent(agent)
        assert sam.get("letta-human").content == LONG
        assert sam.history.all(f"letta:{agent}")[0].content == LONG * 3
        assert mem.list() == []


def test_a_nameless_agent_is_its_own_engram_agent_named_by_its_letta_id(tmp_path: Path) -> None:
    # Letta always names an agent; a file edited by hand may not. Such an agent does not join the
    # importing one: its Letta id names it, by the naming rule of every importer.
    document = json.loads(AGENT_FILE.read_text(encoding="utf-8"))
    del document["agents"][0]["name"]
    document["agents"][0]["id"] = "agent 0"  # not an engram name: usable characters plus a digest
    settings = load_settings(home=tmp_path, embeddings={"provider": "none"})
    with Engram.from_settings(settings) as mem:
        summary = mem.import_from(json.dumps(document), "letta")
        agent = agent_name("agent 0", "id")
        assert agent is not None and agent.startswith("agent-0-")
        assert any(f"imported as agent {agent!r}" in w for w in summary.warnings), summary.warnings
        assert mem.list() == [] and mem.history.conversations() == []
        theirs = mem.for_agent(agent)
        assert theirs.get("letta-human").content == blocks_of(AGENT_FILE)["human"]
        assert theirs.history.all(f"letta:{agent}")
        assert mem.import_from(json.dumps(document), "letta").skipped == 2  # the same agent again


MALFORMED = [
    (AGENT_FILE, lambda d: d["agents"][0]["messages"][3].update(role="robot"),
     'agents[0].messages[3].role: "robot" is not a Letta message role'),
    (AGENT_FILE, lambda d: d["agents"][0]["messages"][4].update(created_at="soon"), "agents[0].messages[4].created_at"),
    (AGENT_FILE, lambda d: d["blocks"][1].update(value=5), "blocks[1].value: got 5 (a number)"),
    (AGENT_FILE, lambda d: d["agents"][0]["block_ids"].append("block-9"), 'agents[0].block_ids[2]: "block-9" names no block'),
    (AGENT_FILE, lambda d: d["agents"][0]["messages"][2]["tool_calls"][0].pop("id"), "agents[0].messages[2].tool_calls.id"),
    (FIRST_SHAPE, lambda d: d["messages"][1]["content"][0].update(text=None), "messages[1].content[0].text"),
    (FIRST_SHAPE, lambda d: d["core_memory"][0].update(value="x" * 9000),
     "core_memory[0].value: the 'persona' block of memgpt_agent is 9000 characters; the maximum is 8000"),
]


@pytest.mark.parametrize(("source", "change", "named"), MALFORMED)
def test_a_malformed_agent_file_names_the_json_path_and_writes_nothing(tmp_path: Path, source: Path, change: Any,
                                                                      named: str) -> None:
    document = json.loads(source.read_text(encoding="utf-8"))
    change(document)
    path = tmp_path / "agent.af"
    path.write_text(json.dumps(document), encoding="utf-8")
    home = tmp_path / "home"
    assert named in engram(home, "import", str(path), code=2)
    assert engram(home, "-a", "memgpt_agent", "list") == []
    assert engram(home, "-a", "memgpt_agent", "history", "list") == []


def test_a_tool_result_without_its_call_is_reported_not_imported(tmp_path: Path) -> None:
    document = json.loads(AGENT_FILE.read_text(encoding="utf-8"))
    del document["agents"][0]["messages"][2]  # Letta's export starts after the call (its 50 newest messages)
    with Engram.from_settings(load_settings(home=tmp_path, embeddings={"provider": "none"})) as mem:
        summary = mem.import_from(json.dumps(document))
        assert summary.messages_imported == 2
        assert "agents[0].messages[2]: the tool result for 'call_Q7pA9' has no call before it; not imported" \
            in summary.warnings
        with pytest.raises(SnapshotError, match=r"^document: no Letta agent"):
            mem.import_from('{"agents": "none", "blocks": []}', "letta")


def test_archival_passages_and_parallel_tool_returns(tmp_path: Path) -> None:
    # The format does not carry archival passages yet: a file that does, with Letta's passage fields.
    document = json.loads(AGENT_FILE.read_text(encoding="utf-8"))
    agent = document["agents"][0]
    agent["passages"] = [{"id": "passage-0", "text": "Chad's boat is a 22-foot sloop called Yak ⛵",
                          "created_at": "2025-10-30T09:00:00+00:00", "tags": ["boats"], "metadata": {"source": "chat"}}]
    second = {**agent["messages"][2]["tool_calls"][0], "id": "call_R8"}
    agent["messages"][2]["tool_calls"].append(second)
    agent["messages"][3]["content"] = []  # Letta v1 keeps parallel results in tool_returns
    agent["messages"][3]["tool_returns"].append({"tool_call_id": "call_R8", "status": "success", "func_response": "ok"})
    with Engram.from_settings(load_settings(home=tmp_path, embeddings={"provider": "none"})) as mem:
        summary = mem.import_from(json.dumps(document))
        assert (summary.imported, summary.messages_imported) == (3, 5), summary
        sam = mem.for_agent("memgpt_agent")
        [boat] = [m for m in sam.list() if m.category.value == "knowledge"]
        assert (boat.content, boat.tags, boat.created_at) == ("Chad's boat is a 22-foot sloop called Yak ⛵", ("boats",),
                                                             1761814800.0)
        assert boat.metadata == {"source": "chat", "letta": {"agent": "memgpt_agent", "passage": "passage-0"}}
        results = [(m.tool_call_id, m.content) for m in sam.history.all("letta:memgpt_agent") if m.role.value == "tool"]
        assert results[1] == ("call_R8", "ok") and results[0][0] == "call_Q7pA9"
        assert mem.import_from(json.dumps(document)).skipped == 3


def packed_text(message: dict[str, Any]) -> str:
    return message["content"][0]["text"]


def test_a_memgpt_agent_arrives_as_the_conversation_it_had(tmp_path: Path) -> None:
    home = tmp_path / "home"
    source = json.loads(MEMGPT.read_text(encoding="utf-8"))["messages"]
    first = engram(home, "import", str(MEMGPT))
    assert (first["imported"], first["messages_imported"]) == (2, 7), first
    # Heartbeats, the login event and the system alert are MemGPT's events to the agent: counted, not imported.
    assert any("system messages (1), login events (1), heartbeats (2), system alerts (1)" in w
               for w in first["warnings"]), first["warnings"]
    shown = engram(home, "-a", "memgpt_agent", "history", "show", "letta:memgpt_agent")["messages"]
    assert [(m["role"], m["content"]) for m in shown] == [
        ("assistant", "More human than human is our motto."),
        ("user", "Hi Sam, I'm Chad. I sail on the Bay most Sundays ⛵"),
        ("assistant", "Chad sails on Sundays. Worth remembering."),  # a memory edit stays a tool call
        ("tool", packed_text(source[6])),
        ("assistant", "Nice to meet you, Chad! Sundays on the Bay sound wonderful. What do you sail?"),
        ("user", "A 22-foot sloop called Yak. Dinner at Taste of the Himalayas after, always."),
        ("assistant", "A sloop named Yak, I love that. Dal after a day on the water sounds perfect.")]
    assert [m["created_at"] for m in shown][1] == pytest.approx(1743479285.112)  # the message's time, 03:48:05.112 UTC
    assert [c["name"] for c in shown[2]["tool_calls"]] == ["core_memory_append"] and shown[3]["tool_call_id"]
    assert not shown[4].get("tool_calls")
    # What Letta stored is kept: the packed text; the monologue, the call and the folded result.
    assert shown[1]["metadata"]["letta"] == {"raw": packed_text(source[4])}
    call = source[8]["tool_calls"][0]
    assert shown[4]["metadata"]["letta"] == {
        "reasoning": ["Saved. Now greet him warmly."],
        "raw": {"content": "Saved. Now greet him warmly.",
                "tool_calls": [{"id": call["id"], "name": "send_message", "arguments": call["function"]["arguments"]}],
                "results": [{"name": "send_message", "tool_call_id": call["id"], "content": packed_text(source[9]),
                             "created_at": "2025-04-01T03:48:09.131000"}]}}
    assert json.loads(call["function"]["arguments"])["request_heartbeat"] is False
    again = engram(home, "import", str(MEMGPT))
    assert (again["imported"], again["messages_imported"], again["messages_skipped"]) == (0, 0, 7), again


def test_recall_finds_an_exchange_of_an_imported_memgpt_conversation(tmp_path: Path) -> None:
    # History indexes an exchange when an assistant message without tool calls answers a user
    # message; imports append through it, so with embeddings on the imported exchanges are recalled.
    home = tmp_path / "home"
    assert engram(home, "import", str(MEMGPT), embeddings="local")["messages_imported"] == 7
    settings = load_settings(home=home, embeddings={"provider": "local"})
    with Engram.from_settings(settings) as mem:
        history = mem.for_agent("memgpt_agent").history
        # Both exchanges, in plain text: the user's words and the reply sent, heartbeat and tool traffic aside.
        indexed = history.semantic_recall("sailing", key="letta:memgpt_agent", top_k=5).exchanges
        assert [(e.user, e.assistant) for e in indexed] == [
            ("Hi Sam, I'm Chad. I sail on the Bay most Sundays ⛵",
             "Nice to meet you, Chad! Sundays on the Bay sound wonderful. What do you sail?"),
            ("A 22-foot sloop called Yak. Dinner at Taste of the Himalayas after, always.",
             "A sloop named Yak, I love that. Dal after a day on the water sounds perfect.")]
        found = history.semantic_recall("which restaurant after a day on the water", key="letta:memgpt_agent", top_k=1)
        assert [e.user for e in found.exchanges] == [indexed[1].user]


def test_only_an_unambiguous_packing_is_unpacked(tmp_path: Path) -> None:
    document = json.loads(MEMGPT.read_text(encoding="utf-8"))
    messages = document["messages"]
    unknown = '{\n  "type": "user_liked_message",\n  "message": "👍",\n  "time": "2025-03-31 08:48:05 PM PDT-0700"\n}'
    messages[4]["content"][0]["text"] = unknown  # a type Letta does not pack: verbatim
    messages[7]["content"][0]["text"] = '{"type": "heartbeat", "reason": "no time"}'  # not Letta's shape: verbatim
    broken = '{"type": "user_message", "message": "A 22-foot sloop'
    messages[10]["content"][0]["text"] = broken  # not JSON: verbatim
    messages[11]["tool_calls"][0]["function"]["arguments"] = '["A sloop named Yak"]'  # not an object: the call stays
    with Engram.from_settings(load_settings(home=tmp_path, embeddings={"provider": "none"})) as mem:
        summary = mem.import_from(json.dumps(document))
        shown = [(m.role.value, m.content) for m in mem.for_agent("memgpt_agent").history.all("letta:memgpt_agent")]
    assert shown == [
        ("assistant", "More human than human is our motto."),
        ("user", unknown),
        ("assistant", "Chad sails on Sundays. Worth remembering."),
        ("tool", packed_text(messages[6])),
        ("user", '{"type": "heartbeat", "reason": "no time"}'),
        ("assistant", "Nice to meet you, Chad! Sundays on the Bay sound wonderful. What do you sail?"),
        ("user", broken),
        ("assistant", "His boat is Yak. Lovely ritual."),
        ("tool", packed_text(messages[12]))]
    assert any("login events (1), system alerts (1), heartbeats (1)" in w for w in summary.warnings), summary.warnings


def test_a_conversation_imported_raw_before_is_left_alone_and_purging_brings_the_unpacked_one(tmp_path: Path) -> None:
    # Before unpacking, the importer appended each message as Letta held it (system messages aside).
    document = json.loads(MEMGPT.read_text(encoding="utf-8"))
    key = "letta:memgpt_agent"
    with Engram.from_settings(load_settings(home=tmp_path, embeddings={"provider": "none"})) as mem:
        history = mem.for_agent("memgpt_agent").history
        for m in document["messages"][1:]:
            calls = [{"id": c["id"], "name": c["function"]["name"], "arguments": c["function"]["arguments"]}
                     for c in m["tool_calls"]]
            history.append(key, m["role"], packed_text(m), tool_calls=calls or None, tool_call_id=m["tool_call_id"],
                           created_at=datetime.fromisoformat(m["created_at"]).replace(tzinfo=UTC).timestamp())
        raw = history.all(key)
        # Importing again adds nothing beside the raw messages: history is append-only in time, and
        # each unpacked message is older than the conversation's newest.
        again = mem.import_from(MEMGPT)
        assert (again.messages_imported, again.messages_skipped) == (0, 7), again
        assert history.all(key) == raw
        history.purge(key)
        fresh = mem.import_from(MEMGPT)
        assert (fresh.messages_imported, fresh.messages_skipped) == (7, 0)
        assert [m.content for m in history.all(key) if m.role.value == "user"] == [
            "Hi Sam, I'm Chad. I sail on the Bay most Sundays ⛵",
            "A 22-foot sloop called Yak. Dinner at Taste of the Himalayas after, always."]


def two_agents_named_alike() -> dict[str, Any]:
    """letta.af with a second agent named like the first (``memgpt_agent``): its own human block and
    one exchange of its own."""
    document = json.loads(AGENT_FILE.read_text(encoding="utf-8"))
    first = document["agents"][0]
    document["blocks"].append({**document["blocks"][0], "id": "block-2", "value": "First name: Dana\nSails: never\n"})
    user, reply = (json.loads(json.dumps(first["messages"][i])) for i in (1, 4))
    user["content"][0]["text"], user["id"] = "Hello, I'm Dana. I prefer hiking to sailing.", "message-5"
    reply["content"][0]["text"], reply["id"] = "Hiking it is, Dana.", "message-6"
    document["agents"].append({**first, "id": "agent-1", "block_ids": ["block-2", "block-1"],
                               "messages": [first["messages"][0], user, reply]})
    return document


def test_two_agents_with_one_name_stay_apart_and_a_reimport_maps_them_the_same(tmp_path: Path) -> None:
    path = tmp_path / "agents.af"
    path.write_text(json.dumps(two_agents_named_alike()), encoding="utf-8")
    home = tmp_path / "home"
    first = engram(home, "import", str(path))
    assert (first["imported"], first["messages_imported"], first["agents"]) == (
        4, 6, ["memgpt_agent", "memgpt_agent-2"]), first
    assert ("agents[1] (memgpt_agent): agents[0] has that name too; kept apart as agent 'memgpt_agent-2' (its "
            "memories and conversation letta:memgpt_agent-2); by order in the file, so importing this file again "
            "maps it the same way") in first["warnings"], first["warnings"]
    # Each its own blocks (the persona block both name is a memory of each) and its own conversation.
    for agent, who, said in (("memgpt_agent", "Chad", "Hi Sam!"), ("memgpt_agent-2", "Dana", "I'm Dana")):
        assert {m["key"] for m in engram(home, "-a", agent, "list")} == {"letta-human", "letta-persona"}
        assert f"First name: {who}" in engram(home, "-a", agent, "get", "letta-human")["content"]
        shown = engram(home, "-a", agent, "history", "show", f"letta:{agent}")["messages"]
        assert said in shown[0]["content"] and len(shown) == (4 if who == "Chad" else 2), shown
    again = engram(home, "import", str(path))
    assert (again["imported"], again["skipped"], again["messages_imported"], again["messages_skipped"],
            again["agents"]) == (0, 4, 0, 6, ["memgpt_agent", "memgpt_agent-2"]), again
    assert engram(home, "-a", "memgpt_agent-3", "list") == []


def summary_alert(text: str, time: str, counts: bool = True) -> dict[str, Any]:
    """A user message holding MemGPT's packed summary (Letta's package_summarize_message, or its
    ``_no_counts`` form), as Letta stores it after summarising the messages it moved out of context."""
    hidden = "prior messages (6 of 15 total messages) have" if counts else "prior messages have"
    previous = "the previous 6 messages" if counts else "the previous messages"
    packed = {"type": "system_alert", "time": "2025-03-31 08:55:00 PM PDT-0700",
              "message": f"Note: {hidden} been hidden from view due to conversation memory constraints.\n"
                         f"The following is a summary of {previous}:\n {text}"}
    return {"role": "user", "content": [{"type": "text", "text": json.dumps(packed, indent=2)}], "tool_calls": [],
            "tool_call_id": None, "created_at": time}


OLDER = "Sam booted and greeted Chad."
NEWER = "Chad, a PhD student at Berkeley, sails a 22-foot sloop called Yak on the Bay on Sundays ⛵"


def test_the_latest_memgpt_summary_becomes_the_conversations_summary(tmp_path: Path) -> None:
    document = json.loads(MEMGPT.read_text(encoding="utf-8"))
    # An older summary early on, the newer one after the conversation (beside the alert that hid
    # messages without summarising them, which stays a system alert).
    document["messages"][4:4] = [summary_alert(OLDER, "2025-04-01T03:47:30")]
    document["messages"].append(summary_alert(NEWER, "2025-04-01T04:50:00", counts=False))
    path = tmp_path / "agent.af"
    path.write_text(json.dumps(document), encoding="utf-8")
    home = tmp_path / "home"
    first = engram(home, "import", str(path))
    assert (first["messages_imported"], first["summaries_imported"]) == (7, 1), first
    assert ("messages[16]: Letta's summary of the messages before it is imported as the summary of "
            "letta:memgpt_agent (engram history summary letta:memgpt_agent), not as a message; the 1 older summary "
            "is left out, as the latest covers them; the messages the file holds are imported as they are"
            ) in first["warnings"], first["warnings"]
    assert any("system messages (1), login events (1), heartbeats (2), system alerts (1)" in w
               for w in first["warnings"]), first["warnings"]
    assert engram(home, "-a", "memgpt_agent", "history", "summary", "letta:memgpt_agent")["summary"] == NEWER
    shown = engram(home, "-a", "memgpt_agent", "history", "show", "letta:memgpt_agent")["messages"]
    assert len(shown) == 7 and not any("summary" in m["content"] for m in shown)
    again = engram(home, "import", str(path))
    assert (again["summaries_imported"], again["summaries_skipped"], again["messages_imported"]) == (0, 1, 0), again
    assert not any("already has another summary" in w for w in again["warnings"]), again["warnings"]
    # A summary engram holds already (its own compaction since, say) is kept, and the import says so.
    engram(home, "-a", "memgpt_agent", "history", "summary", "letta:memgpt_agent", "--set", "engram's own")
    third = engram(home, "import", str(path))
    assert any("letta:memgpt_agent (agent memgpt_agent) already has another summary in engram, kept" in w
               for w in third["warnings"]), third["warnings"]
    assert engram(home, "-a", "memgpt_agent", "history", "summary", "letta:memgpt_agent")["summary"] == "engram's own"


def test_blocks_longer_than_max_content_chars_are_all_named_with_the_setting_to_raise(tmp_path: Path) -> None:
    # Letta's blocks hold up to their limit (20000 here); engram's memories 8000 characters by default.
    document = json.loads(AGENT_FILE.read_text(encoding="utf-8"))
    human, persona = ("Chad " * 2400)[:12000], "I am Sam. " * 900
    document["blocks"][0]["value"], document["blocks"][1]["value"] = human, persona
    path = tmp_path / "agent.af"
    path.write_text(json.dumps(document), encoding="utf-8")
    home = tmp_path / "home"
    error = engram(home, "import", str(path), code=2)
    assert ("blocks[0].value: the 'human' block of memgpt_agent is 12000 characters; the maximum is 8000; 1 more too "
            "long: blocks[1].value (the 'persona' block of memgpt_agent, 9000 characters) (allowed: raise "
            "max_content_chars to 12000 or more (ENGRAM_MAX_CONTENT_CHARS=12000, or max_content_chars = 12000 in "
            "engram's config file) and import again; nothing was imported)") in " ".join(error.split()), error
    assert engram(home, "-a", "memgpt_agent", "list") == []
    assert engram(home, "-a", "memgpt_agent", "history", "list") == []
    # Raised as the error says, the import brings both blocks whole.
    done = engram(home, "import", str(path), ENGRAM_MAX_CONTENT_CHARS="12000")
    assert (done["imported"], done["messages_imported"]) == (2, 4), done
    got = engram(home, "-a", "memgpt_agent", "get", "letta-human", ENGRAM_MAX_CONTENT_CHARS="12000")["content"]
    assert got == human
