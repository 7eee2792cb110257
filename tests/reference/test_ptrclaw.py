"""PtrClaw (reference 000) behaviours at the doors its users reach: ``engram chat`` as a real
process against a local server speaking the OpenAI wire format, on a real SQLite file."""

from __future__ import annotations

from engram.testing.llm_servers import OpenAICompatServer, Reply
from tests.interfaces.test_chat_cli import run_chat, run_cli
from tests.lifecycle.conftest import remember_at

SOUL = '<soul>{"identity": "Ada, calm", "user": "Sam, a gardener", "philosophy": "Kindness"}</soul>'


def test_slash_start_hatches_on_first_interaction_only(tmp_path) -> None:
    # PtrClaw: "User triggers hatching via `/start` (first interaction) or `/hatch`."
    with OpenAICompatServer(Reply.say("Who should I be?"), Reply.say(f"Done! {SOUL}"), Reply.say("[]"),
                            Reply.say("Hello Sam")) as server:
        env = {"ENGRAM_LLM__PROVIDER": "openai", "ENGRAM_LLM__MODEL": "scripted", "ENGRAM_LLM__BASE_URL": server.base_url,
               "ENGRAM_LLM__API_KEY": "sk-local"}
        first = run_chat(tmp_path, ["/start", "Let's begin", "Be Ada, I am Sam the gardener"], env)
        assert first.returncode == 0, first.stderr
        assert "hatching: tell the agent who it should be." in first.stderr
        assert "hatched: identity stored." in first.stderr
        assert "<soul>" in server.requests[0].body["messages"][0]["content"]  # the hatch prompt
        assert "tools" not in server.requests[0].body
        again = run_chat(tmp_path, ["/start", "hi"], env)
        assert again.returncode == 0, again.stderr
        assert "already has an identity" in again.stderr and "Hello Sam" in again.stdout
        assert "## About your human\nSam, a gardener" in server.requests[-1].body["messages"][0]["content"]
    assert "Sam, a gardener" in run_cli(tmp_path, "get", "soul:user").stdout


def test_ptrclaw_config_json_memory_block_carries_over(tmp_path, monkeypatch) -> None:
    # PtrClaw: "All memory settings live under the `memory` key in `~/.ptrclaw/config.json`".
    import json

    from engram.config import load_settings

    home = tmp_path / "home"
    home.mkdir()
    (home / "config.json").write_text(json.dumps({"memory": {
        "backend": "json", "recall_limit": 7, "enrich_depth": 0, "hygiene_max_age": 86400, "recency_half_life": 3600,
        "embeddings": {"provider": "", "text_weight": 0.3, "vector_weight": 0.7}}}))
    monkeypatch.setenv("ENGRAM_HOME", str(home))
    settings = load_settings()
    assert settings.backend == "jsonfile" and settings.chat.recall_limit == 7 and settings.chat.enrich_depth == 0
    assert settings.lifecycle.hygiene.max_age_s == 86400 and settings.recall.recency_half_life_s == 3600
    assert settings.embeddings.provider == "none"
    assert (settings.recall.text_weight, settings.recall.vector_weight) == (0.3, 0.7)
    stats = run_cli(home, "--json", "stats")  # a real process reads the same file
    assert stats.returncode == 0, stats.stderr
    assert json.loads(stats.stdout)["backend"] == "jsonfile"


def _ptrclaw_home(tmp_path, document) -> object:
    import json

    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "config.json").write_text(json.dumps(document))
    return home


def test_ptrclaw_embedding_key_falls_back_to_the_openai_provider_key(tmp_path, monkeypatch) -> None:
    # PtrClaw: "`embeddings.api_key` ... API key for OpenAI embeddings. Empty falls back to
    # `providers.openai.api_key`." The key reaches the provider: the OpenAI wire format, served locally.
    from engram.config import load_settings
    from engram.embed import create_embedder
    from engram.testing.provider_servers import ProviderServer

    with ProviderServer(api_key="sk-providers-key") as server:
        home = _ptrclaw_home(tmp_path, {
            "providers": {"openai": {"api_key": "sk-providers-key"}},
            "memory": {"embeddings": {"provider": "openai", "model": "text-embedding-3-large", "api_key": "",
                                      "base_url": server.url + "/v1"}}})
        monkeypatch.setenv("ENGRAM_HOME", str(home))
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        settings = load_settings()
        assert settings.embeddings.api_key.get_secret_value() == "sk-providers-key"
        embedder = create_embedder(settings.embeddings)
        assert embedder.embed(["the deploy server is atlas"]).shape == (1, 3072)
        request = server.requests[-1]
        assert request.status == 200 and request.body["model"] == "text-embedding-3-large"
        assert request.headers["authorization"] == "Bearer sk-providers-key"

    # Its own key, when given, comes first; for another provider the OpenAI key is not taken.
    _ptrclaw_home(tmp_path, {"providers": {"openai": {"api_key": "sk-providers-key"}},
                             "memory": {"embeddings": {"provider": "openai", "api_key": "sk-memory-key"}}})
    assert load_settings().embeddings.api_key.get_secret_value() == "sk-memory-key"
    _ptrclaw_home(tmp_path, {"providers": {"openai": {"api_key": "sk-providers-key"}},
                             "memory": {"embeddings": {"provider": "ollama"}}})
    assert load_settings().embeddings.api_key is None


def test_ptrclaw_environment_variables_carry_over(tmp_path, monkeypatch) -> None:
    # PtrClaw: "Environment variable: `MEMORY_RECENCY_HALF_LIFE`" (seconds, as recency_half_life);
    # "Environment variables: `EMBEDDING_PROVIDER`, `EMBEDDING_MODEL`, `EMBEDDING_API_KEY`".
    from engram.config import load_settings

    home = _ptrclaw_home(tmp_path, {"memory": {"recency_half_life": 3600, "embeddings": {"model": "in-the-file"}}})
    monkeypatch.setenv("ENGRAM_HOME", str(home))
    monkeypatch.setenv("MEMORY_RECENCY_HALF_LIFE", "259200")
    monkeypatch.setenv("EMBEDDING_PROVIDER", "ollama")
    monkeypatch.setenv("EMBEDDING_MODEL", "nomic-embed-text")
    monkeypatch.setenv("EMBEDDING_API_KEY", "sk-from-env")
    settings = load_settings()
    assert settings.recall.recency_half_life_s == 259200  # a variable beats the file
    assert (settings.embeddings.provider, settings.embeddings.model) == ("ollama", "nomic-embed-text")
    assert settings.embeddings.api_key.get_secret_value() == "sk-from-env"
    monkeypatch.setenv("ENGRAM_EMBEDDINGS__MODEL", "all-minilm")  # ENGRAM_* beats PtrClaw's names
    monkeypatch.setenv("ENGRAM_RECALL__RECENCY_HALF_LIFE_S", "60")
    settings = load_settings()
    assert settings.embeddings.model == "all-minilm" and settings.recall.recency_half_life_s == 60


def test_ptrclaw_hygiene_max_age_also_purges_after_a_compaction(tmp_path) -> None:
    # PtrClaw's history compaction, step 5: "Run hygiene purge - delete Conversation memory entries
    # older than `hygiene_max_age`": one key for the hygiene job and for compaction.
    from engram.engine import Engram

    home = _ptrclaw_home(tmp_path, {"memory": {"hygiene_max_age": 3600, "embeddings": {"provider": ""}}})
    with Engram.from_settings(home=home) as engram:
        settings = engram.settings
        assert settings.lifecycle.hygiene.max_age_s == 3600
        assert settings.history.compaction.conversation_max_age_s == 3600
        now = engram.clock()
        remember_at(engram, now - 7200, "we talked about the weather two hours ago", category="conversation")
        engram.remember("we talked about tulips ten minutes ago", category="conversation", created_at=now - 600)
        for n in range(7):
            engram.history.append("telegram:1", "user", f"question {n}")
            engram.history.append("telegram:1", "assistant", f"answer {n}")
        assert engram.history.compact("telegram:1", force=True).purged == 1
        assert [m.content for m in engram.list(limit=10)] == ["we talked about tulips ten minutes ago"]


def test_ptrclaw_config_with_its_sqlite_path_runs_beside_ptrclaws_database_without_touching_it(tmp_path) -> None:
    # PtrClaw's sample config: {"memory": {"backend": "sqlite", "path": "~/.ptrclaw/memory.db"}}. That
    # file has PtrClaw's schema, not engram's: it used to stop every command ("is a PtrClaw
    # database"), and before PtrClaw first ran engram made its own database there.
    import json
    import sqlite3

    from tests.importers.test_import_sqlite_sources import PTRCLAW_ROWS, PTRCLAW_SCHEMA, database

    ptrclaw = tmp_path / "ptrclaw"
    ptrclaw.mkdir()
    theirs = database(ptrclaw / "memory.db", PTRCLAW_SCHEMA, PTRCLAW_ROWS)
    before = theirs.read_bytes()
    not_yet = ptrclaw / "second.db"  # a PtrClaw that has not run yet
    for path in (theirs, not_yet):
        home = tmp_path / f"home-{path.stem}"
        home.mkdir()
        (home / "config.json").write_text(json.dumps({"memory": {"backend": "sqlite", "path": str(path)}}))
        stored = run_cli(home, "remember", "The deploy window is Tuesday")
        assert stored.returncode == 0, stored.stderr
        said = " ".join(stored.stderr.split())
        assert "is PtrClaw's SQLite database and is not opened as engram's" in said and "engram import" in said
        found = run_cli(home, "--json", "recall", "deploy window")
        assert found.returncode == 0, found.stderr
        assert [h["memory"]["content"] for h in json.loads(found.stdout)["hits"]] == ["The deploy window is Tuesday"]
        assert (home / "memory.db").is_file()  # engram's own, in its home
    assert theirs.read_bytes() == before and not not_yet.exists()
    assert sorted(p.name for p in ptrclaw.iterdir()) == ["memory.db"]
    with sqlite3.connect(theirs) as conn:  # still PtrClaw's, nothing of engram's added
        assert "schema_migrations" not in {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}


def test_ptrclaw_recency_decay_halves_per_half_life_counted_from_the_last_write(tmp_path) -> None:
    # PtrClaw: "score *= exp(-ln(2) x age_seconds / half_life_seconds)" (1.0, 0.5, 0.25 at 0, 1x, 2x),
    # the age being the entry's `timestamp`, which a store (upsert) sets: a fact updated today is
    # not scored as old as its key. engram measured from creation, so an updated fact sank.
    from engram.engine import Engram

    day = 86400
    home = _ptrclaw_home(tmp_path, {"memory": {"recency_half_life": day, "embeddings": {"provider": ""}}})
    with Engram.from_settings(home=home) as engram:
        now = engram.clock()
        for key, age in (("fresh", 0), ("one-day", day), ("two-days", 2 * day)):
            engram.remember(f"The kettle note {key}", key=key, created_at=now - age)
        engram.remember("The tea note, first draft", key="tea", created_at=now - 30 * day)
        engram.remember("The tea note, as it is now", key="tea")  # updated today
        recency = {h.memory.key: h.parts.recency for h in engram.recall("kettle note").hits}
        assert recency["fresh"] > 0.99
        assert abs(recency["one-day"] - 0.5) < 0.01 and abs(recency["two-days"] - 0.25) < 0.01
        assert engram.recall("tea note").hits[0].parts.recency > 0.99


def test_ptrclaw_memory_store_over_mcp_stores_and_links_what_exists(served) -> None:
    # PtrClaw's memory_store: "`links` (optional): Array of keys to link to after storing", and
    # link "Returns `false` if either entry doesn't exist": the entry is stored whatever its links
    # name, as engram's own agent tool does. Over MCP a link to a key not stored yet refused the store.
    import asyncio

    from mcp import Client

    from tests.interfaces.test_mcp import _data, _http

    async def run() -> None:
        async with Client(_http(served, served.alice)) as client:
            _data(await client.call_tool("memory_store", {"key": "project-setup", "content": "The project uses uv"}))
            stored = _data(await client.call_tool("memory_store", {
                "key": "python-version", "content": "Project uses Python 3.12",
                "links": ["project-setup", "testing-approach"]}))
            assert stored["key"] == "python-version" and stored["action"] == "created"
            assert stored["unlinked"] == ["testing-approach"]
            found = _data(await client.call_tool("memory_recall", {"query": "Python 3.12"}))
            assert [(e["key"], e["links"]) for e in found["entries"]] == [("python-version", ["project-setup"])]
            again = _data(await client.call_tool("memory_store", {
                "key": "python-version", "content": "Project uses Python 3.13", "links": ["project-setup"]}))
            assert again["action"] == "updated" and "unlinked" not in again

    asyncio.run(run())


def test_ptrclaw_recall_limit_0_and_deep_enrich_depth_are_read_as_ptrclaw_reads_them(tmp_path) -> None:
    # PtrClaw's `recall_limit` is a uint32 ("Max entries recalled per user message for context
    # enrichment"): 0 recalls nothing, so no [Memory context] block; its `enrich_depth` follows one
    # hop for any value above 0 (`collect_neighbors()` "performs 1-hop traversal"). engram refused
    # both (every command stopped: "chat.recall_limit: ... greater than or equal to 1").
    from engram.config import load_settings

    home = _ptrclaw_home(tmp_path, {"memory": {"recall_limit": 0, "enrich_depth": 5,
                                               "embeddings": {"provider": ""}}})
    stored = run_cli(home, "remember", "The deploy window is Tuesday", "--key", "deploy-window")
    assert stored.returncode == 0, stored.stderr
    settings = load_settings(home=home)
    assert settings.chat.recall_limit == 0 and settings.chat.enrich_depth == 1
    with OpenAICompatServer(Reply.say("Tuesday, I think")) as server:
        env = {"ENGRAM_LLM__PROVIDER": "openai", "ENGRAM_LLM__MODEL": "scripted", "ENGRAM_LLM__BASE_URL": server.base_url,
               "ENGRAM_LLM__API_KEY": "sk-local", "ENGRAM_CHAT__SYNTHESIS": "false"}
        done = run_chat(home, ["When is the deploy window?"], env)
        assert done.returncode == 0, done.stderr
        assert "Tuesday, I think" in done.stdout
        assert server.requests[0].body["messages"][-1]["content"] == "When is the deploy window?"


def test_an_empty_path_is_the_default_file_not_the_working_folder(tmp_path) -> None:
    # PtrClaw: "`path` | string | `""` (auto) | ... Empty uses `~/.ptrclaw/memory.json` or `memory.db`."
    # engram read "" as the path "." (the working folder): "cannot read .: Is a directory" with the
    # json backend, and with SQLite a warning that '' is PtrClaw's database, then "cannot open SQLite
    # database .". ClawCode's `database.path: ""` and engram's own `path = ""` fared the same.
    import json

    cases = {
        "ptrclaw-json": ("config.json", json.dumps({"memory": {"backend": "json", "path": ""}}), "memory.json"),
        "ptrclaw-sqlite": ("config.json", json.dumps({"memory": {"backend": "sqlite", "path": ""}}), "memory.db"),
        "clawcode": ("config.yaml", 'memory:\n  database:\n    path: ""\n', "memory.db"),
        "engram": ("config.toml", 'path = ""\n', "memory.db"),
    }
    for name, (file, text, made) in cases.items():
        home = tmp_path / name
        home.mkdir()
        (home / file).write_text(text)
        stored = run_cli(home, "remember", "The deploy window is Tuesday")
        assert stored.returncode == 0, (name, stored.stderr)
        assert "PtrClaw's SQLite database" not in stored.stderr, (name, stored.stderr)
        found = run_cli(home, "--json", "recall", "deploy window")
        assert found.returncode == 0, (name, found.stderr)
        assert [h["memory"]["content"] for h in json.loads(found.stdout)["hits"]] == ["The deploy window is Tuesday"]
        assert (home / made).is_file(), name  # the default file, in engram's home


def test_the_guide_quotes_the_refusals_and_the_import_mapping_as_engram_gives_them(tmp_path) -> None:
    # PtrClaw files an unknown category as knowledge and answers an empty recall with nothing; engram's
    # tools refuse both and its import maps the category as PtrClaw does. docs/coming-from/ptrclaw.md
    # says each, quoting what engram says: the quotes must stay what it says.
    import json
    import re
    from pathlib import Path

    import pytest

    from engram.agent.tools import MemoryTools
    from engram.engine import Engram
    from engram.errors import ValidationError

    page = re.sub(r"\s+", " ", (Path(__file__).parents[2] / "docs/coming-from/ptrclaw.md").read_text())
    with Engram.from_settings(home=tmp_path, embeddings={"provider": "none"}) as engram:
        tools = MemoryTools(engram)
        for name, args in (("memory_store", {"key": "mood", "content": "happy", "category": "Feelings"}),
                           ("memory_recall", {"query": "happy", "category": "Feelings"}),
                           ("memory_recall", {"query": ""})):
            with pytest.raises(ValidationError) as refused:
                tools.call(name, args)
            assert f"`{refused.value}`" in page, str(refused.value)
        assert engram.count() == 0
        source = tmp_path / "memory.json"
        source.write_text(json.dumps([{"key": "mood", "content": "happy today", "category": "Feelings"}]))
        imported = engram.import_from(source)
        assert engram.get_by_key("mood").category.value == "knowledge"
        warning = imported.warnings[0]
        assert warning.split(" (the category")[0] in page.replace(" ...`", "")


def test_memory_store_and_recall_take_the_schemas_category_words_alike_at_both_doors(served) -> None:
    # The guide: PtrClaw files "Core" (its category_from_string matches "core" exactly) as
    # knowledge; engram refuses it, naming the field. The MCP tools did; engram chat's tools of the
    # same names stored "Core" as core, "" as knowledge, and filtered a recall by "Knowledge".
    import asyncio

    import pytest
    from mcp import Client

    from engram.agent.tools import MemoryTools
    from engram.errors import ValidationError
    from tests.interfaces.test_mcp import _error_text, _http

    tools = MemoryTools(served.engram.for_agent("alice"))
    calls = [("memory_store", {"key": "mood", "content": "happy", "category": word}) for word in ("Core", "", "KNOWLEDGE")]
    calls += [("memory_recall", {"query": "happy", "category": word}) for word in ("Knowledge", "")]
    said = []
    for name, args in calls:
        with pytest.raises(ValidationError) as refused:
            tools.call(name, args)
        said.append(str(refused.value))
    assert said[0] == 'category: unknown category "Core" (allowed: core, knowledge, conversation)'
    assert tools.call("memory_store", {"key": "mood", "content": "happy", "category": None}) == "Stored: mood"
    assert served.engram.for_agent("alice").get_by_key("mood").category.value == "knowledge"

    async def run() -> list[str]:
        async with Client(_http(served, served.alice)) as client:
            return [_error_text(await client.call_tool(name, args)) for name, args in calls]

    over_mcp = asyncio.run(run())
    assert [text.split("category: ", 1)[1] for text in over_mcp] == [text.split("category: ", 1)[1] for text in said]


def test_ptrclaws_whole_config_with_its_agent_block_is_read_and_gives_the_history_limits(tmp_path) -> None:
    # PtrClaw's config.json holds an `agent` block beside `memory` ({"max_tool_iterations",
    # "max_history_messages", "token_limit", ...}); its compaction runs past "max_history_messages
    # (default: 50)" or "75% of token_limit (default: 128,000)". engram read the block as its own
    # `agent` name and stopped every command: "invalid settings (agent: Input should be a valid string ...)".
    import json

    from engram.config import load_settings

    home = _ptrclaw_home(tmp_path, {
        "provider": "anthropic", "model": "claude-sonnet-4-6", "temperature": 0.7, "base_url": "",
        "agent": {"max_tool_iterations": 10, "max_history_messages": 40, "token_limit": 64000,
                  "disable_streaming": False},
        "memory": {"backend": "json", "path": "", "synthesis": True, "synthesis_interval": 5,
                   "embeddings": {"provider": ""}},
        "channels": {"telegram": {"bot_token": "123456:ABC-DEF...", "allow_from": ["alice", "bob"]}}})
    settings = load_settings(home=home)
    assert settings.agent == "default"
    assert (settings.history.compaction.max_history_messages, settings.history.compaction.token_limit) == (40, 64000)
    stored = run_cli(home, "remember", "The deploy window is Tuesday", "--key", "deploy-window")
    assert stored.returncode == 0, stored.stderr
    shown = run_cli(home, "--json", "get", "deploy-window")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["scope"] == "agent:default"


def test_ptrclaw_synthesis_interval_and_cache_max_entries_of_0_turn_the_feature_off(tmp_path) -> None:
    # PtrClaw's uint32s: `maybe_synthesize` returns at once for a `synthesis_interval` of 0, and a
    # response cache of 0 `cache_max_entries` evicts every answer as it is put. engram refused both
    # (every command stopped: "chat.synthesis_interval: Input should be greater than or equal to 1").
    from engram.config import load_settings

    home = _ptrclaw_home(tmp_path, {"memory": {"synthesis": True, "synthesis_interval": 0, "response_cache": True,
                                               "cache_max_entries": 0, "embeddings": {"provider": ""}}})
    stored = run_cli(home, "remember", "The deploy window is Tuesday")
    assert stored.returncode == 0, stored.stderr
    settings = load_settings(home=home)
    assert settings.chat.synthesis is False and settings.chat.response_cache is False
    assert (settings.chat.synthesis_interval, settings.chat.cache_max_entries) == (5, 100)  # the defaults, unused
    (tmp_path / "kept").mkdir()
    kept = _ptrclaw_home(tmp_path / "kept", {"memory": {"synthesis_interval": 3, "cache_max_entries": 7}})
    settings = load_settings(home=kept)
    assert (settings.chat.synthesis, settings.chat.synthesis_interval, settings.chat.cache_max_entries) == (True, 3, 7)


def test_an_unknown_backend_is_refused_as_the_guide_says_not_turned_into_none(tmp_path) -> None:
    # PtrClaw's create_memory "falls back to `none` if unavailable": memory silently off. engram
    # refuses the name, and docs/coming-from/ptrclaw.md quotes what it says.
    import re
    from pathlib import Path

    home = _ptrclaw_home(tmp_path, {"memory": {"backend": "bogus"}})
    refused = run_cli(home, "count")
    assert refused.returncode == 4
    quoted = re.search(r'unknown memory backend "bogus" \(allowed: [a-z, ]+\)', refused.stderr)
    assert quoted, refused.stderr
    page = re.sub(r"\s+", " ", (Path(__file__).parents[2] / "docs/coming-from/ptrclaw.md").read_text())
    assert f"`{quoted[0]}`" in page
    (tmp_path / "off").mkdir()
    off = _ptrclaw_home(tmp_path / "off", {"memory": {"backend": "none"}})
    assert run_cli(off, "count").stdout.strip() == "0"  # PtrClaw's own "none" is engram's disabled


def test_memory_json_read_as_it_is_belongs_to_the_agent_and_store_upserts_its_keys(tmp_path) -> None:
    # PtrClaw: `store(key, content, ...)` "Upsert by key". engram read the entries of PtrClaw's
    # memory.json (backend "json") as global memories, so storing under one of their keys made the
    # agent an entry of its own beside PtrClaw's: two "python-version" entries, the stale one still
    # recalled (and back alone once the new one was forgotten), and PtrClaw's memories (its soul
    # too) read by every other agent. They are the agent's, as `engram import` of the file makes them.
    import json

    home = tmp_path / "home"
    home.mkdir()
    source = tmp_path / "memory.json"
    source.write_text(json.dumps([
        {"id": "e1", "key": "python-version", "content": "Project uses Python 3.12", "category": "knowledge",
         "timestamp": 1770631800, "session_id": "", "links": []}]))
    (home / "config.json").write_text(json.dumps(
        {"memory": {"backend": "json", "path": str(source), "embeddings": {"provider": ""}}}))

    stored = run_cli(home, "--json", "remember", "--key", "python-version", "Project uses Python 3.13")
    assert stored.returncode == 0, stored.stderr
    listed = run_cli(home, "--json", "list")
    assert listed.returncode == 0, listed.stderr
    assert [(m["key"], m["content"], m["scope"]) for m in json.loads(listed.stdout)] == [
        ("python-version", "Project uses Python 3.13", "agent:default")]
    versions = run_cli(home, "--json", "versions", "python-version")
    assert [v["content"] for v in json.loads(versions.stdout)["versions"]] == ["Project uses Python 3.12"], versions
    other = run_cli(home, "--agent", "bob", "--json", "list")
    assert other.returncode == 0 and json.loads(other.stdout) == [], other.stdout


def test_ptrclaw_hygiene_max_age_0_purges_every_conversation_entry_as_its_reference_reads(tmp_path, caplog) -> None:
    # PtrClaw: "Purge Conversation entries older than this (seconds)"; unlike its neighbours
    # (recency_half_life, knowledge_max_idle_days: "`0` = disabled") 0 is no switch, so every
    # conversation entry goes. Read as engram's own 0 ("never"), they were kept for ever.
    import logging
    import random

    from engram.engine import Engram
    from engram.lifecycle import hygiene

    home = _ptrclaw_home(tmp_path, {"memory": {"hygiene_max_age": 0, "embeddings": {"provider": ""}}})
    with caplog.at_level(logging.WARNING), Engram.from_settings(home=home) as engram:
        settings = engram.settings
        assert settings.lifecycle.hygiene.max_age_s == settings.history.compaction.conversation_max_age_s == 1.0
        assert "hygiene_max_age: 0 purges every conversation entry" in caplog.text
        now = engram.clock()
        remember_at(engram, now - 60, "we talked about the weather a minute ago", category="conversation")
        remember_at(engram, now - 60, "the user's cat is called Miso")  # knowledge: not hygiene's age rule
        hygiene.run(engram, settings.lifecycle.hygiene, now=now, rng=random.Random(0))
        assert [m.content for m in engram.list(limit=10)] == ["the user's cat is called Miso"]
    (tmp_path / "own").mkdir()
    again = _ptrclaw_home(tmp_path / "own", {"memory": {"hygiene_max_age": 0}, "lifecycle": {"hygiene": {"max_age_s": 0}}})
    with Engram.from_settings(home=again) as engram:  # engram's own key wins: its 0 keeps them
        assert engram.settings.lifecycle.hygiene.max_age_s == 0
