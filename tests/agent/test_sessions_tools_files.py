from __future__ import annotations

import json
import re
import threading

import pytest

from engram.agent.sessions import SessionManager
from engram.agent.tools import MEMORY_TOOLS, MemoryTools
from engram.errors import ValidationError
from engram.files.memory_md import TEMPLATE, ensure_memory_md, read_memory_md
from engram.interfaces.present import versions_dict
from engram.model import ToolCall


# --- sessions ---------------------------------------------------------------------------------
def test_get_or_create_and_idle_eviction(clock):
    made: list[str] = []
    closed: list[str] = []
    manager = SessionManager(lambda sid: made.append(sid) or f"agent-{sid}", clock=clock, on_close=closed.append)
    events: list[tuple[str, str]] = []
    manager.subscribe(lambda e: events.append((e.kind, e.session_id)))
    assert manager.get("a") == "agent-a"      # t=0
    clock.advance(1800)
    assert manager.get("b") == "agent-b"      # t=1800
    clock.advance(1000)
    assert manager.get("b") == "agent-b"      # t=2800: refreshes b, creates nothing
    assert made == ["a", "b"]
    clock.advance(2000)  # t=4800: a idle 4800 s, b idle 2000 s: only a is past the 1 hour default
    assert manager.evict_idle() == ["a"]
    assert "a" not in manager and "b" in manager
    assert events == [("created", "a"), ("created", "b"), ("evicted", "a")]
    assert closed == ["agent-a"]
    assert manager.get("a") == "agent-a" and made == ["a", "b", "a"]
    clock.advance(1)
    assert sorted(manager.evict_idle(max_idle_s=0)) == ["a", "b"]


def test_sessions_thread_safe(clock):
    calls: list[str] = []
    manager = SessionManager(lambda sid: calls.append(sid) or object(), clock=clock)
    threads = [threading.Thread(target=lambda: [manager.get(f"s{i % 5}") for i in range(200)]) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(calls) == [f"s{i}" for i in range(5)]


# --- tools ------------------------------------------------------------------------------------
def call(tools: MemoryTools, name: str, **args):
    return tools.dispatch(ToolCall("c1", name, json.dumps(args)))


def test_schemas_have_ptrclaw_arguments():
    schemas = {t.name: t.parameters for t in MEMORY_TOOLS}
    assert set(schemas["memory_store"]["properties"]) == {"key", "content", "category", "links"}
    assert schemas["memory_store"]["required"] == ["key", "content"]
    assert set(schemas["memory_recall"]["properties"]) == {"query", "limit", "category", "depth"}
    assert schemas["memory_forget"]["required"] == ["key"]
    assert set(schemas["memory_link"]["required"]) == {"action", "from", "to"}
    assert schemas["memory_versions"]["required"] == ["key"] and set(schemas["memory_versions"]["properties"]) == {"key"}


def test_store_recall_link_forget(engram):
    tools = MemoryTools(engram)
    stored = call(tools, "memory_store", key="project-setup", content="Project is set up with uv")
    assert stored.content == "Stored: project-setup"
    result = call(tools, "memory_store", key="python-version", content="Project uses Python 3.12",
                  links=["project-setup", "missing-key"])
    assert result.content == "Stored: python-version (could not link to missing: missing-key)"
    assert engram.get("python-version").category.value == "knowledge"
    updated = call(tools, "memory_store", key="python-version", content="Project uses Python 3.13")
    assert updated.content == "Updated: python-version"
    out = call(tools, "memory_recall", query="Python version", limit=5).content
    assert out.startswith("- python-version (knowledge): Project uses Python 3.13 [links: project-setup]")
    flat = call(tools, "memory_recall", query="Python version", depth=0).content
    deep = call(tools, "memory_recall", query="Python version", depth=1).content
    assert "project-setup" not in flat.split("[links")[0] and "- project-setup" in deep
    assert call(tools, "memory_recall", query="knitting").content == "No matching memories."
    assert call(tools, "memory_link", action="unlink", **{"from": "python-version", "to": "project-setup"}).content \
        == "Unlinked python-version <-> project-setup"
    assert call(tools, "memory_link", action="link", **{"from": "python-version", "to": "project-setup"}).content \
        == "Linked python-version <-> project-setup"
    assert call(tools, "memory_link", action="link", **{"from": "project-setup", "to": "python-version"}).content \
        == "project-setup and python-version were already linked"
    assert call(tools, "memory_forget", key="python-version").content == "Forgot: python-version"
    assert engram.find("python-version") is None
    assert engram.get("project-setup").links == ()


def test_forget_and_link_read_a_key_first_as_the_mcp_tools_do(engram):
    # PtrClaw's tools take keys: a key equal to another memory's id names the keyed memory (the
    # chat tools read an id first, so forgot the other one), and an id still works where no key is.
    tools = MemoryTools(engram)
    plain = engram.remember("A plain memory", key="plain")
    other = engram.remember("The other memory", key="other")
    keyed = engram.remember("Keyed by an id", key=plain.memory.id)
    assert call(tools, "memory_link", action="link", **{"from": plain.memory.id, "to": "other"}).content \
        == f"Linked {plain.memory.id} <-> other"
    assert engram.get(keyed.memory.id).links == (other.memory.id,) and engram.get("plain").links == ()
    assert call(tools, "memory_link", action="unlink", **{"from": other.memory.id, "to": plain.memory.id}).content \
        == f"Unlinked {other.memory.id} <-> {plain.memory.id}"
    assert call(tools, "memory_forget", key=plain.memory.id).content == f"Forgot: {plain.memory.id}"
    assert engram.find(keyed.memory.id) is None and engram.get("plain").content == "A plain memory"
    assert call(tools, "memory_forget", key=other.memory.id).content == "Forgot: other"


def test_versions_reads_earlier_contents_oldest_first_by_key_or_id(engram, clock):
    tools = MemoryTools(engram)
    first = 'Ana\'s "café" ☕:\n\tflat white\r\nno sugar'  # kept byte for byte
    call(tools, "memory_store", key="coffee", content=first)
    clock.advance(10)
    call(tools, "memory_store", key="coffee", content="Ana takes a cortado")
    clock.advance(10)
    call(tools, "memory_store", key="coffee", content="Ana gave up coffee")
    result = call(tools, "memory_versions", key="coffee")
    assert not result.is_error
    said = json.loads(result.content)
    assert [v["content"] for v in said["versions"]] == [first, "Ana takes a cortado"]  # oldest first
    assert said["versions"][0]["content"].encode() == first.encode()
    assert said["versions"][0]["replaced_at"] < said["versions"][1]["replaced_at"]
    # The wire form every door gives (present.versions_dict), by the entry's id as well as its key.
    memory_id = engram.get("coffee").id
    assert json.loads(call(tools, "memory_versions", key=memory_id).content) == versions_dict(engram.versions("coffee"))
    assert engram.get("coffee").content == "Ana gave up coffee"  # reading changed nothing
    call(tools, "memory_store", key="tea", content="Ana likes green tea")
    assert json.loads(call(tools, "memory_versions", key="tea").content) == {"versions": []}  # never changed
    # Its argument missing, the error names both ways to give it, as the docs do ("by key or id"), not a key alone.
    for tool, args in (("memory_versions", {}), ("memory_forget", {"key": " "}),
                       ("memory_link", {"action": "link", "from": "tea"})):
        missing = call(tools, tool, **args)
        assert missing.is_error and "key or its id" in missing.content, missing.content


def test_versions_reads_only_the_calling_agents_memories(engram):
    alice, bob = MemoryTools(engram.for_agent("alice")), MemoryTools(engram.for_agent("bob"))
    call(alice, "memory_store", key="locker", content="Alice's locker code is 4512")
    call(alice, "memory_store", key="locker", content="Alice's locker code is 9981")
    alices = engram.for_agent("alice").get("locker")
    assert [v["content"] for v in json.loads(call(alice, "memory_versions", key="locker").content)["versions"]] == [
        "Alice's locker code is 4512"]
    # Neither by key nor by id does bob reach alice's entry: the same error memory_forget gives.
    for ref in ("locker", alices.id):
        refused, forget = call(bob, "memory_versions", key=ref), call(bob, "memory_forget", key=ref)
        assert refused.is_error and refused.content == forget.content and "not found" in refused.content
        assert "4512" not in refused.content
    # bob's own entry under the same key has its own history.
    call(bob, "memory_store", key="locker", content="Bob has no locker")
    call(bob, "memory_store", key="locker", content="Bob has locker 7")
    assert [v["content"] for v in json.loads(call(bob, "memory_versions", key="locker").content)["versions"]] == [
        "Bob has no locker"]
    assert engram.for_agent("alice").get("locker").content == "Alice's locker code is 9981"


@pytest.mark.parametrize("name, args, problem", [
    ("memory_store", {"content": "x"}, "key: is required"),
    ("memory_store", {"key": "k", "content": "x", "category": "weird"}, "unknown category"),
    ("memory_recall", {"query": "x", "limit": 0}, "limit"),
    ("memory_recall", {"query": "x", "depth": 4}, "depth"),
    ("memory_forget", {"key": "nope"}, "not found"),
    ("memory_versions", {"key": "nope"}, "^error: memory named by key not found: \"nope\"$"),
    ("memory_versions", {}, "key: is required"),
    ("memory_link", {"action": "merge", "from": "a", "to": "b"}, "not found|unknown action"),
    ("memory_explode", {}, "unknown tool"),
    # An argument the tool does not take, null or not (a misspelt category stored in knowledge).
    ("memory_store", {"key": "k", "content": "c", "catgory": "core"},
     r"^error: catgory: is not an argument of memory_store \(allowed: key, content, category, links\)$"),
    ("memory_recall", {"query": "x", "limt": None}, "limt: is not an argument of memory_recall"),
    ("memory_forget", {"key": "k", "erase": True}, r"erase: is not an argument of memory_forget \(allowed: key\)"),
])
def test_bad_calls_become_error_results(engram, name, args, problem):
    result = MemoryTools(engram).dispatch(ToolCall("c", name, json.dumps(args)))
    assert result.is_error
    assert re.search(problem, result.content)
    assert engram.count() == 0


def test_malformed_arguments(engram):
    result = MemoryTools(engram).dispatch(ToolCall("c", "memory_store", "{not json"))
    assert result.is_error and "arguments" in result.content
    with pytest.raises(ValidationError):
        MemoryTools(engram).call("memory_store", "[1, 2]")


# --- MEMORY.md ----------------------------------------------------------------------------------
def test_memory_md_created_and_read_within_limit(tmp_path):
    home = tmp_path / "home"
    path = ensure_memory_md(home)
    assert path.read_text() == TEMPLATE
    assert read_memory_md(home, 1000) == ""  # only the template: nothing to inject
    path.write_text(TEMPLATE + "Always answer in French.\nThe server is called atlas.\n" + "filler line\n" * 50)
    full = read_memory_md(home, 10_000)
    assert full.startswith("Always answer in French.\nThe server is called atlas.")
    short = read_memory_md(home, 60)
    assert short == "Always answer in French.\nThe server is called atlas."
    assert read_memory_md(home, 0) == ""
    ensure_memory_md(home)  # an existing file is never overwritten
    assert "atlas" in path.read_text()
    path.write_text("plain notes without the template")
    assert read_memory_md(home, 100) == "plain notes without the template"


def test_memory_md_saved_with_a_byte_order_mark_keeps_the_template_out(tmp_path):
    # Windows editors save "UTF-8 with BOM": the notes below the template's line are what is
    # injected, not the template's instructions with a U+FEFF in front of them.
    home = tmp_path / "home"
    path = ensure_memory_md(home)
    path.write_bytes(b"\xef\xbb\xbf" + (TEMPLATE + "The server is called atlas.\n").replace("\n", "\r\n").encode())
    assert read_memory_md(home, 1000) == "The server is called atlas."
    path.write_bytes(b"\xef\xbb\xbfplain notes")
    assert read_memory_md(home, 1000) == "plain notes"


def test_recall_takes_the_limit_and_depth_the_mcp_tool_of_its_name_takes(engram):
    # MCP's memory_recall takes limit 1..100 and depth 0..3; chat's tool of the same name refused
    # limit 60 ("1 to 50") and depth 2 ("0 to 1") for the same engine.
    tools = MemoryTools(engram)
    for i in range(60):
        engram.remember(f"garden note {i}", key=f"note-{i}")
    engram.remember("the shed is blue", key="shed", links=["note-0"])
    engram.remember("the shed key is under the pot", key="shed-key", links=["shed"])
    many = call(tools, "memory_recall", query="garden note", limit=60)
    assert not many.is_error and many.content.count("\n- note-") == 59
    limits = next(t for t in MEMORY_TOOLS if t.name == "memory_recall").parameters["properties"]
    assert (limits["limit"]["maximum"], limits["depth"]["maximum"]) == (100, 3)
    one_hop = call(tools, "memory_recall", query="garden note 0", limit=1, depth=1).content
    two_hops = call(tools, "memory_recall", query="garden note 0", limit=1, depth=2)
    assert "- shed (" in one_hop and "- shed-key (" not in one_hop
    assert not two_hops.is_error and "- shed-key (" in two_hops.content
    assert call(tools, "memory_recall", query="garden", limit=101).is_error
    assert call(tools, "memory_recall", query="garden", depth=4).is_error


def test_store_naming_itself_in_links_is_not_called_missing(engram):
    # memory_store stored the entry and said "could not link to missing: self" for an entry that exists.
    tools = MemoryTools(engram)
    stored = call(tools, "memory_store", key="self", content="A note", links=["self", "nowhere"])
    assert stored.content == "Stored: self (could not link to missing: nowhere) (not linked to itself: self)"
    assert engram.get("self").links == ()


def test_store_passes_on_the_writes_warnings_as_the_mcp_tool_does(tmp_path):
    # With memory disabled, memory_store answered "Unchanged: deploy" - the model read its fact as kept.
    from engram.engine import Engram

    with Engram.from_settings(home=tmp_path, backend="disabled", embeddings={"provider": "none"}) as engram:
        said = call(MemoryTools(engram), "memory_store", key="deploy", content="Deploys go out on Tuesdays")
        assert said.content == "Unchanged: deploy (warning: memory is disabled: nothing was stored)"
        assert not said.is_error and engram.count() == 0


def test_null_for_an_optional_argument_is_its_default_as_over_mcp(engram):
    # A model sends null for what it does not mean to set: memory_recall refused limit and depth null
    # ("None is not an integer") while category null was taken as absent. Null is the default for
    # every optional argument, as at the MCP tools of the same names; a required one is refused.
    tools = MemoryTools(engram)
    stored = call(tools, "memory_store", key="shed", content="The shed is blue", category=None, links=None)
    assert not stored.is_error and engram.get("shed").category.value == "knowledge"
    call(tools, "memory_store", key="gate", content="The gate by the shed sticks", links=["shed"])
    for args in ({"limit": None}, {"depth": None}, {"category": None}, {"limit": None, "depth": None, "category": None}):
        result = call(tools, "memory_recall", query="shed", **args)
        assert result == call(tools, "memory_recall", query="shed"), (args, result)
    for name, args, problem in (("memory_recall", {"query": None}, "query: is required"),
                                ("memory_store", {"key": None, "content": "x"}, "key: is required"),
                                ("memory_forget", {"key": None}, "key: is required"),
                                ("memory_link", {"action": "link", "from": "shed", "to": None}, "to: is required")):
        result = call(tools, name, **args)
        assert result.is_error and problem in result.content, (name, args, result)
    assert engram.count() == 2
