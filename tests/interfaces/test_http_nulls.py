"""JSON null for an optional field of an HTTP request body means "not given": its default, as for
MCP's tools (``model.given_arguments``). pydantic refused it for every field whose default is not
None (``"category": null``, ``"importance": null``, a message's ``"content": null``) while taking it
for the others. A required field sent as null is refused naming it, storing nothing; PATCH's null
still clears a field. Over a real socket."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.interfaces.conftest import Served


def _refused(r: httpx.Response, field: str) -> None:
    assert r.status_code == 422, r.text
    assert r.json()["field"] == field, r.json()


def test_a_memory_stored_with_nulls_takes_the_defaults(served: Served) -> None:
    with served.client(served.alice) as c:
        nulls = dict.fromkeys(("key", "category", "type", "layer", "tags", "metadata", "importance", "related_entity",
                               "source", "scope", "links", "search_context", "valid_from", "valid_until"))
        r = c.post("/api/v1/memory", json={"content": "The user waters the garden at dawn", **nulls})
        assert r.status_code == 201, r.text
        left_out = c.post("/api/v1/memory", json={"content": "The user feeds the cat at noon"})
        assert left_out.status_code == 201, left_out.text
        stored, plain = (c.get(f"/api/v1/memory/{w.json()['memory_id']}").json() for w in (r, left_out))
        assert (stored["category"], stored["importance"], stored["scope"]) == ("knowledge", 0.5, "agent:alice")
        for field in ("category", "importance", "scope", "type", "layer", "tags", "metadata", "links"):
            assert stored.get(field) == plain.get(field), field


def test_a_replace_with_nulls_returns_the_fields_to_their_defaults(served: Served) -> None:
    with served.client(served.alice) as c:
        made = c.post("/api/v1/memory", json={"content": "Deploys go out on Fridays", "key": "deploy",
                                              "category": "core", "importance": 0.9})
        assert made.status_code == 201, made.text
        r = c.put("/api/v1/memory/deploy", json={"content": "Deploys go out on Tuesdays", "category": None,
                                                 "importance": None, "tags": None})
        assert r.status_code == 200, r.text
        now = c.get("/api/v1/memory/deploy").json()
        assert (now["content"], now["category"], now["importance"]) == ("Deploys go out on Tuesdays", "knowledge", 0.5)


def test_history_messages_with_nulls_take_the_defaults(served: Served) -> None:
    with served.client(served.alice) as c:
        # An assistant message calling a tool often comes with "content": null (OpenAI's shape).
        r = c.post("/api/v1/history/web:1", json={"role": "assistant", "content": None, "metadata": None,
                                                  "tool_calls": [{"id": "c1", "name": "weather", "arguments": None}]})
        assert r.status_code == 201, r.text
        r = c.post("/api/v1/history/web:1/messages", json={"messages": [
            {"role": "tool", "content": "sunny", "tool_call_id": "c1", "metadata": None},
            {"role": "assistant", "content": "Sunny.", "tool_calls": None}]})
        assert r.status_code == 201, r.text
        stored = c.get("/api/v1/history/web:1").json()["messages"]
        assert [(m["role"], m["content"]) for m in stored] == [("assistant", ""), ("tool", "sunny"), ("assistant", "Sunny.")]
        assert stored[0]["tool_calls"][0]["arguments"] == "{}"


def test_a_forget_with_nulls_takes_the_defaults(served: Served) -> None:
    with served.client(served.alice) as c:
        assert c.post("/api/v1/memory", json={"content": "The shed key is under the pot"}).status_code == 201
        # "dry_run": null is not given: a real forget, as if left out (as MCP's forget reads it).
        r = c.post("/api/v1/memory/forget", json={"query": "shed", "dry_run": None, "erase": None, "scope": None})
        assert r.status_code == 200, r.text
        assert r.json()["count"] == 1 and r.json()["dry_run"] is False
        assert c.get("/api/v1/memory").json()["memories"] == []


def test_a_required_field_sent_as_null_is_refused_naming_it_and_nothing_is_stored(served: Served) -> None:
    with served.client(served.alice) as c:
        _refused(c.post("/api/v1/memory", json={"content": None, "category": None}), "content")
        _refused(c.put("/api/v1/memory/by-key", params={"key": "x"}, json={"content": None}), "content")
        assert c.get("/api/v1/memory").json()["memories"] == []
        _refused(c.post("/api/v1/history/web:2", json={"role": None, "content": "hi"}), "role")
        _refused(c.post("/api/v1/history/web:2", json={"role": "assistant", "tool_calls": [
            {"id": None, "name": "weather"}]}), "tool_calls[0].id")
        _refused(c.post("/api/v1/history/web:2/messages", json={"messages": None}), "messages")
        assert c.get("/api/v1/history/web:2").json()["messages"] == []
        _refused(c.put("/api/v1/history/web:2/summary", json={"summary": None}), "summary")
        assert c.get("/api/v1/history/web:2/summary").json()["summary"] == ""
        _refused(c.post("/api/memory/semantic-recall", json={"input": None}), "input")


def test_patch_null_still_clears_an_optional_field_and_is_refused_for_one_every_memory_has(served: Served) -> None:
    with served.client(served.alice) as c:
        made = c.post("/api/v1/memory", json={"content": "Deploys go out on Fridays", "key": "deploy",
                                              "tags": ["ops"], "importance": 0.9})
        assert made.status_code == 201, made.text
        _refused(c.patch("/api/v1/memory/deploy", json={"importance": None}), "importance")
        assert c.patch("/api/v1/memory/deploy", json={"tags": None}).status_code == 200
        now = c.get("/api/v1/memory/deploy").json()
        assert not now.get("tags") and now["importance"] == 0.9


def test_an_import_with_a_null_option_takes_its_default(served: Served) -> None:
    mem0 = (Path(__file__).parent.parent / "fixtures" / "import" / "mem0.json").read_text()
    with served.client(served.alice) as c:
        r = c.post("/api/v1/import/mem0", json={"text": mem0, "saved_memories": None})
        assert r.status_code == 200, r.text
        assert r.json()["imported"] == 3
        # Both sources null: neither is given, refused as if both were left out.
        assert c.post("/api/v1/import/mem0", json={"text": None, "files": None}).status_code == 422
