"""ClawCode (reference 002) behaviours, checked at the doors a ClawCode user reaches: the ``engram``
command on a real SQLite file, HTTP over a socket, MCP with the SDK client."""

from __future__ import annotations

import json
from pathlib import Path

from tests.unit.test_cli import engram


def test_cli_forget_keeps_the_reason_in_the_audit_trail(isolated_home: Path) -> None:
    # ClawCode: forget takes {"memory_id": ..., "reason": "Outdated preference"}, and
    # "5. Log deletion for audit trail".
    assert engram(isolated_home, "remember", "User prefers Perl", "--key", "lang").returncode == 0
    gone = engram(isolated_home, "--json", "forget", "lang", "--reason", "Outdated preference")
    assert gone.returncode == 0, gone.stderr
    assert [m["key"] for m in json.loads(gone.stdout)["removed"]] == ["lang"]
    trail = json.loads(engram(isolated_home, "--json", "audit", "--action", "forgotten").stdout)
    assert [(e["memory_key"], e["reason"]) for e in trail] == [("lang", "Outdated preference")]


def _stdio_session(home: Path, extra_env: dict[str, str] | None = None) -> None:
    import asyncio

    from mcp import Client

    from tests.interfaces.test_mcp import _data, _stdio

    params = _stdio(home, "default")
    params.env.update(extra_env or {})

    async def run() -> None:
        async with Client(params) as client:
            _data(await client.call_tool("remember", {"content": "The user prefers Python", "key": "lang"}))
            found = _data(await client.call_tool("recall", {"query": "which language does the user prefer"}))
            assert found["results"]
            _data(await client.call_tool("recall", {"query": "quantum chromodynamics"}))

    asyncio.run(run())


def test_mcp_writes_and_recalls_are_in_the_audit_trail_with_origin_mcp(tmp_path: Path) -> None:
    # ClawCode: "Audit Log: Track all memory access and modifications"; "Search Queries: Log
    # queries and results".
    _stdio_session(tmp_path)
    trail = json.loads(engram(tmp_path, "--json", "audit").stdout)
    assert {(e["action"], e["origin"]) for e in trail} == {("stored", "mcp"), ("recalled", "mcp")}
    reads = [e["detail"] for e in trail if e["action"] == "recalled"]
    assert [r["query"] for r in reads] == ["quantum chromodynamics", "which language does the user prefer"]
    assert reads[0]["results"] == [] and reads[1]["results"][0]["key"] == "lang"
    assert reads[1]["results"][0]["score"] > 0
    # The CLI's own recalls are recorded as the CLI's.
    assert engram(tmp_path, "recall", "python").returncode == 0
    newest = json.loads(engram(tmp_path, "--json", "audit", "--action", "recalled", "-n", "1").stdout)[0]
    assert newest["origin"] == "cli" and newest["detail"]["query"] == "python"


def test_the_read_trail_can_be_switched_off(tmp_path: Path) -> None:
    _stdio_session(tmp_path, {"ENGRAM_LIFECYCLE__AUDIT_READS": "false"})
    trail = json.loads(engram(tmp_path, "--json", "audit").stdout)
    assert [e["action"] for e in trail] == ["stored"]


CLAWCODE_YAML = """
memory:
  embedding_provider: local
  database:
    path: {db}
    backup_enabled: true
  search:
    vector_weight: 0.7
    fts_weight: 0.3
    min_relevance: 0.6
    max_results: 20
  file_sync:
    enabled: true
    directory: {folder}
    format: yaml
  retention:
    session_memories: 30d
    agent_memories: 90d
    global_memories: unlimited
"""


def test_clawcode_yaml_configuration_carries_over(tmp_path: Path, monkeypatch, caplog) -> None:
    # ClawCode's "Example Configuration" (memory: search/database/file_sync/retention) read as it is.
    import logging

    from engram import foreign_settings
    from engram.config import load_settings

    monkeypatch.setattr(foreign_settings, "_warned", set())
    caplog.set_level(logging.WARNING, logger="engram.config")

    config = tmp_path / "clawcode.yaml"
    config.write_text(CLAWCODE_YAML.format(db=tmp_path / "memory.db", folder=tmp_path / "memory"))
    monkeypatch.setenv("ENGRAM_CONFIG", str(config))
    settings = load_settings()
    assert settings.path == tmp_path / "memory.db" and settings.embeddings.provider == "local"
    assert (settings.recall.vector_weight, settings.recall.text_weight) == (0.7, 0.3)
    assert settings.recall.limit == 20
    # Its min_relevance is a floor on ClawCode's scores: on engram's scale it hid every result (an
    # obvious match scores about 0.3), so it is not applied, and the log says why.
    assert settings.recall.min_relevance == 0.0
    assert [r.getMessage().split(":")[0] for r in caplog.records] == ["memory.search.min_relevance"]
    assert "not applied" in caplog.records[0].getMessage()
    assert settings.files.dir == tmp_path / "memory" and settings.files.format == "yaml"
    retention = settings.lifecycle.retention
    assert (retention.session_days, retention.agent_days, retention.global_days) == (30, 90, None)


def test_turns_are_indexed_as_they_end_above_the_importance_threshold(tmp_path: Path) -> None:
    # ClawCode: "Trigger: End of each turn in conversation", "Skip trivial exchanges (greetings,
    # acknowledgments)", "Configurable importance threshold", "Index transcripts asynchronously".
    from engram.engine import Engram

    mem = Engram.from_settings(home=tmp_path, path=tmp_path / "memory.db", embeddings={"provider": "none"},
                               history={"transcript_auto_index": True, "transcript_importance_threshold": 0.5})
    key = "cli:sess_123"
    mem.history.append(key, "user", "hello there")
    mem.history.append(key, "assistant", "Hi! How can I help?")
    mem.history.append(key, "user", "Which database should the billing service use for invoices and refunds?")
    mem.history.append(key, "assistant", "Use PostgreSQL with logical replication; keep invoices immutable and "
                                         "record refunds as separate ledger rows.")
    mem.history.append(key, "user", "And the cache layer for sessions?")
    mem.history.append(key, "assistant", "Redis.")
    mem.close()  # finishes the background queue

    reopened = Engram.from_settings(home=tmp_path, path=tmp_path / "memory.db", embeddings={"provider": "none"})
    try:
        indexed = {m.key: m for m in reopened.list() if m.key.startswith("transcript:")}
        assert list(indexed) == ["transcript:cli:sess_123:2"]  # the greeting and the thin turn are skipped
        assert indexed["transcript:cli:sess_123:2"].importance >= 0.5
    finally:
        reopened.close()
    from engram.files.transcripts import transcript_path

    transcript = transcript_path(tmp_path / "transcripts", key, agent="default").read_text()
    assert "## Turn 2" in transcript and "[Indexed: Which database should the billing service" in transcript
    # The header names the session as the user wrote it, not as the history stores it ("cli:sess_123:").
    assert transcript.startswith("# Session Transcript: cli:sess_123\n"), transcript.splitlines()[0]


def test_clawcode_session_folders_are_read_and_written(isolated_home: Path, monkeypatch) -> None:
    # ClawCode's "Directory Structure": "sessions/  # Session-specific memories / [session_id]/ notes.md".
    monkeypatch.setenv("ENGRAM_FILES__SESSION_FOLDERS", "session")
    monkeypatch.setenv("ENGRAM_EMBEDDINGS__PROVIDER", "none")
    notes = isolated_home / "memory" / "sessions" / "sess_123" / "notes.md"
    notes.parent.mkdir(parents=True)
    notes.write_text("# Notes\n\n- The user is refactoring the billing service (2026-02-09)\n")
    synced = engram(isolated_home, "--json", "sync")
    assert synced.returncode == 0 and json.loads(synced.stdout)["problems"] == [], synced.stdout
    inside = engram(isolated_home, "--json", "--session", "sess_123", "recall", "billing service")
    hits = json.loads(inside.stdout)["hits"]
    assert [(h["memory"]["content"], h["memory"]["scope"]) for h in hits] == [
        ("The user is refactoring the billing service", "session:default/sess_123")]
    outside = engram(isolated_home, "--json", "--session", "sess_999", "recall", "billing service")
    assert json.loads(outside.stdout)["hits"] == []  # a session's memories stay in that session

    assert engram(isolated_home, "--session", "sess_456", "remember", "Deploys go out on Tuesdays",
                  "--tags", "notes", "--scope", "session").returncode == 0
    written = isolated_home / "memory" / "sessions" / "sess_456" / "notes.md"
    assert "Deploys go out on Tuesdays" in written.read_text()
    assert not (isolated_home / "memory" / "sessions" / "default").exists()


def test_nested_session_folders_point_to_the_clawcode_setting(isolated_home: Path, monkeypatch) -> None:
    monkeypatch.setenv("ENGRAM_EMBEDDINGS__PROVIDER", "none")
    notes = isolated_home / "memory" / "sessions" / "sess_123" / "notes.md"
    notes.parent.mkdir(parents=True)
    notes.write_text("# Notes\n\n- A note in a ClawCode session folder\n")
    problems = json.loads(engram(isolated_home, "--json", "sync").stdout)["problems"]
    assert len(problems) == 1 and 'files.session_folders = \\"session\\"' in json.dumps(problems[0])


def test_views_share_one_history_per_agent_and_its_queued_turns_are_indexed_at_close(tmp_path: Path) -> None:
    # The HTTP server makes an engine view per request: each agent's history (and its background
    # turn indexer) must be opened once and finished when the engine closes, not left running.
    import threading

    from engram.engine import Engram

    mem = Engram.from_settings(home=tmp_path, path=tmp_path / "memory.db", embeddings={"provider": "none"},
                               history={"transcript_auto_index": True, "transcript_importance_threshold": 0.3})
    before = sum(t.name == "engram-transcripts" for t in threading.enumerate())
    views = [mem.for_agent("alice", origin="http") for _ in range(5)]
    assert len({id(v.history) for v in views}) == 1
    key = "web:sess_9"
    views[0].history.append(key, "user", "Which queue should the invoice exporter use for retries?")
    views[1].history.append(key, "assistant", "Use the durable retry queue with exponential backoff and a dead letter.")
    running = sum(t.name == "engram-transcripts" for t in threading.enumerate())
    assert running == before + 2  # the engine's own agent and alice: one indexer each
    for _ in range(5):
        mem.for_agent("alice", origin="http").history.recent(key, 2)
    assert sum(t.name == "engram-transcripts" for t in threading.enumerate()) == running
    mem.close()  # finishes alice's queued turn
    assert sum(t.name == "engram-transcripts" for t in threading.enumerate()) == before

    reopened = Engram.from_settings(home=tmp_path, path=tmp_path / "memory.db", embeddings={"provider": "none"})
    try:
        alice = reopened.for_agent("alice")
        assert [m.key for m in alice.list() if m.key.startswith("transcript:")] == ["transcript:web:sess_9:1"]
        assert [m.key for m in reopened.list() if m.key.startswith("transcript:")] == []  # not the default agent's
    finally:
        reopened.close()
    from engram.files.transcripts import transcript_path

    assert "invoice exporter" in transcript_path(tmp_path / "transcripts", key, agent="alice").read_text()
    assert not transcript_path(tmp_path / "transcripts", key, agent="default").exists()


def _clawcode_folder(root: Path) -> Path:
    """A ClawCode memory folder: global/, agents/<agent>/ and sessions/<session_id>/ files."""
    for rel, text in {
        "global/facts.md": "# Facts\n\n- The office is in Helsinki (2026-02-01)\n",
        "agents/default/preferences.md": "# Preferences\n\n- User prefers Python for scripting tasks (2026-02-09)\n",
        "sessions/sess_123/notes.md": "# Notes\n\n- The user is refactoring the billing service (2026-02-09)\n",
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def test_import_of_a_clawcode_folder_reads_its_session_folders(isolated_home: Path, tmp_path: Path,
                                                               monkeypatch) -> None:
    # ClawCode's sessions/[session_id]/ under files.session_folders = "session": imported into that
    # session of the importing agent, as sync reads it (the import used to drop them unsaid).
    monkeypatch.setenv("ENGRAM_FILES__SESSION_FOLDERS", "session")
    monkeypatch.setenv("ENGRAM_EMBEDDINGS__PROVIDER", "none")
    source = _clawcode_folder(tmp_path / "clawcode")
    done = engram(isolated_home, "--json", "import", str(source))
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert (summary["files"], summary["created"], summary["problems"]) == (3, 3, []), summary
    inside = json.loads(engram(isolated_home, "--json", "--session", "sess_123", "list", "--scope", "session").stdout)
    assert [(m["content"], m["scope"]) for m in inside] == [
        ("The user is refactoring the billing service", "session:default/sess_123")]
    assert not (source / ".engram-sessions.json").exists()  # the source folder is only read


def test_import_reports_the_session_folders_it_does_not_read(isolated_home: Path, tmp_path: Path,
                                                             monkeypatch) -> None:
    # Without the setting, sessions/<session_id>/notes.md is not a scope folder: named, with the fix.
    monkeypatch.setenv("ENGRAM_EMBEDDINGS__PROVIDER", "none")
    source = _clawcode_folder(tmp_path / "clawcode")
    done = engram(isolated_home, "--json", "import", str(source))
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert (summary["files"], summary["created"]) == (2, 2), summary
    [problem] = summary["problems"]
    assert problem.startswith("sessions/sess_123/notes.md: not read:") and 'files.session_folders = "session"' in problem

    from engram.engine import Engram

    with Engram.from_settings(home=tmp_path / "lib", embeddings={"provider": "none"}) as mem:
        result = mem.import_from(source)  # the library door reports it too
    assert result.kind == "folder" and any("sessions/sess_123/notes.md" in w for w in result.warnings)


STANDUP = ("# Standup\n\n"
           "- Ship the importer this week (2026-02-09)\n  - metadata: from standup\n  - tags: planning, team\n"
           "- The demo is on Friday (2026-02-10)\n  - project: engram\n")


def _by_content(home: Path) -> dict[str, dict]:
    listed = json.loads(engram(home, "--json", "list", "--scope", "global").stdout)
    return {m["content"]: m for m in listed}


def test_hand_written_clawcode_fields_sync_and_import(isolated_home: Path, tmp_path: Path, monkeypatch) -> None:
    # ClawCode's "File Format Specification": "  - metadata: value" and "  - tags: tag1, tag2".
    monkeypatch.setenv("ENGRAM_EMBEDDINGS__PROVIDER", "none")
    standup = isolated_home / "memory" / "global" / "standup.md"
    standup.parent.mkdir(parents=True)
    standup.write_text(STANDUP, encoding="utf-8")
    synced = engram(isolated_home, "--json", "sync")
    assert synced.returncode == 0 and json.loads(synced.stdout)["problems"] == [], synced.stdout
    stored = _by_content(isolated_home)
    assert stored["Ship the importer this week"]["metadata"] == {"metadata": "from standup"}
    assert stored["Ship the importer this week"]["tags"] == ["planning", "team"]
    assert stored["The demo is on Friday"]["metadata"] == {"project": "engram"}
    # The file's name is no tag (docs/coming-from/clawcode.md): a bullet without a tags line has none.
    assert stored["The demo is on Friday"]["tags"] == []
    # The file engram rewrote (ids given) holds the same memories at the next sync.
    assert json.loads(engram(isolated_home, "--json", "sync").stdout)["problems"] == []
    assert _by_content(isolated_home) == stored

    source = tmp_path / "clawcode" / "global" / "standup.md"
    source.parent.mkdir(parents=True)
    source.write_text(STANDUP, encoding="utf-8")
    other = tmp_path / "other-home"
    done = engram(other, "--json", "import", str(source.parent.parent))
    assert done.returncode == 0 and json.loads(done.stdout)["problems"] == [], done.stdout
    imported = _by_content(other)
    assert imported["The demo is on Friday"]["metadata"] == {"project": "engram"}
    assert imported["Ship the importer this week"]["metadata"] == {"metadata": "from standup"}


def _clawcode_config(tmp_path: Path, text: str, monkeypatch) -> Path:
    config = tmp_path / "clawcode.yaml"
    config.write_text(text)
    monkeypatch.setenv("ENGRAM_CONFIG", str(config))
    return config


def test_clawcode_embedding_sub_block_of_the_chosen_provider_with_its_variable(tmp_path: Path, monkeypatch) -> None:
    # ClawCode: "embedding_provider: openai / openai: model: text-embedding-3-small / api_key:
    # ${OPENAI_API_KEY}"; the other providers' sub-blocks may sit beside it. The model and key reach
    # the provider: the OpenAI wire format, served locally.
    from engram.config import load_settings
    from engram.embed import create_embedder
    from engram.testing.provider_servers import ProviderServer

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("UNSET_GEMINI_KEY", raising=False)
    monkeypatch.setenv("CLAWCODE_OPENAI_KEY", "sk-clawcode")
    with ProviderServer(api_key="sk-clawcode") as server:
        _clawcode_config(tmp_path, f"""
embeddings:
  base_url: {server.url}/v1   # engram's own key, beside ClawCode's block
memory:
  embedding_provider: openai
  openai:
    model: text-embedding-3-large
    api_key: ${{CLAWCODE_OPENAI_KEY}}
  gemini:
    model: text-embedding-004
    api_key: ${{UNSET_GEMINI_KEY}}   # not the chosen provider: neither read nor an error
""", monkeypatch)
        settings = load_settings()
        assert (settings.embeddings.provider, settings.embeddings.model) == ("openai", "text-embedding-3-large")
        assert settings.embeddings.api_key.get_secret_value() == "sk-clawcode"
        assert create_embedder(settings.embeddings).embed(["the deploy server is atlas"]).shape == (1, 3072)
        request = server.requests[-1]
        assert request.status == 200 and request.body["model"] == "text-embedding-3-large"
        assert request.headers["authorization"] == "Bearer sk-clawcode"

    _clawcode_config(tmp_path, """
memory:
  embedding_provider: gemini
  openai: {model: text-embedding-3-large}
  gemini:
    model: text-embedding-004
    api_key: gm-literal-$key
""", monkeypatch)
    embeddings = load_settings().embeddings
    assert (embeddings.provider, embeddings.model) == ("gemini", "text-embedding-004")
    assert embeddings.api_key.get_secret_value() == "gm-literal-$key"  # a bare $ is kept as written


def test_an_unset_variable_in_a_clawcode_file_is_an_error_naming_the_key(tmp_path: Path, monkeypatch) -> None:
    import pytest

    from engram.config import load_settings
    from engram.errors import ConfigError

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = _clawcode_config(tmp_path, """
memory:
  embedding_provider: openai
  openai:
    api_key: ${OPENAI_API_KEY}
""", monkeypatch)
    with pytest.raises(ConfigError, match=r"memory\.openai\.api_key: \$\{OPENAI_API_KEY\} names an environment "
                       "variable that is not set"):
        load_settings()
    shown = engram(tmp_path / "home", "--config", str(config), "stats")  # the same at the command line
    assert shown.returncode == 4 and "memory.openai.api_key" in shown.stderr and "OPENAI_API_KEY" in shown.stderr


def test_clawcode_local_model_path_and_device_are_reported_when_engram_cannot_follow_them(
        tmp_path: Path, monkeypatch, caplog) -> None:
    # ClawCode: "local: model_path: ./models/all-MiniLM-L6-v2 / device: cpu  # or 'cuda' for GPU".
    # engram's local provider runs the all-MiniLM-L6-v2 it is installed with, on the CPU.
    import logging

    from engram import foreign_settings
    from engram.config import load_settings

    monkeypatch.setattr(foreign_settings, "_warned", set())
    caplog.set_level(logging.WARNING, logger="engram.config")
    _clawcode_config(tmp_path, """
memory:
  embedding_provider: local
  local:
    model_path: ./models/all-MiniLM-L6-v2
    device: cpu
""", monkeypatch)
    assert load_settings().embeddings.provider == "local" and caplog.records == []  # the model engram ships

    _clawcode_config(tmp_path, """
memory:
  embedding_provider: local
  local:
    model_path: ./models/bge-small-en
    device: cuda
""", monkeypatch)
    settings = load_settings()
    load_settings()  # read twice, reported once
    assert settings.embeddings.provider == "local" and settings.embeddings.model is None
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2
    assert messages[0].startswith("memory.local.model_path: './models/bge-small-en' is not loaded")
    assert messages[1].startswith("memory.local.device: 'cuda' is not used")


def test_clawcode_intervals_and_the_transcript_switch(tmp_path: Path, monkeypatch) -> None:
    # ClawCode's "Example Configuration": database.backup_interval: 24h, file_sync.watch_interval: 5s,
    # transcript: enabled / auto_index.
    import pytest

    from engram.config import load_settings
    from engram.errors import ConfigError

    text = """
memory:
  database: {{backup_interval: {backup}}}
  file_sync: {{watch_interval: {watch}}}
  transcript: {{enabled: {enabled}, auto_index: true}}
"""
    _clawcode_config(tmp_path, text.format(backup="24h", watch="5s", enabled="true"), monkeypatch)
    settings = load_settings()
    assert settings.lifecycle.schedule.backup_s == 86400 and settings.files.poll_interval_s == 5
    assert settings.history.transcript_auto_index is True
    _clawcode_config(tmp_path, text.format(backup="1h30m", watch="2.5", enabled="false"), monkeypatch)
    settings = load_settings()
    assert settings.lifecycle.schedule.backup_s == 5400 and settings.files.poll_interval_s == 2.5
    assert settings.history.transcript_auto_index is False  # transcripts off: nothing indexed either
    _clawcode_config(tmp_path, text.format(backup="daily", watch="5s", enabled="true"), monkeypatch)
    with pytest.raises(ConfigError, match=r"memory\.database\.backup_interval: 'daily' is not a duration "
                       r"\(allowed: .*24h"):
        load_settings()
    _clawcode_config(tmp_path, text.format(backup="24h", watch="5s", enabled="true").replace(
        "memory:", "memory:\n  retention: {session_memories: 30 days}"), monkeypatch)
    with pytest.raises(ConfigError, match=r"memory\.retention\.session_memories: '30 days' is not a duration"):
        load_settings()


def _mcp_launch(tmp_path: Path, args: list[str], env: dict[str, str]) -> set[str]:
    """ClawCode's MCP launch entry with engram as the command: remember one memory over stdio."""
    import asyncio
    import os
    import sys

    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    from tests.interfaces.test_mcp import _data

    clean = {k: v for k, v in os.environ.items() if not k.startswith(("ENGRAM_", "MEMORY_"))}
    params = StdioServerParameters(
        command=sys.executable, args=["-c", "from engram.interfaces.cli.app import main; main()", *args],
        env={**clean, "HOME": str(tmp_path), "ENGRAM_HOME": str(tmp_path / "engram-home"),
             "ENGRAM_EMBEDDINGS__PROVIDER": "none", **env})

    async def run() -> set[str]:
        async with Client(params) as client:
            _data(await client.call_tool("remember", {"content": "The user prefers Python", "key": "lang"}))
            found = _data(await client.call_tool("recall", {"query": "python"}))
            return {r["content"] for r in found["results"]}

    return asyncio.run(run())


def test_clawcode_mcp_launch_entry_with_config_and_memory_db_path(tmp_path: Path) -> None:
    # ClawCode: "args": ["--config", "~/.clawcode/config.yaml"], "env": {"MEMORY_DB_PATH": "~/.clawcode/memory/db"}.
    clawcode = tmp_path / ".clawcode"
    clawcode.mkdir()
    (clawcode / "config.yaml").write_text(f"memory:\n  database:\n    path: {tmp_path / 'from-config.db'}\n")
    assert _mcp_launch(tmp_path, ["mcp", "--config", "~/.clawcode/config.yaml"], {}) == {"The user prefers Python"}
    assert (tmp_path / "from-config.db").is_file()  # the file named by --config was read (~ expanded)

    # The global option before the command, and MEMORY_DB_PATH (a variable beats the file).
    found = _mcp_launch(tmp_path, ["--config", "~/.clawcode/config.yaml", "mcp"],
                        {"MEMORY_DB_PATH": "~/.clawcode/memory/db"})
    assert found == {"The user prefers Python"} and (clawcode / "memory" / "db").is_file()
    listed = engram(tmp_path / "engram-home", "--json", "list")
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == []  # nothing went to engram's default file

    missing = engram(tmp_path / "engram-home", "--config", str(tmp_path / "nowhere.yaml"), "stats")
    assert missing.returncode == 4 and "nowhere.yaml does not exist" in missing.stderr


def test_recall_filtered_by_session_finds_its_memory_behind_better_agent_matches(tmp_path: Path) -> None:
    # ClawCode: recall {"query": ..., "limit": 5, "filters": {"session_id": "sess_123"}} - "Filtering:
    # Apply tag and context filters". The session's memory was cut by the limit among the agent's
    # better matches before the filter ran, so the call said nothing relevant was stored.
    import asyncio

    from mcp import Client

    from tests.interfaces.test_mcp import _data, _stdio

    params = _stdio(tmp_path, "default")
    params.env["ENGRAM_EMBEDDINGS__PROVIDER"] = "none"

    async def run() -> tuple[list[str], list[str]]:
        async with Client(params) as client:
            for i in range(6):
                _data(await client.call_tool("remember", {"content": f"Python tip {i}: python scripting in python"}))
            _data(await client.call_tool("remember", {"content": "The deadline moved; the script stays in Python",
                                                      "context": {"session_id": "sess_123"}}))
            one = _data(await client.call_tool("recall", {"query": "python", "limit": 5,
                                                          "filters": {"session_id": "sess_123"}}))
            # The other way round: a session filter never lets the agent's memories in.
            top = _data(await client.call_tool("recall", {"query": "python scripting tip", "limit": 1,
                                                          "filters": {"session_id": "sess_123"}}))
            return [r["content"] for r in one["results"]], [r["context"]["session_id"] for r in top["results"]]

    found, sessions = asyncio.run(run())
    assert found == ["The deadline moved; the script stays in Python"]
    assert sessions == ["sess_123"]


def test_recall_under_clawcodes_example_configuration_finds_the_obvious_match(tmp_path: Path, monkeypatch) -> None:
    # With its min_relevance (0.6) applied on engram's scale, ClawCode's own example recall
    # ("What programming languages does the user prefer?" for "User prefers Python for scripting
    # tasks") came back empty.
    from engram.engine import Engram

    config = tmp_path / "clawcode.yaml"
    config.write_text(CLAWCODE_YAML.format(db=tmp_path / "memory.db", folder=tmp_path / "memory"))
    monkeypatch.setenv("ENGRAM_CONFIG", str(config))
    with Engram.from_settings(home=tmp_path / "home") as mem:
        mem.remember("User prefers Python for scripting tasks", tags="preferences,programming")
        mem.remember("The deploy target is a Raspberry Pi")
        hits = mem.recall("What programming languages does the user prefer?").hits
        assert hits and hits[0].memory.content == "User prefers Python for scripting tasks"
