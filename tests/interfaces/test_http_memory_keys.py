"""Every memory is reachable by its key over HTTP (a real server, a real client), whatever the key
holds; PUT replaces a memory's fields; PATCH with null clears an optional one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from engram.errors import ValidationError
from engram.model import MAX_LIST_LIMIT
from tests.interfaces.conftest import Served
from tests.unit.test_cli import engram

# A slash, a fixed route's name, a percent sign, unicode with a space, an escape written out, and
# a key whose end looks like a sub-route.
KEYS = ["a/b", "search", "100%", "ключ ✓ 日本", "a%2Fb", "x/links/y", "by-key"]
# A key equal to a fixed route (or folded away as a dot segment) is reached through /by-key only.
ROUTE_NAMES = {"search", "by-key"}


def _path(key: str) -> str:
    return "/api/v1/memory/" + quote(key, safe="")


def _by_key(c: httpx.Client, method: str, key: str, sub: str = "", **kw: object) -> httpx.Response:
    params = {"key": key, **kw.pop("params", {})}  # type: ignore[dict-item]
    return c.request(method, f"/api/v1/memory/by-key{sub}", params=params, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("form", ["path", "by-key"])
def test_each_key_is_read_edited_replaced_linked_and_forgotten_by_key(served: Served, form: str) -> None:
    with served.client(served.alice) as c:
        other = c.post("/api/v1/memory", json={"content": "the neighbour", "key": "neighbour"}).json()["memory_id"]
        for key in KEYS:
            if form == "path" and key in ROUTE_NAMES:
                continue
            made = c.post("/api/v1/memory", json={"content": f"first of {key}", "key": key})
            assert made.status_code == 201, made.text
            mid = made.json()["memory_id"]

            def call(method: str, sub: str = "", key: str = key, **kw: object) -> httpx.Response:
                if form == "path":
                    return c.request(method, _path(key) + sub, **kw)  # type: ignore[arg-type]
                return _by_key(c, method, key, sub, **kw)

            got = call("GET")
            assert got.status_code == 200 and got.json()["id"] == mid and got.json()["key"] == key, (key, got.text)
            patched = call("PATCH", json={"content": f"second of {key}", "tags": ["t"]}).json()["memory"]
            assert patched["id"] == mid and patched["content"] == f"second of {key}" and patched["tags"] == ["t"]
            replaced = call("PUT", json={"content": f"third of {key}"}).json()["memory"]
            assert replaced["id"] == mid and replaced["tags"] == []
            assert [v["content"] for v in call("GET", "/versions").json()["versions"]] == [
                f"first of {key}", f"second of {key}"]
            assert call("POST", "/links", json={"to": other}).status_code == 201
            assert [m["id"] for m in call("GET", "/links").json()["neighbours"]] == [other]
            unlink = (c.delete(_path(key) + "/links/neighbour") if form == "path"
                      else _by_key(c, "DELETE", key, "/links", params={"other": "neighbour"}))
            assert unlink.json() == {"unlinked": True}
            assert call("GET", "/links").json()["neighbours"] == []
            gone = call("DELETE", params={"reason": "done"}).json()
            assert gone["forgotten"] == [mid], (key, gone)
            assert call("GET").status_code == 404
        # Only the memories asked for went: the neighbour was never mistaken for one of them.
        assert c.get(f"/api/v1/memory/{other}").status_code == 200


def test_the_path_form_keeps_a_slash_key_apart_from_sub_routes(served: Served) -> None:
    with served.client(served.alice) as c:
        x = c.post("/api/v1/memory", json={"content": "x itself", "key": "x"}).json()["memory_id"]
        y = c.post("/api/v1/memory", json={"content": "y itself", "key": "y"}).json()["memory_id"]
        c.post("/api/v1/memory/x/links", json={"to": "y"})
        odd = c.post("/api/v1/memory", json={"content": "a key like a route", "key": "x/links/y"}).json()["memory_id"]
        # Encoded, the slashes are the key's; bare, they separate the route's segments.
        assert c.delete(_path("x/links/y")).json()["forgotten"] == [odd]
        assert c.get("/api/v1/memory/x/links").json()["neighbours"][0]["id"] == y
        assert c.delete("/api/v1/memory/x/links/y").json() == {"unlinked": True}
        assert c.get(f"/api/v1/memory/{x}").status_code == 200


def test_by_key_finds_a_key_that_is_another_memorys_id(served: Served) -> None:
    with served.client(served.alice) as c:
        first = c.post("/api/v1/memory", json={"content": "the first", "key": "first"}).json()["memory_id"]
        shadow = c.post("/api/v1/memory", json={"content": "named after an id", "key": first}).json()["memory_id"]
        assert c.get(f"/api/v1/memory/{first}").json()["id"] == first  # a ref is an id first
        assert _by_key(c, "GET", first).json()["id"] == shadow
        assert _by_key(c, "DELETE", first).json()["forgotten"] == [shadow]
        assert c.get(f"/api/v1/memory/{first}").json()["content"] == "the first"


def test_by_key_never_reaches_another_agents_memory(served: Served) -> None:
    with served.client(served.alice) as a, served.client(served.bob) as b:
        for key in ("plan/secret", "search"):
            a.post("/api/v1/memory", json={"content": f"alice's {key} involves tulips", "key": key})
            assert _by_key(b, "GET", key).status_code == 404
            assert _by_key(b, "PATCH", key, json={"content": "hijacked"}).status_code == 404
            assert _by_key(b, "PUT", key, json={"content": "hijacked"}).status_code == 404
            assert _by_key(b, "GET", key, "/versions").status_code == 404
            assert _by_key(b, "GET", key, "/links").status_code == 404
            assert _by_key(b, "POST", key, "/links", json={"to": key}).status_code == 404
            assert _by_key(b, "POST", key, "/supersede", json={"by": key}).status_code == 404
            assert _by_key(b, "DELETE", key).status_code == 404
            assert b.get(_path(key)).status_code in (404, 422)
            assert _by_key(a, "GET", key).json()["content"] == f"alice's {key} involves tulips"
        # Bob's own memory under the same key is his, and alice's stays hers.
        b.post("/api/v1/memory", json={"content": "bob's plan", "key": "plan/secret"})
        assert _by_key(b, "GET", "plan/secret").json()["content"] == "bob's plan"
        assert _by_key(a, "GET", "plan/secret").json()["content"] == "alice's plan/secret involves tulips"


def test_put_replaces_every_field_and_needs_content(served: Served) -> None:
    with served.client(served.alice) as c:
        full = {"content": "On 2026-04-12 the migration failed", "key": "mig", "category": "core", "type": "decision",
                "tags": ["ops"], "metadata": {"team": "db"}, "importance": 0.9, "related_entity": "postgres",
                "source": "pager", "search_context": "the night shift", "valid_until": "2026-05-01"}
        mid = c.post("/api/v1/memory", json=full).json()["memory_id"]
        missing = c.put("/api/v1/memory/mig", json={"importance": 0.3})
        assert missing.status_code == 422 and missing.json()["field"] == "content"
        assert c.get("/api/v1/memory/mig").json()["content"] == full["content"]  # nothing changed
        put = c.put("/api/v1/memory/mig", json={"content": "The migration was retried", "tags": ["retry"]})
        assert put.status_code == 200 and put.json()["action"] == "updated"
        got = c.get("/api/v1/memory/mig").json()
        assert got["id"] == mid and got["key"] == "mig" and got["scope"] == "agent:alice"
        assert got["tags"] == ["retry"]
        # The rest as a fresh remember sets them.
        assert (got["category"], got["type"], got["layer"], got["importance"]) == ("knowledge", "learned", "semantic", 0.5)
        assert got["metadata"] == {} and got["related_entity"] is None and got["source"] is None
        assert got["search_context"] is None and got["valid_from"] is None and got["valid_until"] is None
        assert [v["content"] for v in c.get("/api/v1/memory/mig/versions").json()["versions"]] == [full["content"]]
        # A stated date is read as a fresh remember reads it.
        dated = c.put("/api/v1/memory/mig", json={"content": "On 2026-04-13 the retry worked"}).json()["memory"]
        assert dated["valid_from"] is not None


def test_patch_null_clears_optional_fields_and_refuses_required_ones(served: Served) -> None:
    with served.client(served.alice) as c:
        c.post("/api/v1/memory", json={
            "content": "Deploys run on Fridays", "key": "deploy", "tags": ["ops"], "metadata": {"team": "infra"},
            "importance": 0.8, "related_entity": "ci", "source": "wiki", "search_context": "release talk",
            "valid_from": "2026-01-01", "valid_until": "2026-06-01"})
        cleared = c.patch("/api/v1/memory/deploy", json={"valid_until": None, "related_entity": None})
        assert cleared.status_code == 200, cleared.text
        got = c.get("/api/v1/memory/deploy").json()
        assert got["valid_until"] is None and got["related_entity"] is None
        assert got["source"] == "wiki" and got["tags"] == ["ops"] and got["valid_from"] is not None  # kept
        c.patch("/api/v1/memory/deploy", json={"tags": None, "metadata": None, "source": None,
                                               "search_context": None, "valid_from": None})
        got = c.get("/api/v1/memory/deploy").json()
        assert (got["tags"], got["metadata"], got["source"], got["search_context"], got["valid_from"]) == (
            [], {}, None, None, None)
        assert got["importance"] == 0.8 and got["content"] == "Deploys run on Fridays"
        for field in ("content", "category", "type", "layer", "importance"):
            refused = c.patch("/api/v1/memory/deploy", json={field: None, "source": "kept out"})
            assert refused.status_code == 422 and refused.json()["field"] == field, refused.text
        assert c.get("/api/v1/memory/deploy").json()["source"] is None  # nothing of a refused patch was stored


def test_a_conversation_key_holding_a_slash_or_percent_is_reached_percent_encoded(served: Served) -> None:
    # A key's parts may hold '/': the listing showed such a key, and every route under it answered 404.
    with served.client(served.alice) as c:
        for key in ("web:a/b", "tg:1:th/2", "web:50%"):
            path = "/api/v1/history/" + quote(key, safe="")
            made = c.post(path, json={"role": "user", "content": f"said in {key}"})
            assert made.status_code == 201 and made.json()["conversation"] == key, made.text
            assert [m["content"] for m in c.get(path).json()["messages"]] == [f"said in {key}"]
            assert c.get(path + "/summary").json() == {"conversation": key, "summary": ""}
        assert {i["conversation"] for i in c.get("/api/v1/history").json()["conversations"]} == {
            "web:a/b", "tg:1:th/2", "web:50%"}
        assert c.delete("/api/v1/history/" + quote("web:a/b", safe="")).status_code == 200
        assert c.get("/api/v1/history/" + quote("web:a/b", safe="")).json()["messages"] == []
        assert c.get("/api/v1/history/web:a/b").status_code == 404  # a literal slash still separates segments
    with served.client(served.bob) as c:  # another agent's conversation of the same key is its own
        assert c.get("/api/v1/history/" + quote("tg:1:th/2", safe="")).json()["messages"] == []


def test_a_path_or_query_that_is_not_utf8_is_refused_naming_it_and_changes_nothing(served: Served) -> None:
    # The server decodes %FF%FE as U+FFFD U+FFFD: a key nobody sent. A memory really keyed so must stay
    # out of reach of the malformed path, and a conversation must not be started under it.
    with served.client(served.alice) as c:
        mid = c.post("/api/v1/memory", json={"content": "keyed with replacement characters",
                                             "key": "\ufffd\ufffd"}).json()["memory_id"]
        assert c.post("/api/v1/history/web:ok", json={"role": "user", "content": "hello"}).status_code == 201
        refused = [
            ("GET", "/api/v1/memory/%FF%FE", "ref"), ("PATCH", "/api/v1/memory/%FF%FE", "ref"),
            ("PUT", "/api/v1/memory/%FF%FE", "ref"), ("DELETE", "/api/v1/memory/%FF%FE", "ref"),
            ("GET", "/api/v1/memory/%FF%FE/versions", "ref"), ("POST", "/api/v1/memory/%C3/links", "ref"),
            ("DELETE", f"/api/v1/memory/{mid}/links/%FF", "other"),
            ("GET", "/api/v1/history/web:%FF", "conversation"), ("POST", "/api/v1/history/web:%FF", "conversation"),
            ("DELETE", "/api/v1/history/web:%FF", "conversation"),
            ("GET", "/api/v1/history/web:%FF/summary", "conversation"),
            ("GET", "/api/v1/memory/by-key?key=%FF%FE", "key"), ("DELETE", "/api/v1/memory/by-key?key=%FF", "key"),
            ("PUT", "/api/v1/memory/by-key?key=%E2%82", "key"), ("GET", "/api/v1/memory/search?q=caf%E9", "q"),
        ]
        for method, path, field in refused:
            body = {"content": "overwritten", "role": "user", "to": mid} if method in ("PATCH", "PUT", "POST") else None
            r = c.request(method, path, json=body)
            assert r.status_code == 422, (method, path, r.text)
            problem = r.json()
            assert problem["field"] == field and "UTF-8" in problem["detail"], (method, path, problem)
        kept = c.get("/api/v1/memory/by-key", params={"key": "\ufffd\ufffd"}).json()
        assert kept["id"] == mid and kept["content"] == "keyed with replacement characters"
        assert c.get(f"/api/v1/memory/{mid}/versions").json()["versions"] == []
        assert c.get("/api/v1/memory/" + quote("\ufffd\ufffd")).json()["id"] == mid  # sent as UTF-8: found
        assert c.get("/api/v1/history/web:" + quote("\ufffd")).json()["messages"] == []
        assert len(c.get("/api/v1/history/web:ok").json()["messages"]) == 1
        assert c.get("/api/v1/stats").json()["memories"] == 1
    with served.client() as anonymous:  # no token: 401 before the path is looked at (nothing learnt of the route)
        assert anonymous.get("/api/v1/memory/%FF").status_code == 401
        assert anonymous.get("/api/v1/memory/x").status_code == 401


def test_the_other_end_of_a_link_or_supersede_may_be_named_by_key(served: Served) -> None:
    with served.client(served.alice) as c, served.client(served.bob) as b:
        first = c.post("/api/v1/memory", json={"content": "the first", "key": "first"}).json()["memory_id"]
        shadow = c.post("/api/v1/memory", json={"content": "named after an id", "key": first}).json()["memory_id"]
        other = c.post("/api/v1/memory", json={"content": "the other", "key": "other"}).json()["memory_id"]
        bobs = b.post("/api/v1/memory", json={"content": "bob's own other", "key": "other"}).json()["memory_id"]

        made = c.post("/api/v1/memory/other/links", json={"to_key": first})
        assert made.status_code == 201 and made.json() == {"linked": [other, shadow], "changed": True}, made.text
        assert [m["id"] for m in _by_key(c, "GET", first, "/links").json()["neighbours"]] == [other]
        assert c.get(f"/api/v1/memory/{first}/links").json()["neighbours"] == []  # a ref is an id first
        gone = _by_key(c, "DELETE", "other", "/links", params={"other_key": first})
        assert gone.json() == {"unlinked": True}
        both = _by_key(c, "POST", first, "/links", json={"to_key": "other"})  # both ends by key
        assert both.status_code == 201 and both.json() == {"linked": [shadow, other], "changed": True}
        assert _by_key(c, "DELETE", first, "/links", params={"other_key": "other"}).json() == {"unlinked": True}
        closed = _by_key(c, "POST", first, "/supersede", json={"by_key": "other"})
        assert closed.status_code == 200 and closed.json()["id"] == shadow, closed.text
        assert closed.json()["superseded_by"] == other

        # Bad input: a problem naming the fields, and nothing changed.
        for method, path, kw, status, said in (
            ("POST", "/api/v1/memory/other/links", {"json": {"to": first, "to_key": first}}, 422, "to, to_key"),
            ("POST", "/api/v1/memory/other/links", {"json": {}}, 422, "to, to_key"),
            ("POST", "/api/v1/memory/other/supersede", {"json": {"by": first, "by_key": first}}, 422, "by, by_key"),
            ("POST", "/api/v1/memory/other/supersede", {"json": {}}, 422, "by, by_key"),
            ("DELETE", "/api/v1/memory/by-key/links", {"params": {"key": "other"}}, 422, "other, other_key"),
            ("DELETE", "/api/v1/memory/by-key/links", {"params": {"key": "other", "other": first, "other_key": first}},
             422, "other, other_key"),
            ("POST", "/api/v1/memory/other/links", {"json": {"to_key": "no-such-key"}}, 404, "to_key"),
            ("POST", f"/api/v1/memory/{first}/supersede", {"json": {"by_key": "no-such-key"}}, 404, "by_key"),
        ):
            r = c.request(method, path, **kw)  # type: ignore[arg-type]
            assert r.status_code == status and said in r.json()["detail"], (path, kw, r.text)
        assert c.get("/api/v1/memory/other").json()["links"] == []
        assert c.get(f"/api/v1/memory/{first}").json()["superseded_by"] is None
        # bob resolves none of alice's keys, only his own.
        assert b.post("/api/v1/memory/other/links", json={"to_key": first}).status_code == 404
        assert _by_key(b, "DELETE", "other", "/links", params={"other_key": first}).status_code == 404
        assert b.post("/api/v1/memory/other/supersede", json={"by_key": first}).status_code == 404
        kept = b.get("/api/v1/memory/other").json()
        assert kept["id"] == bobs and kept["links"] == [] and kept["superseded_by"] is None


def test_a_memory_names_those_it_supersedes_by_id_and_by_key(served: Served) -> None:
    """The other way along a supersede: ``/supersedes`` lists the memories whose ``superseded_by``
    is this one (superseded, so out of the list and recall), oldest first; never another agent's."""
    with served.client(served.alice) as c, served.client(served.bob) as b:
        old = c.post("/api/v1/memory", json={"content": "Alice lives in Porto", "key": "home-1"}).json()["memory_id"]
        older = c.post("/api/v1/memory", json={"content": "Alice lived in Braga", "key": "home-0"}).json()["memory_id"]
        new = c.post("/api/v1/memory", json={"content": "Alice lives in Lisbon", "key": "home/2"}).json()["memory_id"]
        assert c.get(f"/api/v1/memory/{new}/supersedes").json()["supersedes"] == []
        for done in (old, older):
            assert c.post(f"/api/v1/memory/{done}/supersede", json={"by": new}).status_code == 200
        answer = c.get(f"/api/v1/memory/{new}/supersedes").json()
        assert answer["memory"]["id"] == new
        assert [(m["id"], m["superseded_by"]) for m in answer["supersedes"]] == [(old, new), (older, new)]
        assert [m["id"] for m in _by_key(c, "GET", "home/2", "/supersedes").json()["supersedes"]] == [old, older]
        assert [m["id"] for m in c.get(f"/api/v1/memory/{new}/supersedes", params={"limit": 1}).json()["supersedes"]] == [old]
        assert c.get(f"/api/v1/memory/{old}/supersedes").json()["supersedes"] == []  # it is superseded, supersedes none
        # Bad input and another agent: a problem naming the field; nothing of alice's shown to bob.
        r = c.get(f"/api/v1/memory/{new}/supersedes", params={"limit": 0})
        assert r.status_code == 422 and "limit" in r.text
        assert b.get(f"/api/v1/memory/{new}/supersedes").status_code == 404
        assert _by_key(b, "GET", "home/2", "/supersedes").status_code == 404
        bobs = b.post("/api/v1/memory", json={"content": "Bob lives in Faro", "key": "bob-home"}).json()["memory_id"]
        assert b.get(f"/api/v1/memory/{bobs}/supersedes").json()["supersedes"] == []


def test_a_global_memory_shows_each_agent_only_the_memories_of_its_own_it_supersedes(served: Served) -> None:
    """A global memory may supersede an agent's memory (every agent sees its successor): asked by
    another agent, its ``/supersedes`` lists none of that agent's, by id or by key, and its links
    name none of them."""
    with served.client(served.alice) as c, served.client(served.bob) as b:
        fact = c.post("/api/v1/memory", json={"content": "The office moved to Porto", "key": "office",
                                              "scope": "global"}).json()["memory_id"]
        alices = c.post("/api/v1/memory", json={"content": "Alice's desk is in Lisbon", "key": "desk"}).json()["memory_id"]
        bobs = b.post("/api/v1/memory", json={"content": "Bob's desk is in Lisbon", "key": "desk"}).json()["memory_id"]
        for client, mine in ((c, alices), (b, bobs)):
            assert client.post(f"/api/v1/memory/{mine}/supersede", json={"by": fact}).status_code == 200
        assert c.post(f"/api/v1/memory/{fact}/links", json={"to": alices}).status_code == 201
        for client, mine in ((c, alices), (b, bobs)):
            for answer in (client.get(f"/api/v1/memory/{fact}/supersedes").json(),
                           _by_key(client, "GET", "office", "/supersedes").json()):
                assert [m["id"] for m in answer["supersedes"]] == [mine]
        assert b.get(f"/api/v1/memory/{fact}").json()["links"] == []
        assert b.get(f"/api/v1/memory/{fact}/links").json()["neighbours"] == []


def test_an_unlink_by_path_names_the_path_segment_it_refused(served: Served) -> None:
    """``DELETE /memory/{ref}/links/{other}`` names a refused end ``ref`` or ``other``, as ``POST
    /links`` names ``to`` and the by-key form ``other``: it named the engine's ``a`` and ``b``.
    Nothing is unlinked."""
    with served.client(served.alice) as c:
        one = c.post("/api/v1/memory", json={"content": "Alice lives in Lisbon", "key": "home"}).json()["memory_id"]
        two = c.post("/api/v1/memory", json={"content": "Lisbon is by the sea", "key": "sea"}).json()["memory_id"]
        assert c.post(f"/api/v1/memory/{one}/links", json={"to": two}).status_code == 201
        for path, field in ((f"/api/v1/memory/{one}/links/%00", "other"), ("/api/v1/memory/%00/links/sea", "ref"),
                            ("/api/v1/memory/home/links/%20", "other"), ("/api/v1/memory/%20/links/sea", "ref")):
            r = c.delete(path)
            assert r.status_code == 422 and r.json()["field"] == field, (path, r.text)
        assert c.get(f"/api/v1/memory/{one}").json()["links"] == [two]
        assert c.delete("/api/v1/memory/home/links/sea").json() == {"unlinked": True}


def test_links_and_supersedes_take_the_engines_limit_at_every_door(served: Served, isolated_home: Path) -> None:
    """``Engram.neighbours`` and ``Engram.supersedes`` take a limit of 1 to ``MAX_LIST_LIMIT``: HTTP's
    ``/links`` and ``/supersedes`` (by id and by key) take the same bound, and the CLI's help states it."""
    with served.client(served.alice) as c:
        new = c.post("/api/v1/memory", json={"content": "Alice lives in Lisbon", "key": "home"}).json()["memory_id"]
        for sub in ("/supersedes", "/links"):
            for call in (lambda params, sub=sub: c.get(f"/api/v1/memory/{new}{sub}", params=params),
                         lambda params, sub=sub: _by_key(c, "GET", "home", sub, params=params)):
                assert call({"limit": MAX_LIST_LIMIT}).status_code == 200, sub
                refused = call({"limit": MAX_LIST_LIMIT + 1})
                assert refused.status_code == 422 and "limit" in refused.text, (sub, refused.text)
    with pytest.raises(ValidationError, match="limit"):
        served.engram.for_agent("alice").supersedes(new, limit=MAX_LIST_LIMIT + 1)
    assert served.engram.for_agent("alice").supersedes(new, limit=MAX_LIST_LIMIT) == []
    # The CLI passes its --limit to the engine, which checks it; its help names the same bound.
    for command in ("supersedes", "neighbours"):
        shown = engram(isolated_home, command, "--help")
        assert f"(1 to {MAX_LIST_LIMIT})" in shown.stdout, shown.stdout


def test_a_superseded_neighbour_is_listed_marked_so_it_can_be_unlinked(served: Served, isolated_home: Path) -> None:
    """``/links`` lists a neighbour superseded since (its ``superseded_by`` set), as the memory's own
    ``links`` names it, so the page and a client can unlink it; ``engram neighbours`` and ``engram get``
    list it marked; the graph's neighbourhood, like recall, still leaves it out."""
    alice = served.engram.for_agent("alice")
    cats = alice.remember("Alice keeps two cats", key="cats").memory
    porto = alice.remember("Alice lives in Porto with her cats", key="porto").memory
    lisbon = alice.remember("Alice lives in Lisbon", key="lisbon").memory
    alice.link(cats, porto)
    alice.supersede(porto, lisbon)
    with served.client(served.alice) as c:
        assert c.get("/api/v1/memory/cats").json()["links"] == [porto.id]
        for answer in (c.get("/api/v1/memory/cats/links"), _by_key(c, "GET", "cats", "/links")):
            assert [(m["id"], m["superseded_by"]) for m in answer.json()["neighbours"]] == [(porto.id, lisbon.id)]
        graph = c.get("/api/v1/graph", params={"q": "cats"}).json()
        assert cats.id in {n["id"] for n in graph["nodes"]} and porto.id not in {n["id"] for n in graph["nodes"]}
    env = {"ENGRAM_PATH": str(served.db_path), "ENGRAM_AGENT": "alice"}
    shown = _engram_with(isolated_home, env, "neighbours", "cats")
    assert shown.returncode == 0 and "porto" in shown.stdout and "superseded" in shown.stdout, shown
    detail = _engram_with(isolated_home, env, "get", "cats")
    assert "porto (superseded)" in detail.stdout, detail.stdout
    with served.client(served.alice) as c:
        assert c.delete(f"/api/v1/memory/cats/links/{porto.id}").json() == {"unlinked": True}
        assert c.get("/api/v1/memory/cats/links").json()["neighbours"] == []


def _engram_with(home: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "engram", *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "ENGRAM_HOME": str(home), "COLUMNS": "200", **env})
