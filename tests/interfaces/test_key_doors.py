"""A key that equals another memory's id still names its own memory when given as a key: ``engram
get/update/forget --key`` (the CLI as a real process) and MCP's ``key`` argument of get, update and
forget (the SDK's client over streamable HTTP) always read a key, as HTTP's ``/by-key?key=`` and
``Engram.get_by_key`` do, while a bare ref keeps reading an id first. Another agent reaches none of it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from mcp import Client

from tests.interfaces.conftest import Served
from tests.interfaces.test_mcp import _data, _error_text, _http
from tests.unit.test_cli import engram


def _json(home: Path, *args: str, agent: str = "alice") -> dict:
    done = engram(home, "--agent", agent, "--json", *args)
    assert done.returncode == 0, (args, done.stderr)
    return json.loads(done.stdout)


def test_cli_key_option_always_reads_a_key(isolated_home: Path) -> None:
    first = _json(isolated_home, "remember", "the first", "--key", "first")["memory"]["id"]
    shadow = _json(isolated_home, "remember", "named after an id", "--key", first)["memory"]["id"]
    bobs = _json(isolated_home, "remember", "bob's own", "--key", first, agent="bob")["memory"]["id"]

    assert _json(isolated_home, "get", first)["id"] == first  # a bare ref is an id first
    assert _json(isolated_home, "get", "--key", first)["id"] == shadow
    assert _json(isolated_home, "get", "--key", first, agent="bob")["id"] == bobs  # never alice's
    changed = _json(isolated_home, "update", "--key", first, "--content", "renamed shadow")["memory"]
    assert changed["id"] == shadow and _json(isolated_home, "get", first)["content"] == "the first"
    both = engram(isolated_home, "get", first, "--key", first)
    assert both.returncode == 2 and "exactly one of ref, --key" in both.stderr, both.stderr
    for command in (("get",), ("update", "--content", "x"), ("forget",)):
        missing = engram(isolated_home, *command, "--key", "no-such-key")
        assert missing.returncode == 3 and "no-such-key" in missing.stderr, (command, missing.stderr)
    dry = _json(isolated_home, "forget", "--key", first, "--dry-run")
    assert [m["id"] for m in dry["removed"]] == [shadow]
    assert [m["id"] for m in _json(isolated_home, "forget", "--key", first, agent="bob")["removed"]] == [bobs]
    assert [m["id"] for m in _json(isolated_home, "forget", "--key", first)["removed"]] == [shadow]
    assert _json(isolated_home, "get", first)["content"] == "the first"  # the id's own memory stays
    assert engram(isolated_home, "get", "--key", first).returncode == 3


def test_mcp_key_argument_always_reads_a_key(served: Served) -> None:
    async def run() -> None:
        async with Client(_http(served, served.alice)) as alice, Client(_http(served, served.bob)) as bob:
            first = _data(await alice.call_tool("remember", {"content": "the first", "key": "first"}))["memory_id"]
            shadow = _data(await alice.call_tool("remember", {"content": "named after an id", "key": first}))["memory_id"]

            assert _data(await alice.call_tool("get", {"memory_id": first}))["id"] == first
            assert _data(await alice.call_tool("get", {"key": first}))["id"] == shadow
            changed = _data(await alice.call_tool("update", {"key": first, "content": "renamed shadow"}))
            assert changed["memory_id"] == shadow
            assert _data(await alice.call_tool("get", {"memory_id": first}))["content"] == "the first"
            for tool, args in (("get", {"memory_id": first, "key": first}), ("get", {}),
                               ("update", {"memory_id": first, "key": first, "content": "x"})):
                text = _error_text(await alice.call_tool(tool, args))
                assert f"invalid {tool}:" in text and "exactly one of memory_id, key" in text, text
            # bob sees neither: a key he does not hold is not found, whatever alice stored under it.
            for tool, args in (("get", {"key": first}), ("update", {"key": first, "content": "hijacked"}),
                               ("forget", {"key": first, "reason": "mine now"})):
                assert "not found" in _error_text(await bob.call_tool(tool, args)), tool
            dry = _data(await alice.call_tool("forget", {"key": first, "dry_run": True}))
            assert dry["forgotten"] == [shadow] and dry["dry_run"]
            assert _data(await alice.call_tool("forget", {"key": first, "reason": "test"}))["forgotten"] == [shadow]
            assert _data(await alice.call_tool("get", {"memory_id": first}))["content"] == "the first"

    asyncio.run(run())
    assert served.engram.for_agent("alice").get_by_key("first").content == "the first"


def _ids(memories: list[dict]) -> list[str]:
    return [m["id"] for m in memories]


def test_cli_link_unlink_supersede_and_neighbours_take_either_end_by_key(isolated_home: Path) -> None:
    first = _json(isolated_home, "remember", "the first", "--key", "first")["memory"]["id"]
    shadow = _json(isolated_home, "remember", "named after an id", "--key", first)["memory"]["id"]
    other = _json(isolated_home, "remember", "the other", "--key", "other")["memory"]["id"]
    bobs = _json(isolated_home, "remember", "bob's own other", "--key", "other", agent="bob")["memory"]["id"]

    assert _json(isolated_home, "link", "--key", first, "--to-key", "other") == {"linked": [first, "other"], "changed": True}
    # Again, from the other end: nothing changes, and the command says so.
    assert _json(isolated_home, "link", "other", "--to-key", first) == {"linked": ["other", first], "changed": False}
    assert _ids(_json(isolated_home, "neighbours", "--key", first)) == [other]
    assert _json(isolated_home, "neighbours", first) == []  # a bare ref is an id first: the first has no link
    assert _json(isolated_home, "unlink", "other", "--to-key", first) == {"unlinked": True}
    # A REF fills the end not named by key: here the second.
    assert _json(isolated_home, "link", "--key", first, first) == {"linked": [first, first], "changed": True}
    assert _ids(_json(isolated_home, "neighbours", "--key", first)) == [first]
    closed = _json(isolated_home, "supersede", "--key", first, "--by-key", "other")
    assert closed["id"] == shadow and closed["superseded_by"] == other

    # Bad input names the argument (as --help names it: a, b, old, new, ref) or the option, and changes nothing.
    for args, code, said in (
        (("link", "other", first, "--key", "other"), 2, "a or --key, b or --to-key"),  # three memories for two ends
        (("link", "other"), 2, "exactly one of b, --to-key"),
        (("unlink", "--to-key", "other"), 2, "exactly one of a, --key"),
        (("supersede", "other"), 2, "exactly one of new, --by-key"),
        (("supersede", "--by-key", "other"), 2, "exactly one of old, --key"),
        (("neighbours",), 2, "exactly one of ref, --key"),
        (("link", "", "other"), 2, "a: must not be empty"),
        (("link", "--key", "other", " "), 2, "b: must not be empty"),  # the REF fills the second end
        (("supersede", "other", ""), 2, "new: must not be empty"),
        (("link", "--key", "no-such-key", "other"), 3, "--key"),
        # A REF no memory answers to reads as it always did: no option of the user's to name.
        (("link", "other", "no-such"), 3, 'memory not found: "no-such"'),
        (("get", "no-such"), 3, 'memory not found: "no-such"'),
        (("supersede", "other", "--by-key", "no-such-key"), 3, "--by-key"),
    ):
        done = engram(isolated_home, "--agent", "alice", *args)
        assert done.returncode == code and said in done.stderr, (args, done.stderr)
    assert _json(isolated_home, "get", "other")["superseded_by"] is None
    # bob never resolves alice's keys, only his own.
    for args in (("link", "--key", first, "--to-key", "other"), ("unlink", "other", "--to-key", first),
                 ("supersede", "--key", "other", "--by-key", first), ("neighbours", "--key", first)):
        done = engram(isolated_home, "--agent", "bob", *args)
        assert done.returncode == 3 and first in done.stderr, (args, done.stderr)
    kept = _json(isolated_home, "get", "--key", "other", agent="bob")
    assert kept["id"] == bobs and kept["links"] == [] and kept["superseded_by"] is None
    assert _ids(_json(isolated_home, "neighbours", "--key", first)) == [first]  # alice's link stays


def test_mcp_link_and_supersede_take_either_end_by_key(served: Served) -> None:
    async def run() -> None:
        async with Client(_http(served, served.alice)) as alice, Client(_http(served, served.bob)) as bob:
            first = _data(await alice.call_tool("remember", {"content": "the first", "key": "first"}))["memory_id"]
            shadow = _data(await alice.call_tool("remember", {"content": "named after an id", "key": first}))["memory_id"]
            other = _data(await alice.call_tool("remember", {"content": "the other", "key": "other"}))["memory_id"]
            bobs = _data(await bob.call_tool("remember", {"content": "bob's own other", "key": "other"}))["memory_id"]

            linked = _data(await alice.call_tool("link", {"source_key": first, "target_key": "other"}))
            assert linked == {"action": "link", "from": first, "to": "other", "changed": True}
            assert _data(await alice.call_tool("get", {"key": first}))["links"] == [other]
            assert _data(await alice.call_tool("get", {"memory_id": first}))["links"] == []  # an id first
            unlinked = _data(await alice.call_tool("link", {"source": "other", "target_key": first,
                                                           "action": "unlink"}))
            assert unlinked["changed"] and _data(await alice.call_tool("get", {"key": first}))["links"] == []
            closed = _data(await alice.call_tool("supersede", {"old_key": first, "new": "other"}))
            assert closed["id"] == shadow and closed["superseded_by"] == other

            # Bad input names the tool's own arguments and changes nothing.
            for tool, args, said in (
                ("link", {"source": "other", "source_key": "other", "target": first}, "exactly one of source, source_key"),
                ("link", {"source": "other"}, "exactly one of target, target_key"),
                ("link", {"target": "other", "action": "unlink"}, "exactly one of source, source_key"),
                ("supersede", {"old": "other", "new": first, "new_key": first}, "exactly one of new, new_key"),
                ("supersede", {"new": "other"}, "exactly one of old, old_key"),
                ("link", {"source": "other", "target_key": "no-such-key"}, "target_key"),
                ("supersede", {"old_key": "no-such-key", "new": first}, "old_key"),
            ):
                text = _error_text(await alice.call_tool(tool, args))
                assert said in text, (tool, args, text)
            assert _data(await alice.call_tool("get", {"key": "other"}))["links"] == []
            assert _data(await alice.call_tool("get", {"memory_id": first}))["superseded_by"] is None
            # bob resolves none of alice's keys, only his own.
            for tool, args in (("link", {"source_key": first, "target_key": "other"}),
                               ("link", {"source_key": "other", "target_key": first, "action": "unlink"}),
                               ("supersede", {"old_key": "other", "new_key": first})):
                assert "not found" in _error_text(await bob.call_tool(tool, args)), (tool, args)
            kept = _data(await bob.call_tool("get", {"key": "other"}))
            assert kept["id"] == bobs and kept["links"] == [] and kept["superseded_by"] is None

    asyncio.run(run())


def _counting_reads(monkeypatch: pytest.MonkeyPatch, store: object) -> list[str]:
    """The refs ``store.get`` (a primary-key or key read) is called with from now on."""
    reads: list[str] = []
    stored_get = store.get  # type: ignore[attr-defined]
    monkeypatch.setattr(store, "get", lambda ref, filt: reads.append(ref) or stored_get(ref, filt))
    return reads


def test_http_and_mcp_read_each_end_once(served: Served, monkeypatch: pytest.MonkeyPatch) -> None:
    # Each door resolves the ends itself (its errors name its own fields) and the engine takes them
    # as found: one read per end, where there were two.
    with served.client(served.alice) as c:
        a, b, c_, d = (c.post("/api/v1/memory", json={"content": f"memory {n}", "key": n}).json()["memory_id"]
                       for n in ("a", "b", "c", "d"))
        reads = _counting_reads(monkeypatch, served.engram.store)
        assert c.post(f"/api/v1/memory/{a}/links", json={"to": b}).status_code == 201
        assert reads == [a, b]
        reads.clear()
        assert [m["id"] for m in c.get(f"/api/v1/memory/{a}/links").json()["neighbours"]] == [b]
        assert reads == [a]
        reads.clear()
        assert c.request("DELETE", "/api/v1/memory/by-key/links", params={"key": "a", "other_key": "b"}).json() == {
            "unlinked": True}
        assert reads == ["a", "b"]
        reads.clear()
        closed = c.post("/api/v1/memory/by-key/supersede", params={"key": "a"}, json={"by": c_}).json()
        assert closed["superseded_by"] == c_ and reads == ["a", c_, a]  # a read again after the write, to return it
        reads.clear()

    async def run() -> None:
        async with Client(_http(served, served.alice)) as alice:
            assert _data(await alice.call_tool("link", {"source": b, "target_key": "c"}))["changed"]
            assert reads == [b, "c"]
            reads.clear()
            assert _data(await alice.call_tool("supersede", {"old": b, "new": d}))["superseded_by"] == d
            assert reads == [b, d, b]

    asyncio.run(run())


def test_cli_reads_each_end_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from engram.interfaces.cli.app import app
    from engram.store.sqlite import SqliteMemoryStore

    runner = CliRunner()

    def run(*args: str) -> object:
        done = runner.invoke(app, ["--home", str(tmp_path), "--agent", "alice", "--json", *args])
        assert done.exit_code == 0, (args, done.output)
        return json.loads(done.stdout)

    a, b, c = (run("remember", f"memory {n}", "--key", n)["memory"]["id"] for n in ("a", "b", "c"))  # type: ignore[index]
    reads: list[str] = []
    stored_get = SqliteMemoryStore.get
    monkeypatch.setattr(SqliteMemoryStore, "get", lambda self, ref, filt: reads.append(ref) or stored_get(self, ref, filt))
    for args, read in ((("link", a, "--to-key", "b"), [a, "b"]), (("neighbours", "a"), ["a"]),
                       (("unlink", "--key", "a", b), ["a", b]), (("supersede", a, c), [a, c, a])):
        reads.clear()
        run(*args)
        assert reads == read, (args, reads)


def test_ptrclaw_tools_read_a_key_first_then_an_id(served: Served) -> None:
    # PtrClaw's memory_forget and memory_link take keys: a key equal to another memory's id names
    # the key's memory; a value that is no key is still read as an id.
    async def run() -> None:
        async with Client(_http(served, served.alice)) as alice, Client(_http(served, served.bob)) as bob:
            def store(key: str, content: str) -> object:
                return alice.call_tool("memory_store", {"key": key, "content": content})

            first = _data(await store("first", "the first"))["memory_id"]
            shadow = _data(await store(first, "named after an id"))["memory_id"]
            other = _data(await store("other", "the other"))["memory_id"]

            linked = _data(await alice.call_tool("memory_link", {"action": "link", "from": first, "to": "other"}))
            assert linked == {"action": "link", "from": first, "to": "other", "changed": True}
            assert _data(await alice.call_tool("get", {"key": first}))["links"] == [other]
            assert _data(await alice.call_tool("get", {"memory_id": first}))["links"] == []
            unlinked = await alice.call_tool("memory_link", {"action": "unlink", "from": "other", "to": first})
            assert _data(unlinked)["changed"] is True
            # An id no key equals still names its memory, as it did.
            assert _data(await alice.call_tool("memory_link", {"action": "link", "from": other, "to": "first"}))["changed"]
            assert _data(await alice.call_tool("get", {"key": "first"}))["links"] == [other]

            for args, said in (({"action": "link", "from": "", "to": "other"}, "from: must not be empty"),
                               ({"action": "link", "from": "other", "to": "no-such"}, "memory named by to not found")):
                assert said in _error_text(await alice.call_tool("memory_link", args)), args
            assert 'memory named by key not found: "no-such"' in _error_text(
                await alice.call_tool("memory_forget", {"key": "no-such"}))
            # bob holds no key of alice's, and her ids are no ids of his.
            assert "not found" in _error_text(await bob.call_tool("memory_forget", {"key": first}))
            assert "not found" in _error_text(await bob.call_tool("memory_link", {"action": "link", "from": other,
                                                                                   "to": first}))

            forgot = _data(await alice.call_tool("memory_forget", {"key": first}))
            assert forgot == {"forgotten": [first], "count": 1}  # the key's memory (its key is the id's text)
            assert _data(await alice.call_tool("get", {"memory_id": first}))["id"] == first
            assert "not found" in _error_text(await alice.call_tool("get", {"memory_id": shadow}))
            assert _data(await alice.call_tool("memory_forget", {"key": other}))["forgotten"] == ["other"]

            tools = {t.name: t.description or "" for t in (await alice.list_tools()).tools}
            assert all("read as a key first" in tools[name] for name in ("memory_forget", "memory_link"))

    asyncio.run(run())


def test_http_and_mcp_update_replace_and_versions_read_the_memory_once(served: Served,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # The by-key routes and the MCP tool resolve the memory (errors in their own words) and pass it
    # on: the engine reads it again by id no more. What an update reads besides is the writer's
    # look under the memory's key, that it is still stored there (which its vector check reads too).
    with served.client(served.alice) as c:
        a = c.post("/api/v1/memory", json={"content": "memory a", "key": "a", "tags": ["x"]}).json()["memory_id"]
        reads = _counting_reads(monkeypatch, served.engram.store)
        patched = c.patch("/api/v1/memory/by-key", params={"key": "a"}, json={"content": "memory a, changed"})
        assert patched.status_code == 200 and patched.json()["memory"]["tags"] == ["x"]
        assert reads == ["a", "a"]
        reads.clear()
        put = c.put("/api/v1/memory/by-key", params={"key": "a"}, json={"content": "memory a, replaced"})
        assert put.status_code == 200 and put.json()["memory"]["tags"] == []
        assert reads == ["a", "a"]
        reads.clear()
        versions = c.get("/api/v1/memory/by-key/versions", params={"key": "a"}).json()["versions"]
        assert [v["content"] for v in versions] == ["memory a", "memory a, changed"] and reads == ["a"]
        reads.clear()
        # A field refused is named, and nothing changes.
        refused = c.patch("/api/v1/memory/by-key", params={"key": "a"}, json={"importance": 2})
        assert refused.status_code == 422 and "importance" in refused.text, refused.text
        refused = c.put("/api/v1/memory/by-key", params={"key": "a"}, json={"content": ""})
        assert refused.status_code == 422 and "content" in refused.text, refused.text
        assert c.get("/api/v1/memory/by-key", params={"key": "a"}).json()["content"] == "memory a, replaced"
        reads.clear()

    async def run() -> None:
        async with Client(_http(served, served.alice)) as alice:
            assert _data(await alice.call_tool("update", {"key": "a", "importance": 0.9}))["memory_id"] == a
            assert reads == ["a", "a"]
            text = _error_text(await alice.call_tool("update", {"key": "a", "category": "nonsense"}))
            assert "category" in text, text

    asyncio.run(run())
    assert served.engram.for_agent("alice").get(a).importance == 0.9


def test_cli_update_and_get_read_the_memory_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from engram.interfaces.cli.app import app
    from engram.store.sqlite import SqliteMemoryStore

    runner = CliRunner()

    def run(*args: str) -> str:
        done = runner.invoke(app, ["--home", str(tmp_path), "--agent", "alice", "--json", *args])
        assert done.exit_code == 0, (args, done.output)
        return done.output

    a = json.loads(run("remember", "memory a", "--key", "a"))["memory"]["id"]
    reads: list[str] = []
    stored_get = SqliteMemoryStore.get
    monkeypatch.setattr(SqliteMemoryStore, "get", lambda self, ref, filt: reads.append(ref) or stored_get(self, ref, filt))
    # update: the command's look-up, then the writer's under the key; get: the look-up alone (its
    # versions come from the memory it found).
    for args, read in ((("update", "--key", "a", "--content", "memory a, changed"), ["a", "a"]),
                       (("update", a, "--importance", "0.9"), [a, "a"]), (("get", "--key", "a"), ["a"])):
        reads.clear()
        out = json.loads(run(*args))
        assert reads == read, (args, reads)
    assert [v["content"] for v in out["versions"]] == ["memory a"] and out["importance"] == 0.9
    refused = engram(tmp_path, "--agent", "alice", "update", "--key", "a", "--importance", "2")  # the real process
    assert refused.returncode == 2 and "importance" in refused.stderr, refused.stderr


def test_a_key_given_with_white_space_around_it_finds_the_memory_it_stored(served: Served) -> None:
    # The key is trimmed when stored; a read by the same text (a key read from a file keeps its
    # line break) looked for it untrimmed and found nothing, at every door.
    with served.client(served.alice) as alice:
        stored = alice.post("/api/v1/memory", json={"content": "the deploy runs at noon", "key": "deploy-time\n"})
        assert stored.status_code == 201 and stored.json()["memory"]["key"] == "deploy-time", stored.text
        for path in ("/api/v1/memory/by-key?key=deploy-time%0A", "/api/v1/memory/%20deploy-time"):
            assert alice.get(path).json().get("content") == "the deploy runs at noon", path
        changed = alice.patch("/api/v1/memory/by-key", params={"key": " deploy-time "}, json={"importance": 0.9})
        assert changed.status_code == 200 and changed.json()["memory"]["importance"] == 0.9, changed.text
        linked = alice.post("/api/v1/memory", json={"content": "lunch follows the deploy", "links": ["deploy-time\n"]})
        assert linked.status_code == 201, linked.text
    with served.client(served.bob) as bob:
        assert bob.get("/api/v1/memory/by-key?key=deploy-time%0A").status_code == 404
    view = served.engram.for_agent("alice")
    assert view.get("deploy-time\r\n").key == view.get_by_key("\tdeploy-time").key == "deploy-time"
