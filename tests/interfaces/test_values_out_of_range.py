"""Values that parse but cannot be kept or shown are refused at the door, naming the field, and
leave nothing behind: times beyond what a date can show (which broke every later command that
printed the memory), NaN and infinities, metadata that is not JSON, tags and names of the wrong
type, keys with line breaks. Library, CLI as a real process, HTTP over a real socket, imports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engram.engine import Engram
from engram.errors import SnapshotError, ValidationError
from tests.interfaces.conftest import Served

FAR_FUTURE = 1e300


@pytest.fixture
def mem(tmp_path: Path):
    with Engram.from_settings(home=tmp_path, embeddings={"provider": "none"}, files={"enabled": False}) as engram:
        engram.remember("already stored", key="kept")
        yield engram


@pytest.mark.parametrize(("fields", "field"), [
    ({"created_at": FAR_FUTURE}, "created_at"),
    ({"created_at": float("nan")}, "created_at"),
    ({"valid_from": FAR_FUTURE}, "valid_from"),
    ({"valid_from": "1e300"}, "valid_from"),
    ({"valid_until": "nan"}, "valid_until"),
    ({"valid_from": "-inf"}, "valid_from"),
    ({"valid_from": 10**400}, "valid_from"),
    ({"metadata": {"a": float("nan")}}, "metadata"),
    ({"metadata": {"a": [1, float("inf")]}}, "metadata"),
    ({"tags": 5}, "tags"),
    ({"tags": {"k1": 1}}, "tags"),
    ({"tags": ["two\nlines"]}, "tags"),
    ({"importance": True}, "importance"),
    ({"key": "two\nlines"}, "key"),
    ({"key": "tab\there"}, "key"),
    ({"related_entity": ["a", 1]}, "related_entity"),
    ({"source": 7}, "source"),
])
def test_library_refuses_naming_the_field_and_keeps_what_was_stored(mem: Engram, fields: dict, field: str) -> None:
    with pytest.raises(ValidationError) as raised:
        mem.remember("a new memory", **fields)
    assert raised.value.field == field
    assert raised.value.allowed
    assert [m.key for m in mem.list()] == ["kept"]
    assert mem.get("kept").content == "already stored"


def test_the_edges_of_the_range_are_kept_and_shown(mem: Engram) -> None:
    early = mem.remember("ancient", key="early", valid_from="0002-01-01").memory
    late = mem.remember("far ahead", key="late", valid_from="9998-12-31T23:59:59Z").memory
    assert mem.get("early").valid_from == early.valid_from
    assert mem.get("late").valid_from == late.valid_from
    with pytest.raises(ValidationError, match="0002-01-01 to 9998-12-31"):
        mem.remember("too late", valid_from="9999-01-01")


def test_message_times_are_refused_out_of_range(mem: Engram) -> None:
    with pytest.raises(ValidationError) as raised:
        mem.history.append("web:1", "user", "hello", created_at=FAR_FUTURE)
    assert raised.value.field == "created_at"


def test_an_import_with_an_impossible_time_imports_nothing(mem: Engram) -> None:
    source = json.dumps({"results": [{"id": "a1", "memory": "fine"}, {"id": "a2", "memory": "far", "created_at": 1e300}]})
    with pytest.raises(SnapshotError) as raised:
        mem.import_from(source, "mem0")
    assert "results[1]" in str(raised.value) and "created_at" in str(raised.value)
    assert [m.key for m in mem.list()] == ["kept"]



@pytest.mark.parametrize(("entry", "field"), [
    ('"created_at": 1e300', "created_at"),
    ('"timestamp": NaN', "created_at"),
    ('"updated_at": -1e20', "updated_at"),
    ('"last_accessed": Infinity', "last_accessed"),
    ('"received_at": 1e300', "received_at"),
    ('"recall_count": Infinity', "recall_count"),
    ('"recall_count": 1e300', "recall_count"),
    ('"recall_count": -3', "recall_count"),
    ('"recall_count": 2.7', "recall_count"),
])
def test_an_engram_snapshot_with_an_impossible_time_or_count_is_a_422_and_imports_nothing(
        served: Served, entry: str, field: str) -> None:
    # A snapshot's 1e300 was stored (`engram list` then failed), its NaN or Infinity was a 500.
    body = '{"memories": [{"content": "fine", "key": "a"}, {"content": "odd", "key": "b", ' + entry + "}]}"
    with served.client(served.alice) as http:
        answer = http.post("/api/v1/import", content=body, headers={"Content-Type": "application/json"})
        assert answer.status_code == 422, answer.text
        assert answer.json()["field"] == f"memories[1].{field}", answer.text
        assert http.get("/api/v1/memory").json()["memories"] == []
        assert http.post("/api/v1/import", json={"memories": [{"content": "fine", "recall_count": 3.0,
                                                               "created_at": -62135596800}]}).status_code == 422
        kept = http.post("/api/v1/import", json={"memories": [{"content": "fine", "key": "a", "recall_count": 3.0}]})
        assert kept.json() == {"imported": 1, "skipped": 0, "warnings": []}
        assert http.get("/api/v1/memory/a").json()["recall_count"] == 3

@pytest.mark.parametrize("count", [2**63, -3, 2.5])
def test_a_snapshot_count_out_of_range_is_worded_as_every_range_is(mem: Engram, count: float) -> None:
    # Its top is SQLite's largest integer, no limit a person meets: "0 or more" (``range_words``),
    # as a memory file's count says, not "from 0 to 9223372036854775807".
    with pytest.raises(SnapshotError) as raised:
        mem.import_from(json.dumps({"memories": [{"content": "odd", "recall_count": count}]}))
    assert raised.value.field == "memories[0].recall_count"
    assert raised.value.allowed == "a whole number, 0 or more"
    assert [m.key for m in mem.list()] == ["kept"]


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "ENGRAM_HOME": str(home), "ENGRAM_EMBEDDINGS__PROVIDER": "none", "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "engram", *args], capture_output=True, text=True, env=env, timeout=120)


def test_cli_refuses_a_time_beyond_the_dates_and_later_commands_still_work(isolated_home: Path) -> None:
    assert _cli(isolated_home, "remember", "kept one", "--key", "kept").returncode == 0
    refused = _cli(isolated_home, "remember", "far one", "--valid-from", "1e300")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "--valid-from:" in refused.stderr and "0002-01-01" in refused.stderr  # the option typed
    listed = _cli(isolated_home, "--json", "list")
    assert listed.returncode == 0, listed.stderr
    assert [m["key"] for m in json.loads(listed.stdout)] == ["kept"]


def test_http_refuses_nan_metadata_and_impossible_times(served: Served) -> None:
    with served.client(served.alice) as http:
        # Python's json writes NaN as the bare word, as some clients do; a strict parser refuses it.
        for body, field in (('{"content": "x", "metadata": {"a": NaN}}', "metadata"),
                            ('{"content": "x", "valid_from": 1e300}', "valid_from")):
            answer = http.post("/api/v1/memory", content=body, headers={"Content-Type": "application/json"})
            assert answer.status_code in (400, 422), answer.text
            assert field in answer.text
        assert http.get("/api/v1/memory").json()["memories"] == []


@pytest.mark.parametrize(("raw", "field"), [
    ({"created_at": 1e300}, "created_at"),
    ({"updated_at": float("nan")}, "updated_at"),
    ({"last_accessed": "inf"}, "last_accessed"),
    ({"superseded_at": -1e20}, "superseded_at"),
    ({"recall_count": float("nan")}, "recall_count"),
    ({"recall_count": -3}, "recall_count"),
    ({"recall_count": 1.5}, "recall_count"),
])
def test_a_memory_file_entry_with_an_impossible_number_is_refused_naming_it(raw: dict, field: str) -> None:
    from engram.files.entry import build_entry

    with pytest.raises(ValidationError) as raised:
        build_entry({"content": "from a file", **raw}, max_content_chars=1000)
    assert raised.value.field == field


def test_forget_selector_errors_name_each_doors_own_parameters(served: Served, isolated_home: Path) -> None:
    with served.client(served.alice) as http:
        answer = http.post("/api/v1/memory/forget", json={"query": "x", "tag": "y"})
        assert answer.status_code in (400, 422), answer.text
        assert "older_than_days" in answer.text and "older_than_s" not in answer.text
    refused = _cli(isolated_home, "forget", "--query", "x", "--older-than", "3d")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "--older-than" in refused.stderr and "older_than_s" not in refused.stderr


@pytest.mark.parametrize(("filters", "field"), [
    ({"category": 7}, "category"), ({"type": 5}, "type"), ({"layer": 3}, "layer"), ({"tags": 5}, "tags"),
    ({"related_entity": 4}, "related_entity"), ({"since": "whenever"}, "since"), ({"until": float("nan")}, "until"),
    ({"since": True}, "since"), ({"since": "today", "until": "yesterday"}, "until"), ({"as_of": "someday"}, "as_of"),
])
def test_library_filters_of_the_wrong_type_name_their_field(mem: Engram, filters: dict, field: str) -> None:
    from engram.engine import Filters

    with pytest.raises(ValidationError) as raised:
        mem.list(Filters(**filters))
    assert raised.value.field == field


def test_agent_and_session_names_of_the_wrong_type_name_their_field(mem: Engram) -> None:
    for call, field in ((lambda: mem.for_agent(5), "agent"), (lambda: mem.for_session(["s"]), "session")):
        with pytest.raises(ValidationError) as raised:
            call()
        assert raised.value.field == field


def test_forget_older_than_any_date_forgets_nothing_and_nan_is_refused(mem: Engram) -> None:
    assert mem.forget(older_than_s=1e15) == []  # before the earliest date engram reads: none is older
    with pytest.raises(ValidationError) as raised:
        mem.forget(older_than_s=float("nan"))
    assert raised.value.field == "older_than_s"
    assert [m.content for m in mem.list()] == ["already stored"]


@pytest.mark.parametrize("tag", ["", " ", ",", [""]])
def test_forget_by_an_empty_tag_is_refused_and_forgets_nothing(mem: Engram, tag) -> None:  # noqa: ANN001
    mem.remember("tagged", tags=["keep"])
    with pytest.raises(ValidationError) as raised:
        mem.forget(tag=tag)
    assert raised.value.field == "tag"
    assert sorted(m.content for m in mem.list()) == ["already stored", "tagged"]


def test_http_forget_by_an_empty_tag_is_a_422(served: Served) -> None:
    with served.client(served.alice) as http:
        assert http.post("/api/v1/memory", json={"content": "kept"}).status_code == 201
        answer = http.post("/api/v1/memory/forget", json={"tag": ""})
        assert answer.status_code == 422 and "tag" in answer.text
        assert len(http.get("/api/v1/memory").json()["memories"]) == 1


def _nested(depth: int) -> dict:
    value: dict = {"leaf": 1}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


def test_metadata_nested_too_deep_is_refused_and_every_read_keeps_working(served: Served) -> None:
    with served.client(served.alice) as http, served.client(served.bob) as bob:
        assert http.post("/api/v1/memory", json={"content": "fine", "metadata": _nested(32)}).status_code == 201
        refused = http.post("/api/v1/memory", json={"content": "poison", "key": "poison", "scope": "global",
                                                    "metadata": _nested(300)})
        assert refused.status_code == 422 and "metadata" in refused.text
        snapshot = {"format": "engram-snapshot", "version": 1,
                    "memories": [{"content": "poison again", "metadata": _nested(900)}]}
        assert http.post("/api/v1/import", json=snapshot).status_code in (400, 422)
        assert bob.get("/api/v1/memory").status_code == 200
        assert bob.get("/api/v1/audit").status_code == 200
        assert [m["content"] for m in http.get("/api/v1/memory").json()["memories"]] == ["fine"]


def test_dates_at_the_calendars_end_in_queries_are_words_or_a_422_never_a_500(served: Served) -> None:
    with served.client(served.alice) as http:
        assert http.post("/api/v1/memory", json={"content": "launch happened"}).status_code == 201
        for query in ("what happened on 9999-12-31", "things in December 9999", "on 31 December 9999 launch"):
            assert http.get("/api/v1/memory/search", params={"q": query}).status_code == 200, query
            assert http.get("/api/v1/graph", params={"q": query}).status_code == 200, query
        for when in ("after 9999-12-31", "since 9999-12-31", "on 9999-12-31"):
            answer = http.get("/api/v1/memory/search", params={"q": "launch", "when": when})
            assert answer.status_code == 422 and "when" in answer.text, (when, answer.text)


@pytest.mark.parametrize("kind", ["mem0", "auto", "mcp-memory", "mcp-memory-service", "clawless", "snapshot"])
def test_an_import_nested_past_the_recursion_limit_is_a_422(served: Served, kind: str) -> None:
    deep = "[" * 5000 + "]" * 5000
    with served.client(served.alice) as http:
        answer = http.post(f"/api/v1/import/{kind}", json={"text": deep})
        assert answer.status_code in (400, 422), (kind, answer.status_code, answer.text)
        assert "nested too deeply" in answer.text or "malformed" in answer.text, answer.text


def test_a_snapshot_nested_past_the_recursion_limit_is_a_snapshot_error(mem: Engram) -> None:
    with pytest.raises(SnapshotError, match="nested too deeply"):
        mem.import_snapshot('{"memories": ' + "[" * 5000 + "]" * 5000 + "}")


@pytest.mark.parametrize("field", ["importance", "valid_from", "valid_until"])
def test_http_refuses_true_for_a_number_or_time(served: Served, field: str) -> None:
    with served.client(served.alice) as http:
        answer = http.post("/api/v1/memory", json={"content": "x", field: True})
        assert answer.status_code == 422 and field in answer.text
        assert http.post("/api/v1/memory", json={"content": "y", "importance": 1}).status_code == 201  # an int is a number


@pytest.mark.parametrize("limit", [-1, 0, 1001, "3", 2.5, True])  # 2.0 is the integer 2
def test_neighbours_limit_out_of_range_is_refused_naming_it(mem: Engram, limit) -> None:  # noqa: ANN001
    # The stores slice by it: -1 dropped the last neighbour, 0 returned none, "3" was a TypeError.
    for n in range(3):
        mem.remember(f"spoke {n}", key=f"spoke-{n}", links=["kept"])
    with pytest.raises(ValidationError) as refused:
        mem.neighbours(key="kept", limit=limit)
    assert refused.value.field == "limit" and "1 to 1000" in str(refused.value)
    assert len(mem.neighbours(key="kept", limit=1000)) == 3


def test_cli_neighbours_refuses_a_negative_limit(isolated_home: Path) -> None:
    assert _cli(isolated_home, "remember", "the hub", "--key", "hub").returncode == 0
    assert _cli(isolated_home, "remember", "a spoke", "--key", "spoke", "--link", "hub").returncode == 0
    refused = _cli(isolated_home, "--json", "neighbours", "hub", "--limit", "-1")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "limit" in refused.stderr and "1 to 1000" in refused.stderr
