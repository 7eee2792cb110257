"""/openapi.json says of each body field whether null is taken, as the server reads it (OpenAPI 3.1:
``anyOf`` with ``{"type": "null"}``): a null the server takes (as "not given", or as "clear") is
documented, and a null it refuses naming the field is not. It said ``"erase": {"type": "boolean"}``
for a field the server took null for (a schema-driven client or test then counts the server wrong),
and allowed null for PATCH's ``content``, which the server refuses."""

from __future__ import annotations

from typing import Any

import jsonschema

from tests.interfaces.conftest import Served


def _documented_null(schema: dict[str, Any], name: str, body: dict[str, Any]) -> bool:
    try:
        jsonschema.validate(body, {**schema["components"]["schemas"][name], "components": schema["components"]})
    except jsonschema.ValidationError:
        return False
    return True


def test_each_body_fields_null_is_documented_as_the_server_reads_it(served: Served) -> None:
    with served.client(served.alice) as api:
        schema = api.get("/openapi.json").json()
        memory = api.post("/api/v1/memory", json={"content": "the red kettle"}).json()["memory_id"]
        operations = [
            ("POST", "/api/v1/memory", "/api/v1/memory", {"content": "a new fact {n}"}),
            ("PUT", "/api/v1/memory/{ref}", f"/api/v1/memory/{memory}", {"content": "replaced {n}"}),
            ("PATCH", "/api/v1/memory/{ref}", f"/api/v1/memory/{memory}", {"content": "patched {n}"}),
            ("POST", "/api/v1/memory/forget", "/api/v1/memory/forget", {"query": "matches-nothing-{n}", "dry_run": True}),
            ("POST", "/api/v1/history/{conversation}", "/api/v1/history/cli:c1",
             {"role": "assistant", "content": "calling {n}",
              "tool_calls": [{"id": "t{n}", "name": "look", "arguments": "{{}}"}]}),
            ("POST", "/api/memory/semantic-recall", "/api/memory/semantic-recall", {"input": "kettle {n}"}),
            ("PUT", "/api/v1/history/{conversation}/summary", "/api/v1/history/cli:c1/summary", {"summary": "so far {n}"}),
            ("POST", "/api/v1/memory/{ref}/links", f"/api/v1/memory/{memory}/links", {"to": memory}),
        ]
        checked, n = [], 0
        for method, documented, path, base in operations:
            body_ref = schema["paths"][documented][method.lower()]["requestBody"]["content"]["application/json"]["schema"]
            name = body_ref["$ref"].rsplit("/", 1)[-1]
            for field in schema["components"]["schemas"][name]["properties"]:
                n += 1
                body = {key: _numbered(value, n) for key, value in base.items()}
                body[field] = None
                answer = api.request(method, path, json=body)
                refused = answer.status_code == 422 and answer.json()["field"] == field
                assert answer.status_code < 500, answer.text
                assert _documented_null(schema, name, body) is not refused, (method, documented, field, answer.text)
                checked.append((name, field, refused))
        # Both kinds were met: nulls taken (as not given, or clearing a field) and nulls refused.
        assert ("MemoryIn", "category", False) in checked and ("ForgetIn", "erase", False) in checked
        assert ("MemoryPatch", "content", True) in checked and ("MemoryPatch", "tags", False) in checked
        assert ("MemoryIn", "content", True) in checked


def test_readiness_answer_matches_its_documented_schema(served: Served) -> None:
    with served.client() as anyone:
        schema = anyone.get("/openapi.json").json()
        answer = anyone.get("/readyz")
        documented = schema["paths"]["/readyz"]["get"]["responses"][str(answer.status_code)]["content"]
        jsonschema.validate(answer.json(), {**documented["application/json"]["schema"], "components": schema["components"]})


def _numbered(value: Any, n: int) -> Any:
    if isinstance(value, str):
        return value.format(n=n)
    if isinstance(value, list):
        return [_numbered(item, n) for item in value]
    if isinstance(value, dict):
        return {key: _numbered(item, n) for key, item in value.items()}
    return value
