"""A bad value is refused before anything is written, naming the option or field as sent.

QA: ``engram summaries --make --period hourly`` created the summaries and only then refused
``--period``; ``engram watch --duration -1`` synced the folder and stopped, unrefused; ``engram -s
chat1 maintain`` (a session, no agent named) maintained the whole store, other agents' memories
included; ``history show --limit -1`` named the history's ``n``; an HTTP ``"importance": NaN`` was
told it "should be less than or equal to 1". The CLI as a real process, HTTP over a real socket.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from engram.engine import Engram
from tests.interfaces.conftest import Served
from tests.lifecycle.test_maintain_per_agent import AFTER_MAINTENANCE, EVERYTHING, seed_home, still_there
from tests.unit.test_cli import engram

DAY = 86400.0


def _summaries(home: Path) -> list[str]:
    listed = engram(home, "--json", "list", "--type", "summary")
    assert listed.returncode == 0, listed.stderr
    return [m["key"] for m in json.loads(listed.stdout)]


def test_summaries_make_refuses_a_bad_period_or_limit_before_making_any(isolated_home: Path) -> None:
    with Engram.from_settings(home=isolated_home, embeddings={"provider": "none"}) as setup:
        setup.remember("the tulip bulbs went into the shed", created_at=time.time() - 3 * DAY)  # an ended day
    for args, named, allowed in ((["--period", "hourly"], "--period", "daily, weekly"),
                                 (["--limit", "0"], "--limit", "1 to 1000")):
        refused = engram(isolated_home, "summaries", "--make", *args)
        assert refused.returncode == 2, (args, refused.stdout, refused.stderr)
        assert refused.stderr.startswith(f"error: {named}: "), refused.stderr
        assert f"(allowed: {allowed}" in refused.stderr, refused.stderr
        assert _summaries(isolated_home) == []  # nothing made before the refusal
    made = engram(isolated_home, "--json", "summaries", "--make", "--period", "daily")
    assert made.returncode == 0, made.stderr
    assert [m["metadata"]["period_type"] for m in json.loads(made.stdout)] == ["daily"]
    assert len(_summaries(isolated_home)) >= 1


def test_library_list_summaries_refuses_before_making(tmp_path: Path) -> None:
    from engram.errors import ValidationError
    from engram.lifecycle.settings import SummarySettings
    from engram.lifecycle.summaries import list_summaries

    with Engram.from_settings(home=tmp_path, embeddings={"provider": "none"}) as mem:
        mem.remember("the tulip bulbs went into the shed", created_at=mem.clock() - 3 * DAY)
        with pytest.raises(ValidationError) as refused:
            list_summaries(mem, "hourly", make=SummarySettings())
        assert refused.value.field == "period_type"
        assert [m.type for m in mem.list()] == ["learned"]
        assert [m.metadata["period_type"] for m in list_summaries(mem, "daily", make=SummarySettings())] == ["daily"]


def test_history_show_refuses_a_negative_limit_naming_it_and_0_still_shows_every_message(isolated_home: Path) -> None:
    for text in ("one", "two", "three"):
        assert engram(isolated_home, "history", "append", "cli:1", text).returncode == 0
    refused = engram(isolated_home, "history", "show", "cli:1", "--limit", "-1")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert refused.stderr.startswith("error: --limit: "), refused.stderr
    assert "(allowed: 1 or more, or 0 for every message)" in refused.stderr
    shown = engram(isolated_home, "--json", "history", "show", "cli:1", "--limit", "0")  # documented: 0 = all
    assert [m["content"] for m in json.loads(shown.stdout)["messages"]] == ["one", "two", "three"]
    last = engram(isolated_home, "--json", "history", "show", "cli:1", "--limit", "1")
    assert [m["content"] for m in json.loads(last.stdout)["messages"]] == ["three"]


def test_watch_refuses_a_negative_duration_before_the_first_pass(isolated_home: Path) -> None:
    with Engram.from_settings(home=isolated_home, embeddings={"provider": "none"}, files={"enabled": False}) as setup:
        setup.remember("the tulip bulbs went into the shed", key="tulips")
    for bad in ("-1", "nan"):
        refused = engram(isolated_home, "watch", "--duration", bad)
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert refused.stderr.startswith("error: --duration: "), refused.stderr
        assert "(allowed: a number of seconds, 0 or more)" in refused.stderr
        folder = isolated_home / "memory"
        assert not folder.exists() or not any(p.is_file() for p in folder.rglob("*")), list(folder.rglob("*"))


@pytest.fixture
def maintained_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ENGRAM_EMBEDDINGS__PROVIDER", "none")
    monkeypatch.setenv("ENGRAM_LIFECYCLE__HYGIENE__KNOWLEDGE_SURVIVAL_CHANCE", "0")
    for name in ("ENGRAM_AGENT", "ENGRAM_SESSION", "ENGRAM_CONFIG", "ENGRAM_BACKEND", "ENGRAM_PATH"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path / "home"


def test_maintain_run_as_a_session_keeps_to_its_agent(maintained_home: Path) -> None:
    alice, bob, shared = seed_home(maintained_home)
    ran = engram(maintained_home, "--json", "-s", "chat1", "maintain", "--force")
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout)
    assert (report["agent"], report["store_wide"]) == ("default", False)
    assert still_there(maintained_home, alice) == EVERYTHING
    assert still_there(maintained_home, bob) == EVERYTHING
    assert still_there(maintained_home, shared) == EVERYTHING
    refused = engram(maintained_home, "-s", "chat1", "maintain", "--all-agents")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert refused.stderr.startswith("error: --all-agents: ") and "--session" in refused.stderr
    ran = engram(maintained_home, "--json", "maintain", "--force")  # neither: the operator's store-wide run
    assert json.loads(ran.stdout)["store_wide"] is True
    assert still_there(maintained_home, bob) == AFTER_MAINTENANCE


@pytest.mark.parametrize(("method", "path", "body"), [
    ("POST", "/api/v1/memory", '{"content": "a new one", "importance": NaN}'),
    ("POST", "/api/v1/memory", '{"content": "a new one", "importance": Infinity}'),
    ("PATCH", "/api/v1/memory/kept", '{"importance": NaN}'),
    ("PUT", "/api/v1/memory/kept", '{"content": "replaced", "importance": -Infinity}'),
])
def test_http_importance_that_is_no_number_from_0_to_1_is_refused_naming_it(served: Served, method: str, path: str,
                                                                            body: str) -> None:
    with served.client(served.alice) as http:
        assert http.post("/api/v1/memory", json={"content": "already stored", "key": "kept"}).status_code == 201
        answer = http.request(method, path, content=body, headers={"Content-Type": "application/json"})
        assert answer.status_code == 422, answer.text
        problem = answer.json()
        assert problem["field"] == "importance", problem
        assert problem["detail"].endswith("(allowed: a number from 0 to 1)"), problem
        assert "less than or equal" not in problem["detail"]
        if "NaN" in body:
            assert problem["detail"] == "importance: nan is not a number (allowed: a number from 0 to 1)"
        listed = http.get("/api/v1/memory").json()["memories"]
        assert [(m["key"], m["content"], m["importance"]) for m in listed] == [("kept", "already stored", 0.5)]


def test_http_other_bounded_numbers_name_their_range_for_nan(served: Served) -> None:
    with served.client(served.alice) as http:
        assert http.post("/api/v1/memory", json={"content": "already stored", "key": "kept"}).status_code == 201
        for value in ("nan", "inf"):
            answer = http.get("/api/v1/memory/search", params={"q": "stored", "min_relevance": value})
            assert answer.status_code == 422, answer.text
            assert answer.json()["field"] == "min_relevance"
            assert answer.json()["detail"].endswith("(allowed: a number from 0 to 1)"), answer.text
        answer = http.post("/api/v1/memory/forget", content='{"older_than_days": NaN}',
                           headers={"Content-Type": "application/json"})
        assert answer.status_code == 422, answer.text
        assert answer.json()["detail"] == "older_than_days: nan is not a number (allowed: a number, 0 or more)"
        assert [m["key"] for m in http.get("/api/v1/memory").json()["memories"]] == ["kept"]
        # The schema still shows the bounds to a client.
        # (In the number branch: null is taken too, as "not given", and documented beside it.)
        schema = http.get("/openapi.json").json()["components"]["schemas"]["MemoryIn"]["properties"]["importance"]
        number = next(branch for branch in schema.get("anyOf", [schema]) if branch.get("type") == "number")
        assert (number["minimum"], number["maximum"]) == (0, 1), schema
