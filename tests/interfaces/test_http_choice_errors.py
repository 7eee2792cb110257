"""A query value outside its parameter's choices answers one shape over HTTP, whichever part
refuses it: 422 naming the parameter (``field``), the choices (``allowed``) and the fault in
``errors``. ``?order=``, ``?scope=`` and ``?mode=`` are refused by the route's schema, which lists
each fault in ``errors``; ``?layer=``, ``?category=`` and the audit's ``?action=`` by the engine,
whose 422 carried no ``errors``, so a client reading that list found nothing for ``?layer=top``.
Over a real socket, with a real store that keeps what it had."""

from __future__ import annotations

import pytest

from tests.interfaces.conftest import Served

# (path and query, the parameter named, a word of what is allowed)
CHOICES = [
    ("/api/v1/memory?layer=top", "layer", "episodic"),
    ("/api/v1/memory/search?q=tea&layer=top", "layer", "episodic"),
    ("/api/v1/memory?category=feelings", "category", "knowledge"),
    ("/api/v1/memory/search?q=tea&category=feelings", "category", "knowledge"),
    ("/api/v1/memory?order=sideways", "order", "recent"),
    ("/api/v1/memory?scope=planet", "scope", "global"),
    ("/api/v1/memory/search?q=tea&scope=planet", "scope", "global"),
    ("/api/v1/memory/search?q=tea&mode=psychic", "mode", "hybrid"),
    ("/api/v1/export?scope=planet", "scope", "global"),
    ("/api/v1/audit?action=nosuch", "action", "stored"),
]


@pytest.mark.parametrize(("url", "field", "choice"), CHOICES)
def test_a_value_outside_the_choices_lists_its_fault_in_errors(served: Served, url: str, field: str,
                                                               choice: str) -> None:
    with served.client(served.alice) as client:
        assert client.post("/api/v1/memory", json={"content": "Ada drinks tea", "key": "tea"}).status_code == 201
        refused = client.get(url)
        assert refused.status_code == 422, refused.text
        assert refused.headers["content-type"].startswith("application/problem+json")
        body = refused.json()
        assert body["field"] == field, body
        assert choice in body["allowed"], body
        assert [e["field"] for e in body["errors"]] == [field], body
        assert all(e["problem"] for e in body["errors"]), body
        assert body["detail"].startswith(f"{field}: "), body
        assert client.get("/api/v1/memory/tea").json()["content"] == "Ada drinks tea"
