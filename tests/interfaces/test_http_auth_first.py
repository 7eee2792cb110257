"""A request without a valid token gets 401 before anything about its query, path or body is
checked: an unauthenticated caller learns nothing of a route's parameters, and someone debugging a
bad token is told the real problem. With a valid token the same request gets its 422 or 400, as before.
Over a real socket."""

from __future__ import annotations

import re

import httpx
import pytest

from tests.interfaces.conftest import Served

PROBLEM = "application/problem+json"
WRONG = {"Authorization": "Bearer wrong"}

# (method, path, body) requests each refused for its query, path or body once authenticated.
BAD_QUERY = [
    ("GET", "/api/v1/memory?tags=x", None),  # a parameter the route does not take
    ("GET", "/api/v1/memory?limit=1&limit=2", None),  # one that takes one value, given twice
    ("GET", "/api/v1/memory/%FF%FE", None),  # a path segment that is not UTF-8
    ("GET", "/api/v1/memory/by-key?key=%E9", None),  # a query value that is not UTF-8
    ("GET", "/api/v1/history/web%3Aa/summary?limit=3", None),
]
BAD_BODY = [
    ("POST", "/api/v1/memory", b"{not json"),  # malformed JSON
    ("POST", "/api/v1/memory", b'{"content": "a", "content": "b"}'),  # a field named twice
    ("POST", "/api/v1/memory", b'{"content": "\xff"}'),  # not UTF-8
    ("POST", "/api/v1/memory/forget", b"["),
    ("PATCH", "/api/v1/memory/some-key", b"{"),
    ("POST", "/api/v1/history/web%3Aa", b"{"),
    ("POST", "/api/v1/import/mem0", b"{"),
    ("POST", "/api/memory/semantic-recall", b"{"),
]


def _send(c: httpx.Client, method: str, path: str, body: bytes | None) -> httpx.Response:
    headers = {"Content-Type": "application/json"} if body is not None else {}
    return c.request(method, path, content=body, headers=headers)


def _assert_unauthorized(r: httpx.Response) -> None:
    assert r.status_code == 401, r.text
    assert r.headers["content-type"].startswith(PROBLEM)
    assert r.headers["www-authenticate"] == "Bearer"
    problem = r.json()
    assert problem["status"] == 401 and "bearer token" in problem["detail"]
    assert "errors" not in problem and "allowed" not in problem  # nothing about the route's parameters


@pytest.mark.parametrize(("method", "path", "body"), BAD_QUERY + BAD_BODY)
def test_a_bad_token_is_refused_before_the_query_path_or_body(served: Served, method: str, path: str,
                                                              body: bytes | None) -> None:
    with served.client(**WRONG) as c:
        _assert_unauthorized(_send(c, method, path, body))
    with served.client() as c:  # no token at all
        _assert_unauthorized(_send(c, method, path, body))
    with served.client(served.alice) as c:  # a valid token: refused for what it sent, as before
        r = _send(c, method, path, body)
    assert r.status_code == (422 if body is None else 400), r.text
    assert r.headers["content-type"].startswith(PROBLEM)
    assert r.json()["field"]


def test_the_unknown_parameter_error_an_authenticated_caller_gets_is_unchanged(served: Served) -> None:
    with served.client(**WRONG) as c:
        _assert_unauthorized(c.get("/api/v1/memory", params={"tags": "x"}))
    with served.client(served.alice) as c:
        unknown = c.get("/api/v1/memory", params={"tags": "x"})
        twice = c.get("/api/v1/memory?limit=1&limit=2")
        undecodable = c.get("/api/v1/memory/%FF%FE")
    assert unknown.status_code == 422
    assert unknown.json()["field"] == "tags" and "tag" in unknown.json()["allowed"]
    assert twice.status_code == 422 and twice.json()["field"] == "limit" and "given twice" in twice.json()["detail"]
    assert undecodable.status_code == 422 and undecodable.json()["field"] == "ref"


def test_every_api_route_checks_the_token_first_and_the_other_doors_answer_as_before(served: Served) -> None:
    # Each route the API documents, sent a parameter no route takes and a body that is not JSON,
    # with a wrong token: 401 from every one (a route added later is covered too).
    with served.client() as c:
        spec = c.get("/openapi.json").json()
    sent = 0
    with served.client(**WRONG) as c:
        for path, operations in spec["paths"].items():
            if not path.startswith("/api/"):
                continue
            url = re.sub(r"\{[^}]+\}", "x", path) + "?no_such_parameter=1&limit=1&limit=2"
            for method in operations:
                body = b"{" if method in ("post", "put", "patch") else None
                r = _send(c, method.upper(), url, body)
                assert r.status_code == 401, (method, path, r.text)
                sent += 1
    assert sent > 30  # every route, not none

    # The doors that need no route token answer as before: no token, /metrics' own check, /mcp's.
    with served.client(**WRONG) as c:
        assert c.get("/healthz?anything=1").json() == {"status": "ok"}
        assert c.get("/readyz").status_code == 200
        assert c.get("/openapi.json").status_code == 200
        assert c.get("/").status_code == 200
        # Answered before any route runs, as docs/http.md says: a path or method no route takes, a body over the limit.
        assert c.get("/api/v1/no-such-route").status_code == 404
        assert c.post("/api/v1/stats").status_code == 405
        assert c.post("/api/v1/memory", content=b"x" * 70_000, headers={"Content-Type": "application/json"}).status_code == 413
    with served.client(served.alice) as c:  # /metrics: another agent's valid token is 403, as documented
        assert c.get("/metrics").status_code == 403
    headers = {**WRONG, "Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    with served.client() as c:
        r = c.post("/mcp", content=b"{not json", headers=headers)
    assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
