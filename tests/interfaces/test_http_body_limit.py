"""A body over the limit is answered 413 that the client actually receives, on a kept-alive
connection, whether the client sends it all before reading (most clients) or waits for
"100 Continue"."""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlsplit

from tests.interfaces.conftest import Served

BIG = 8_000_000  # the served app's limit is 64,000 bytes


def _connection(served: Served) -> http.client.HTTPConnection:
    url = urlsplit(served.url)
    return http.client.HTTPConnection(url.hostname, url.port, timeout=60)


def test_declared_body_over_limit_gets_its_413_and_the_connection_stays_usable(served: Served) -> None:
    conn = _connection(served)
    auth = {"Authorization": f"Bearer {served.alice}", "Content-Type": "application/json"}
    for _ in range(3):  # the same kept-alive connection each time
        body = json.dumps({"content": "x" * BIG}).encode()
        conn.request("POST", "/api/v1/memory", body=body, headers=auth)
        response = conn.getresponse()
        problem = json.loads(response.read())
        assert response.status == 413 and problem["field"] == "body"
        assert response.getheader("connection") != "close"
    conn.request("GET", "/api/v1/stats", headers=auth)
    stats = conn.getresponse()
    assert stats.status == 200 and json.loads(stats.read())["memories"] == 0
    conn.close()


def test_chunked_body_over_limit_gets_its_413(served: Served) -> None:
    conn = _connection(served)
    chunks = [b'{"content": "'] + [b"y" * 100_000] * 40 + [b'"}']
    conn.request("POST", "/api/v1/memory", body=iter(chunks), encode_chunked=True,
                 headers={"Authorization": f"Bearer {served.alice}", "Content-Type": "application/json",
                          "Transfer-Encoding": "chunked"})
    response = conn.getresponse()
    assert response.status == 413 and json.loads(response.read())["field"] == "body"
    conn.close()


def test_client_waiting_for_continue_is_answered_without_sending_its_body(served: Served) -> None:
    conn = _connection(served)
    conn.putrequest("POST", "/api/v1/memory")
    for name, value in (("Authorization", f"Bearer {served.alice}"), ("Content-Type", "application/json"),
                        ("Content-Length", str(BIG)), ("Expect", "100-continue")):
        conn.putheader(name, value)
    conn.endheaders()  # headers only: the body is never sent
    response = conn.getresponse()
    assert response.status == 413 and json.loads(response.read())["field"] == "body"
    assert response.getheader("connection") == "close"
    conn.close()


def test_the_413_names_the_limit_and_the_setting_that_raises_it_at_the_api_and_mcp_doors(served: Served) -> None:
    # The served app's limit is 64,000 bytes: the REST API and MCP over HTTP (/mcp) answer alike.
    big = json.dumps({"content": "x" * 100_000})
    mcp_call = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"name": "remember", "arguments": {"content": "x" * 100_000}}})
    with served.client(served.alice) as client:
        for path, body, extra in (("/api/v1/memory", big, {}),
                                  ("/mcp", mcp_call, {"Accept": "application/json, text/event-stream"})):
            refused = client.post(path, content=body, headers={"Content-Type": "application/json", **extra})
            assert refused.status_code == 413, (path, refused.text)
            problem = refused.json()
            assert "64,000 bytes" in problem["detail"] and "server.max_body_bytes" in problem["detail"], problem
            assert "ENGRAM_SERVER__MAX_BODY_BYTES" in problem["allowed"] and problem["limit"] == 64_000
        assert client.get("/api/v1/stats").json()["memories"] == 0
