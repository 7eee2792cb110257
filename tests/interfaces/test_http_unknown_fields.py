"""A name an HTTP request body does not take is refused naming it and the names the body takes,
whatever its value: pydantic's own refusal ("Extra inputs are not permitted") gave no ``allowed``,
and a misspelt name sent as null was dropped with the nulls that mean "not given", so PATCH's
``{"metdata": null}`` answered "unchanged" and cleared nothing. Over a real socket."""

from __future__ import annotations

import pytest

from tests.interfaces.conftest import Served

PATCHABLE = ("content, category, type, layer, tags, metadata, importance, related_entity, source, search_context, "
             "valid_from, valid_until")


@pytest.mark.parametrize("value", [None, {}, 1])
def test_a_misspelt_patch_field_is_refused_whatever_its_value_and_changes_nothing(served: Served, value: object) -> None:
    with served.client(served.alice) as c:
        made = c.post("/api/v1/memory", json={"content": "The user likes tea", "key": "tea",
                                              "metadata": {"mood": "calm"}})
        assert made.status_code == 201, made.text
        r = c.patch("/api/v1/memory/tea", json={"metdata": value})
        assert r.status_code == 422, r.text
        problem = r.json()
        assert (problem["field"], problem["allowed"]) == ("metdata", PATCHABLE), problem
        assert problem["detail"] == f"metdata: unknown field (allowed: {PATCHABLE})", problem
        assert c.get("/api/v1/memory/tea").json()["metadata"] == {"mood": "calm"}


@pytest.mark.parametrize(("path", "body", "field", "allowed"), [
    ("/api/v1/memory", {"content": "a new fact", "tgas": None}, "tgas", "content, key, category"),
    ("/api/v1/memory/forget", {"older_than_s": 5, "dry_run": True}, "older_than_s", "older_than_days"),
    ("/api/v1/history/web:1/messages", {"messages": [{"role": "user", "content": "hi", "bogus": None}]},
     "messages[0].bogus", "role, content, tool_calls, tool_call_id, metadata"),
    ("/api/v1/history/web:1", {"role": "user", "content": "hi", "tool_calls": [{"id": "c", "name": "n", "args": {}}]},
     "tool_calls[0].args", "id, name, arguments"),
])
def test_an_unknown_body_field_is_named_with_the_fields_allowed(served: Served, path: str, body: dict, field: str,
                                                                allowed: str) -> None:
    with served.client(served.alice) as c:
        r = c.post(path, json=body)
        assert r.status_code == 422, r.text
        problem = r.json()
        assert problem["field"] == field and allowed in problem["allowed"], problem
        assert problem["errors"] == [{"field": field, "problem": f"unknown field (allowed: {problem['allowed']})"}]
        assert c.get("/api/v1/stats").json()["memories"] == 0
        assert c.get("/api/v1/history").json()["conversations"] == []
