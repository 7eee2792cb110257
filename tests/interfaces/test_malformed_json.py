"""JSON that Python's parser fails on in ways other than ``JSONDecodeError`` (bytes that are not
UTF-8, nesting past the recursion limit, a number of more than 4,300 digits), and JSON naming one
field twice, are refused as malformed JSON saying what is wrong, storing nothing: request bodies
over a real socket, and metadata and tool calls given as JSON text to the library. Before, HTTP
answered the first three with a bare "There was an error parsing the body" and stored the last
under its second value; the library raised ``RecursionError`` / ``ValueError``."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.engine import Engram
from engram.errors import ValidationError
from tests.interfaces.conftest import Served

BODIES = [
    (b'{"content": "\xff\xfe"}', "not UTF-8"),
    (b'{"content": "x", "metadata": ' + b'{"a": ' * 5000 + b"1" + b"}" * 5001, "nested too deeply"),
    (b'{"content": "x", "tags": ' + b"[" * 5000 + b"]" * 5000 + b"}", "nested too deeply"),
    (b'{"content": "x", "metadata": {"n": ' + b"9" * 5000 + b"}}", "longer than"),
    (b'{"content": "first", "content": "second"}', '"content" is given twice'),
    (b'{"content": "x", "metadata": {"a": 1, "a": 2}}', '"a" is given twice'),
]


@pytest.mark.parametrize(("body", "reason"), BODIES)
def test_http_names_what_is_wrong_with_a_body_and_stores_nothing(served: Served, body: bytes, reason: str) -> None:
    with served.client(served.alice) as http:
        answer = http.post("/api/v1/memory", content=body, headers={"Content-Type": "application/json"})
        assert answer.status_code == 400, answer.text
        problem = answer.json()
        assert problem["type"].endswith("/malformed-json") and problem["field"] == "body", problem
        assert reason in problem["detail"], problem
        assert "UTF-8" in problem["allowed"] and "once" in problem["allowed"], problem
        assert http.get("/api/v1/memory").json()["memories"] == []


def test_http_says_where_ordinary_malformed_json_breaks(served: Served) -> None:
    with served.client(served.alice) as http:
        answer = http.post("/api/v1/memory", content=b'{"content": "x", "tags": [',
                           headers={"Content-Type": "application/json"})
        assert answer.status_code == 400, answer.text
        assert answer.json()["detail"] == "the body is not valid JSON: Expecting value at character 26", answer.text


def test_a_body_naming_each_field_once_is_stored_as_sent(served: Served) -> None:
    # The same names in different objects are not a repeat.
    with served.client(served.alice) as http:
        body = b'{"content": "kept", "metadata": {"a": {"a": 1}, "b": [{"a": 2}, {"a": 3}]}}'
        answer = http.post("/api/v1/memory", content=body, headers={"Content-Type": "application/json"})
        assert answer.status_code == 201, answer.text
        assert answer.json()["memory"]["metadata"] == {"a": {"a": 1}, "b": [{"a": 2}, {"a": 3}]}


@pytest.mark.parametrize(("text", "reason"), [
    ('{"a": ' * 5000 + "1" + "}" * 5000, "nested too deeply"),
    ('{"n": ' + "9" * 5000 + "}", "longer than"),
    ('{"a": 1, "a": 2}', '"a" is given twice'),
])
def test_library_metadata_text_is_refused_naming_metadata(tmp_path: Path, text: str, reason: str) -> None:
    with Engram.from_settings(home=tmp_path, embeddings={"provider": "none"}, files={"enabled": False}) as mem:
        with pytest.raises(ValidationError) as refused:
            mem.remember("some fact", metadata=text)
        assert refused.value.field == "metadata" and reason in str(refused.value)
        assert mem.count() == 0


def test_library_tool_calls_text_nested_too_deeply_is_refused(tmp_path: Path) -> None:
    with Engram.from_settings(home=tmp_path, embeddings={"provider": "none"}, files={"enabled": False}) as mem:
        with pytest.raises(ValidationError) as refused:
            mem.history.append("cli:chat", "assistant", "calling", tool_calls="[" * 5000)
        assert refused.value.field == "tool_calls" and "nested too deeply" in str(refused.value)
        assert mem.history.recent("cli:chat") == []
